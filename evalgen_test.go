package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

var evalUpdate = flag.Bool("eval.update", false, "rewrite the golden files under testdata/eval")

// evalGenFake is a fake question generator: it answers with a question
// derived from the passage in the prompt (so replies are deterministic and
// differ per chunk), or with reply when set.
type evalGenFake struct {
	calls   atomic.Int64
	prompts []string
	reply   func(prompt string) (string, error)
}

func (f *evalGenFake) generate(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	f.calls.Add(1)
	prompt := req.Messages[len(req.Messages)-1].Text()
	f.prompts = append(f.prompts, prompt)
	if f.reply != nil {
		text, err := f.reply(prompt)
		if err != nil {
			return nil, err
		}
		return &ai.ModelResponse{Message: ai.NewModelTextMessage(text)}, nil
	}
	passage := prompt[strings.Index(prompt, ContextOpenTag):]
	passage = passage[:strings.Index(passage, ContextCloseTag)]
	words := strings.Fields(strings.TrimPrefix(passage, ContextOpenTag))
	if len(words) > 4 {
		words = words[:4]
	}
	h := fnv.New32a()
	h.Write([]byte(passage))
	reply := fmt.Sprintf("Sure!\n```json\n{\"question\": \"What about %s?\", \"answer\": \"It is %08x.\"}\n```", strings.Join(words, " "), h.Sum32())
	return &ai.ModelResponse{Message: ai.NewModelTextMessage(reply)}, nil
}

// evalGenSetup returns a Genkit with the fake as "test/qa" and a directory
// with two readable .docx files (one in a subdirectory), an unreadable .docx,
// an unreadable .pdf, a text file, a .pptx deck and a legacy .doc the walk
// passes over.
func evalGenSetup(t *testing.T, f *evalGenFake) (*genkit.Genkit, []ai.GenerateOption, string) {
	t.Helper()
	g := genkit.Init(context.Background())
	m := genkit.DefineModel(g, "test/qa", nil, f.generate)
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("testdata/docx/birds.docx", filepath.Join(dir, "birds.docx"))
	copyFile("testdata/docx/recipes.docx", filepath.Join(dir, "sub", "recipes.docx"))
	copyFile("testdata/eval/broken.docx", filepath.Join(dir, "broken.docx"))
	copyFile("testdata/eval/broken.pdf", filepath.Join(dir, "a-broken.pdf"))
	// The formats of issue 15 are read too: a text file and a deck. A legacy
	// .doc is not a document the walk reads, so it is neither read nor
	// counted as skipped.
	copyFile("testdata/formats/notes.txt", filepath.Join(dir, "notes.txt"))
	copyFile("testdata/formats/slides.pptx", filepath.Join(dir, "sub", "deck.pptx"))
	copyFile("testdata/eval/broken.docx", filepath.Join(dir, "old.doc"))
	return g, []ai.GenerateOption{ai.WithModel(m)}, dir
}

// evalGenQuestion is the flow input of the struct-input tests.
type evalGenQuestion struct {
	Question string   `json:"question"`
	Tags     []string `json:"tags"`
}

func TestGenerateEvalSetGolden(t *testing.T) {
	f := &evalGenFake{}
	g, opts, dir := evalGenSetup(t, f)
	out := filepath.Join(t.TempDir(), "nested", "eval_dataset_generated.json")
	cfg := GenerateEvalSetInput{Dir: dir, SampleRate: 2, MaxPerDoc: 3, OutPath: out}
	build := func(q string) evalGenQuestion { return evalGenQuestion{Question: q, Tags: []string{"all"}} }
	res, err := GenerateEvalSet(context.Background(), g, opts, 300, 50, cfg, build)
	if err != nil {
		t.Fatal(err)
	}
	if res.Documents != 4 || res.Unreadable != 2 || res.Skipped != 0 || res.OutPath != out || res.Written != int(f.calls.Load()) {
		t.Errorf("result %+v, model calls %d", res, f.calls.Load())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "eval", "generated.golden.json")
	if *evalUpdate {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGenerateEvalSetGolden -eval.update .)", err)
	}
	if !bytes.Equal(data, want) {
		t.Errorf("dataset differs from %s (rerun with -eval.update after checking):\n%s", golden, data)
	}

	// The dataset is what genkit eval:flow reads: testCaseId, input, reference.
	var cases []ai.Example
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	perDoc := map[string]int{}
	for _, c := range cases {
		in, _ := c.Input.(map[string]any)
		if c.TestCaseId == "" || seen[c.TestCaseId] || in["question"] == "" || c.Reference == "" {
			t.Errorf("bad case %+v", c)
		}
		seen[c.TestCaseId] = true
		perDoc[c.TestCaseId[:strings.LastIndex(c.TestCaseId, "#")]]++
	}
	if perDoc["birds"] == 0 || perDoc["sub/recipes"] == 0 ||
		perDoc["notes"] == 0 || perDoc["sub/deck"] == 0 || len(perDoc) != 4 {
		t.Errorf("cases per document %v", perDoc)
	}
	for d, n := range perDoc {
		if n > 3 {
			t.Errorf("%s: %d cases, MaxPerDoc is 3", d, n)
		}
	}

	// Same files and replies: the same bytes.
	res2, err := GenerateEvalSet(context.Background(), g, opts, 300, 50, cfg, build)
	if err != nil || res2 != res {
		t.Fatalf("second run %+v, %v", res2, err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, data) {
		t.Error("second run wrote a different dataset")
	}
	// The prompt quotes the chunk as context and names the document.
	if p := f.prompts[0]; !strings.Contains(p, "Document: birds.docx") || !strings.Contains(p, ContextOpenTag+"\n") {
		t.Errorf("prompt:\n%s", p)
	}
}

func TestGenerateEvalSetSampling(t *testing.T) {
	f := &evalGenFake{}
	g, opts, dir := evalGenSetup(t, f)
	count := func(rate, maxPer int) int {
		t.Helper()
		res, err := GenerateEvalSet(context.Background(), g, opts, 200, 0,
			GenerateEvalSetInput{Dir: dir, SampleRate: rate, MaxPerDoc: maxPer, OutPath: filepath.Join(t.TempDir(), "x.json")}, evalNoBuild[string]())
		if err != nil {
			t.Fatal(err)
		}
		return res.Written
	}
	all := count(1, 1000)
	if all < 6 {
		t.Fatalf("only %d chunks sampled with rate 1; fixtures too small for this test", all)
	}
	// Every other chunk of each document: about half, rounded up per document.
	if half := count(2, 1000); half < all/2 || half > all/2+2 {
		t.Errorf("rate 2: %d cases of %d", half, all)
	}
	if one := count(1, 1); one != 4 {
		t.Errorf("maxPerDoc 1: %d cases, want one per readable document", one)
	}
	// Defaults (every 10th chunk): each fixture has fewer than 10 chunks,
	// so only its first is sampled.
	if def := count(0, 0); def != 4 {
		t.Errorf("defaults: %d cases, want 4", def)
	}
}

// evalNoBuild returns a nil buildInput of the given input type.
func evalNoBuild[In any]() func(string) In { return nil }

func TestGenerateEvalSetErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("struct input without buildInput", func(t *testing.T) {
		g, opts, dir := evalGenSetup(t, &evalGenFake{})
		_, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir}, evalNoBuild[evalGenQuestion]())
		if err == nil || !strings.Contains(err.Error(), "buildInput is nil") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("missing dir", func(t *testing.T) {
		g, opts, _ := evalGenSetup(t, &evalGenFake{})
		_, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: filepath.Join(t.TempDir(), "nope")}, evalNoBuild[string]())
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("empty dir", func(t *testing.T) {
		g, opts, _ := evalGenSetup(t, &evalGenFake{})
		out := filepath.Join(t.TempDir(), "out.json")
		_, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: t.TempDir(), OutPath: out}, evalNoBuild[string]())
		if !errors.Is(err, ErrNoEvalCases) {
			t.Errorf("err %v", err)
		}
		if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
			t.Error("a dataset was written without cases")
		}
	})
	t.Run("negative sample rate", func(t *testing.T) {
		g, opts, dir := evalGenSetup(t, &evalGenFake{})
		_, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, SampleRate: -1}, evalNoBuild[string]())
		if err == nil {
			t.Error("no error")
		}
	})
	t.Run("replies that are not JSON", func(t *testing.T) {
		// As in the original engine: every unusable reply is counted as
		// skipped, and the (empty) dataset is written without an error.
		f := &evalGenFake{reply: func(string) (string, error) { return "I cannot do that.", nil }}
		g, opts, dir := evalGenSetup(t, f)
		out := filepath.Join(t.TempDir(), "out.json")
		res, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, SampleRate: 1, OutPath: out}, evalNoBuild[string]())
		if err != nil || res.Documents != 4 || res.Written != 0 || res.Skipped != int(f.calls.Load()) || f.calls.Load() < 4 {
			t.Errorf("res %+v err %v calls %d", res, err, f.calls.Load())
		}
		if data, err := os.ReadFile(out); err != nil || strings.TrimSpace(string(data)) != "[]" {
			t.Errorf("dataset %q, %v; want an empty array", data, err)
		}
	})
	t.Run("some replies unusable", func(t *testing.T) {
		var n atomic.Int64
		f := &evalGenFake{reply: func(string) (string, error) {
			if n.Add(1)%2 == 0 {
				return `{"question": "", "answer": "x"}`, nil
			}
			return `{"question": "Q?", "answer": "A."} trailing`, nil
		}}
		g, opts, dir := evalGenSetup(t, f)
		res, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, SampleRate: 1, MaxPerDoc: 4, OutPath: filepath.Join(t.TempDir(), "o.json")}, evalNoBuild[string]())
		if err != nil || res.Written != int(f.calls.Load()+1)/2 {
			t.Errorf("res %+v err %v calls %d", res, err, f.calls.Load())
		}
	})
	t.Run("model error", func(t *testing.T) {
		f := &evalGenFake{reply: func(string) (string, error) { return "", errors.New("model down") }}
		g, opts, dir := evalGenSetup(t, f)
		_, err := GenerateEvalSet(ctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, OutPath: filepath.Join(t.TempDir(), "o.json")}, evalNoBuild[string]())
		if err == nil || !strings.Contains(err.Error(), "model down") || f.calls.Load() != 1 {
			t.Errorf("err %v calls %d", err, f.calls.Load())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := &evalGenFake{}
		g, opts, dir := evalGenSetup(t, f)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := GenerateEvalSet(cctx, g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, OutPath: filepath.Join(t.TempDir(), "o.json")}, evalNoBuild[string]())
		if !errors.Is(err, context.Canceled) || f.calls.Load() != 0 {
			t.Errorf("err %v calls %d", err, f.calls.Load())
		}
	})
}

// GenerateEvalSet also reads the pages RunCrawl saved to its directory
// (the Markdown crawl cache), as ReindexCrawlData does: the live crawl's
// breadcrumbs, the page URL as the document's name. An ordinary Markdown
// document beside them, front matter included, is read as Markdown.
func TestGenerateEvalSetCrawlCache(t *testing.T) {
	f := &evalGenFake{}
	g, opts, _ := evalGenSetup(t, f)
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const pageURL = "https://www.example.com/studium/pruefungen"
	name, err := writeCrawlCachePage(root, pageURL, []Paragraph{
		{Text: "Prüfungen", Heading: true, Breadcrumb: "Prüfungen"},
		{Text: "Anmeldung", Heading: true, Breadcrumb: "Prüfungen > Anmeldung"},
		{Text: "Die Anmeldung zu den Modulprüfungen erfolgt bis spätestens zwei Wochen vor dem Prüfungstermin im Portal.", Breadcrumb: "Prüfungen > Anmeldung"},
	})
	if err != nil {
		t.Fatal(err)
	}
	guide := "---\ntitle: Leitfaden\n---\n\n# Leitfaden\n\nDer Leitfaden erklärt, wie die Bibliothek Bücher für ein Semester verleiht.\n"
	if err := os.WriteFile(filepath.Join(dir, "guide.md"), []byte(guide), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.json")
	res, err := GenerateEvalSet(context.Background(), g, opts, 300, 0, GenerateEvalSetInput{Dir: dir, OutPath: out}, evalNoBuild[string]())
	if err != nil || res.Documents != 2 || res.Skipped != 0 || res.Written != 2 {
		t.Fatalf("res %+v err %v", res, err)
	}
	var cache, plain string
	for _, p := range f.prompts {
		if strings.Contains(p, "Modulprüfungen") {
			cache = p
		} else {
			plain = p
		}
	}
	if !strings.Contains(cache, "Document: "+pageURL+"\n") || !strings.Contains(cache, "Section: Prüfungen > Anmeldung\n") ||
		strings.Contains(cache, "url:") {
		t.Errorf("crawl cache page prompt:\n%s", cache)
	}
	if !strings.Contains(plain, "Document: guide.md\n") || !strings.Contains(plain, "Bibliothek") || strings.Contains(plain, "title:") {
		t.Errorf("Markdown document prompt:\n%s", plain)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"`+strings.TrimSuffix(name, ".md")+`#0"`) || !strings.Contains(string(data), `"guide#0"`) {
		t.Errorf("case IDs:\n%s", data)
	}
}

// TestGenerateEvalSetOriginal runs the original engine's two cases: a crawl
// page gives cases named "<file stem>#<chunk>" with the built input and the
// reply's answer; replies that are not JSON are counted as skipped.
func TestGenerateEvalSetOriginal(t *testing.T) {
	page := "---\nurl: https://a.example/\n---\n" + strings.Repeat("Dies ist ein ausreichend langer Satz über das Studium. ", 12)
	for _, tc := range []struct {
		reply string
		check func(GenerateEvalSetResult, []EvalCase[string]) bool
	}{
		{`Hier: {"question": "Was ist das Studium?", "answer": "Ein Studium."}`, func(r GenerateEvalSetResult, cs []EvalCase[string]) bool {
			return r.Written > 0 && r.Written <= 2 && r.Documents == 1 && r.Skipped == 0 && len(cs) == r.Written &&
				cs[0].Input == "IN:Was ist das Studium?" && cs[0].Reference == "Ein Studium." && strings.HasPrefix(cs[0].TestCaseId, "page#")
		}},
		{"kein json", func(r GenerateEvalSetResult, cs []EvalCase[string]) bool {
			return r.Written == 0 && r.Skipped > 0 && len(cs) == 0
		}},
	} {
		f := &evalGenFake{reply: func(string) (string, error) { return tc.reply, nil }}
		g, opts, _ := evalGenSetup(t, f)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "eval.json")
		res, err := GenerateEvalSet(context.Background(), g, opts, 300, 30,
			GenerateEvalSetInput{Dir: dir, SampleRate: 1, MaxPerDoc: 2, OutPath: out}, func(q string) string { return "IN:" + q })
		if err != nil {
			t.Fatalf("reply %q: %v", tc.reply, err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var cases []EvalCase[string]
		if err := json.Unmarshal(data, &cases); err != nil {
			t.Fatal(err)
		}
		if !tc.check(res, cases) {
			t.Errorf("reply %q: result %+v, cases %+v", tc.reply, res, cases)
		}
	}
}
