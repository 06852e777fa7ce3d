package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// writeDocx writes a minimal .docx whose body holds paras; a paragraph
// starting with "# " is a Heading1.
func writeDocx(t *testing.T, path string, paras []string) {
	t.Helper()
	var body strings.Builder
	for _, p := range paras {
		style := ""
		if h, ok := strings.CutPrefix(p, "# "); ok {
			p, style = h, `<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>`
		}
		fmt.Fprintf(&body, `<w:p>%s<w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, style, html.EscapeString(p))
	}
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
			`<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
		"_rels/.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/_rels/document.xml.rels": `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
		"word/styles.xml": `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
			`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:pPr><w:outlineLvl w:val="0"/></w:pPr></w:style></w:styles>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `</w:body></w:document>`,
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/_rels/document.xml.rels", "word/styles.xml", "word/document.xml"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonKeys returns the keys of a JSON object.
func jsonKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, raw)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestIndexFolderSync: a symlinked folder with symlinked files and
// folders inside (and a loop), ignore patterns, an empty .docx, and a file
// that is deleted between two runs.
func TestIndexFolderSync(t *testing.T) {
	work := t.TempDir()
	real := filepath.Join(work, "real", "docs")
	copyFixture(t, "../../testdata/cli/docs/handbook.pdf", filepath.Join(real, "handbook.pdf"))
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(real, "faq.docx"))
	copyFixture(t, "../../testdata/cli/docs/prices.html", filepath.Join(work, "outside", "prices.html"))
	os.MkdirAll(filepath.Join(work, "elsewhere"), 0o755)
	os.MkdirAll(filepath.Join(real, "drafts"), 0o755)
	writeHTML(t, filepath.Join(work, "elsewhere", "contact.html"), "Contact", "Call the boathouse on 555 01 234.")
	writeHTML(t, filepath.Join(real, "drafts", "secret.html"), "Secret", "An unpublished draft about glacier tours.")
	writeHTML(t, filepath.Join(real, "notes.tmp.html"), "Tmp", "A temporary note about kayak colours.")
	writeFile(t, filepath.Join(real, ignoreFile), "# drafts are not published\ndrafts/\n")
	writeDocx(t, filepath.Join(real, "empty.docx"), nil)
	for link, target := range map[string]string{
		filepath.Join(work, "docs"):               real,                                             // the argument itself
		filepath.Join(real, "ext"):                filepath.Join(work, "outside"),                   // a folder
		filepath.Join(real, "contact.html"):       filepath.Join(work, "elsewhere", "contact.html"), // a file
		filepath.Join(real, "loop"):               real,                                             // a loop
		filepath.Join(real, "handbook-again.pdf"): filepath.Join(real, "handbook.pdf"),              // a duplicate
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(work, "index")
	// The folder's links out of it are followed on request only (the
	// default is TestIndexSymlinkFlag's).
	r := runCLI(t, work, nil, "index", "--data", data, "--follow-symlinks-outside", "--exclude", "*.tmp.html", "docs")
	if r.code != 0 {
		t.Fatalf("index of a symlinked folder with an empty .docx must exit 0:\n%s", r)
	}
	for _, want := range []string{"Indexed 4 sources", "Skipped 1 document without text:", "docs/empty.docx: no text found",
		"duplicate via symlink 1", "excluded 1", "symlink loop 1"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("index output lacks %q:\n%s", want, r)
		}
	}
	if !strings.Contains(r.stderr, "docs/contact.html: 1 chunk, 1 embedded") {
		t.Errorf("want \"1 chunk\":\n%s", r.stderr)
	}
	r = runCLI(t, work, nil, "sources", "--data", data, "--json")
	var srcs sourcesOutput
	if err := json.Unmarshal([]byte(r.stdout), &srcs); err != nil {
		t.Fatal(err)
	}
	var names []string
	faqChunks := 0
	for _, s := range srcs.Results {
		names = append(names, s.Display)
		if s.Display == "docs/faq.docx" {
			faqChunks = s.Chunks
		}
	}
	slices.Sort(names)
	if want := []string{"docs/contact.html", "docs/ext/prices.html", "docs/faq.docx", "docs/handbook.pdf"}; !slices.Equal(names, want) {
		t.Errorf("indexed %q, want %q", names, want)
	}

	// The .docx is deleted: the re-run removes it and says so; search no
	// longer finds it. The empty .docx still exits 0.
	if err := os.Remove(filepath.Join(real, "faq.docx")); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, work, nil, "index", "--data", data, "--follow-symlinks-outside", "--exclude", "*.tmp.html", "docs", "--json")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("re-index: %v\n%s", err, r)
	}
	if len(rep.Removed) != 1 || rep.Removed[0] != (removedSource{URL: filepath.Join(work, "docs", "faq.docx"), Display: "docs/faq.docx"}) || rep.Deleted != faqChunks || faqChunks == 0 || rep.Unchanged != 3 || len(rep.Empty) != 1 ||
		rep.Empty[0].URL != filepath.Join(work, "docs", "empty.docx") {
		t.Errorf("re-index after deleting faq.docx: %+v", rep)
	}
	want := []string{"brokenLinks", "chunks", "deleted", "embedded", "embedder", "empty", "failed", "interrupted", "removed", "seconds", "skipped", "sources", "store", "unchanged"}
	if keys := jsonKeys(t, []byte(r.stdout)); !slices.Equal(keys, want) {
		t.Errorf("index --json keys %q, want %q", keys, want)
	}
	if rep.Store != data {
		t.Errorf("store shown as %q, want the index directory %q", rep.Store, data)
	}
	r = runCLI(t, work, nil, "search", "--data", data, "--json", "wetsuit rental")
	if strings.Contains(r.stdout, "faq.docx") {
		t.Errorf("a deleted file is still found:\n%s", r.stdout)
	}
	// Excluding a file that was indexed removes it too.
	r = runCLI(t, work, nil, "index", "--data", data, "--follow-symlinks-outside", "--exclude", "*.tmp.html", "--exclude", "ext/", "docs")
	if r.code != 0 || !strings.Contains(r.stdout, "Removed 1 file no longer in the folder: docs/ext/prices.html") {
		t.Errorf("excluded folder not removed:\n%s", r)
	}
}

// TestDocxEditCounts: editing one paragraph of a .docx re-embeds and
// removes only what changed.
func TestDocxEditCounts(t *testing.T) {
	work := t.TempDir()
	var paras []string
	for s := 1; s <= 8; s++ {
		paras = append(paras, fmt.Sprintf("# Section %d", s))
		for p := 1; p <= 3; p++ {
			paras = append(paras, fmt.Sprintf("Paragraph %d of section %d talks about topic %d with enough words to fill a line of text about kayaks, paddles and the fjord number %d.", p, s, s*10+p, s*p))
		}
	}
	doc := filepath.Join(work, "docs", "manual.docx")
	writeDocx(t, doc, paras)
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	paras[6] = "Paragraph 1 of section 2 was rewritten: it now talks about life jackets."
	writeDocx(t, doc, paras)
	r := runCLI(t, work, nil, "index", "--data", data, "docs", "--json")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("re-index: %v\n%s", err, r)
	}
	if rep.Embedded < 1 || rep.Embedded > 2 || rep.Deleted > 2 {
		t.Errorf("one paragraph edited: %d embedded, %d removed; want 1-2 and at most 2", rep.Embedded, rep.Deleted)
	}
}

// TestPDFTrailerAfterEOF: a PDF with a trailer after its %%EOF is read.
func TestPDFTrailerAfterEOF(t *testing.T) {
	work := t.TempDir()
	b, err := os.ReadFile("../../testdata/cli/docs/handbook.pdf")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, []byte("\ntrailer\n<< /Size 3 /Info 9 0 R >>\n")...)
	writeFile(t, filepath.Join(work, "tail.pdf"), string(b))
	r := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "index"), "tail.pdf")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 1 source: 5 chunks") || strings.Contains(r.stdout+r.stderr, "%%EOF") {
		t.Errorf("PDF with a trailer after %%%%EOF:\n%s", r)
	}
}

// TestCrawlRefusedOnce: a crawl refused by the SSRF guard is one failure.
func TestCrawlRefusedOnce(t *testing.T) {
	work := t.TempDir()
	site := siteServer(t)
	r := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "index"), "--crawl", "--delay", "0", site.URL+"/site/", "--json")
	var rep indexReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if r.code != exitError || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0].Reason, "refused by the SSRF guard") {
		t.Errorf("refused crawl: want exactly one failure:\n%s", r)
	}
	if strings.Count(rep.Failed[0].Reason, "loopback") != 1 {
		t.Errorf("reason repeats itself: %q", rep.Failed[0].Reason)
	}
}

// TestHelpAndErrors: git-style help, one-line errors with hints, did you
// mean, global flags anywhere, --version.
func TestHelpAndErrors(t *testing.T) {
	work := t.TempDir()
	help := runCLI(t, work, nil, "help", "index")
	flagHelp := runCLI(t, work, nil, "index", "--help")
	if help.code != 0 || help.stdout != flagHelp.stdout {
		t.Errorf("help index differs from index --help:\n%s\n%s", help, flagHelp)
	}
	for _, want := range []string{"Usage:\n  askyourdocs index [flags] PATH|URL ...", "--crawl", "--exclude GLOB", "--max-pages N",
		"Global flags:", "--name STRING", "Examples:\n  askyourdocs index ./docs"} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("help index lacks %q:\n%s", want, help.stdout)
		}
	}
	if regexp.MustCompile(`(?m)^\s+-[a-z]{2,}`).MatchString(help.stdout) {
		t.Errorf("single-dash long flags in the help:\n%s", help.stdout)
	}
	for _, c := range commands {
		if r := runCLI(t, work, nil, "help", c.name); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("help %s:\n%s", c.name, r)
		}
	}

	lines := func(s string) int { return strings.Count(strings.TrimSpace(s), "\n") + 1 }
	r := runCLI(t, work, nil, "indx", "docs")
	if r.code != exitUsage || !strings.Contains(r.stderr, `did you mean "index"?`) || lines(r.stderr) > 2 {
		t.Errorf("typo:\n%s", r)
	}
	r = runCLI(t, work, nil, "index", "example.com/faq.html", "--data", filepath.Join(work, "i"))
	if r.code != exitError || !strings.Contains(r.stdout+r.stderr, "https://example.com/faq.html") {
		t.Errorf("a URL without scheme gets no hint:\n%s", r)
	}
	r = runCLI(t, work, nil, "--pg", "postgres://nobody@127.0.0.1:1/none", "sources")
	if r.code != exitError || lines(r.stderr) != 2 || strings.Count(r.stderr, "connection refused") != 1 ||
		!strings.Contains(r.stderr, "127.0.0.1:1") || !strings.Contains(r.stderr, "hint:") {
		t.Errorf("wrong DSN: want one line and a hint:\n%s", r)
	}
	r = runCLI(t, work, []string{"LLM_MODEL=openai/gpt-4o"}, "ask", "--data", work, "anything")
	if r.code != exitError || !strings.Contains(r.stderr, `unknown model provider "openai"`) || !strings.Contains(r.stderr, "ollama/openai/gpt-4o") {
		t.Errorf("openai/ spec not refused:\n%s", r)
	}
	r = runCLI(t, work, nil, "index", "--nope")
	if r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag --nope") || lines(r.stderr) != 2 || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("unknown flag:\n%s", r)
	}
	r = runCLI(t, work, nil, "search", "--mod", "keyword", "x")
	if r.code != exitUsage || !strings.Contains(r.stderr, "did you mean --mode?") || lines(r.stderr) != 2 {
		t.Errorf("flag typo:\n%s", r)
	}
	r = runCLI(t, work, nil, "--crawl", "index", "https://example.com/")
	if r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag --crawl before the command") ||
		!strings.Contains(r.stderr, "askyourdocs index --crawl ...") || lines(r.stderr) != 2 {
		t.Errorf("command flag before the command:\n%s", r)
	}
	r = runCLI(t, work, nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "askyourdocs ") || !strings.Contains(r.stdout, "go1.") {
		t.Errorf("--version:\n%s", r)
	}

	// Global flags before and after the command; --name is one of them.
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "--data", data, "--name", "foo", "index", absPath(t, "../../testdata/cli/docs/prices.html")); r.code != 0 {
		t.Fatalf("global flags before the command:\n%s", r)
	}
	r = runCLI(t, work, nil, "--name", "foo", "sources", "--data", data)
	if r.code != 0 || !strings.Contains(r.stdout, "1 document, 1 chunk") {
		t.Errorf("--name foo sources:\n%s", r)
	}
	r = runCLI(t, work, nil, "sources", "--data="+data, "-q", "--name=foo")
	if r.code != 0 || !strings.Contains(r.stdout, "prices.html") {
		t.Errorf("flags after the command:\n%s", r)
	}
	// Errors in --json mode are JSON on stdout with a non-zero exit.
	r = runCLI(t, work, nil, "--data", data, "--name", "foo", "search", "-k", "0", "prices", "--json")
	var e struct {
		Error struct{ Code, Message, Hint string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || r.code != exitUsage || e.Error.Code != "usage" || !strings.Contains(e.Error.Message, "-k must be between 1 and 100") {
		t.Errorf("search -k 0 --json: %v\n%s", err, r)
	}
	r = runCLI(t, work, nil, "search", "--data", filepath.Join(work, "none"), "--json", "x")
	if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || r.code != exitError || e.Error.Code != "not_indexed" {
		t.Errorf("nothing indexed --json: %v\n%s", err, r)
	}
}

// TestJSONShapes: search and ask --json keep every key.
func TestJSONShapes(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	r := runCLI(t, work, nil, "search", "--data", data, "--json", "-k", "3", "kayak")
	if keys := jsonKeys(t, []byte(r.stdout)); !slices.Equal(keys, []string{"mode", "query", "results"}) {
		t.Errorf("search --json keys %q", keys)
	}
	var out struct{ Results []json.RawMessage }
	json.Unmarshal([]byte(r.stdout), &out)
	want := []string{"breadcrumb", "display", "keywordRank", "language", "link", "n", "pages", "rank", "releaseNotes", "rerank", "score", "source", "text", "url", "vectorRank"}
	if len(out.Results) != 3 {
		t.Fatalf("search -k 3: %d results", len(out.Results))
	}
	for _, res := range out.Results {
		if keys := jsonKeys(t, res); !slices.Equal(keys, want) {
			t.Errorf("search result keys %q, want %q", keys, want)
		}
	}
	// -v shows where each retriever ranked a hit; --quiet drops progress.
	if r := runCLI(t, work, nil, "search", "--data", data, "-v", "kayak"); !strings.Contains(r.stdout, "[vector #") {
		t.Errorf("search -v:\n%s", r)
	}
	if r := runCLI(t, work, nil, "search", "--data", data, "kayak"); strings.Contains(r.stdout, "[vector #") {
		t.Errorf("search without -v shows ranks:\n%s", r)
	}
	if r := runCLI(t, work, nil, "index", "--data", data, "--quiet", absPath(t, "../../testdata/cli/docs")); r.code != 0 || r.stderr != "" {
		t.Errorf("index --quiet printed progress:\n%s", r)
	}
	// -v lets the engine's log lines through; without it they stay out.
	if r := runCLI(t, work, nil, "index", "--data", data, "-v", absPath(t, "../../testdata/cli/docs")); r.code != 0 ||
		!strings.Contains(r.stderr, `level=DEBUG msg="indexed source"`) {
		t.Errorf("index -v shows no engine log lines:\n%s", r)
	}
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); strings.Contains(r.stderr, "level=") {
		t.Errorf("index without -v shows log lines:\n%s", r)
	}
	r = runCLI(t, work, nil, "ask", "--data", data, "--json", "minimum age for a single kayak")
	if keys := jsonKeys(t, []byte(r.stdout)); !slices.Equal(keys, []string{"answer", "citations", "confidence", "confidenceBasis", "hyde", "missingTerms", "mode", "model", "noMatch", "note", "question", "score"}) {
		t.Errorf("ask --json keys %q", keys)
	}
	var ans answerResult
	json.Unmarshal([]byte(r.stdout), &ans)
	if strings.Contains(ans.Answer, "LLM") || !strings.HasPrefix(ans.Answer, "[1] ") || !strings.Contains(ans.Note, "no LLM configured") {
		t.Errorf("ask --json answer carries the preamble or lacks the note: %+v", ans)
	}
	if len(ans.Citations) == 0 || !strings.HasSuffix(ans.Citations[0].Link, "handbook.pdf#page=2") || ans.Citations[0].Display == "" ||
		strings.HasPrefix(ans.Citations[0].Display, "/") {
		t.Errorf("citation: want a short display and a #page link: %+v", ans.Citations)
	}
}

// TestExtractiveAnswers: no repeated passages or citations, the quote the
// answering sentences (the heading in the citation), low confidence for
// questions the documents do not answer
// and for contents pages.
func TestExtractiveAnswers(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	ask := func(q string) answerResult {
		t.Helper()
		r := runCLI(t, work, nil, "ask", "--data", data, "--json", q)
		var ans answerResult
		if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil {
			t.Fatalf("%v\n%s", err, r)
		}
		return ans
	}
	ans := ask("How long before the tour can I cancel a booking and get a full refund?")
	seen := map[string]bool{}
	for _, c := range ans.Citations {
		if seen[c.String()] {
			t.Errorf("citation %q repeated: %+v", c.String(), ans.Citations)
		}
		seen[c.String()] = true
	}
	passages := regexp.MustCompile(`(?m)^\[\d\] `).Split(ans.Answer, -1)[1:]
	if len(passages) != len(ans.Citations) {
		t.Errorf("%d passages but %d citations:\n%s", len(passages), len(ans.Citations), ans.Answer)
	}
	for i, p := range passages {
		for _, q := range passages[i+1:] {
			if strings.TrimSpace(p) == strings.TrimSpace(q) {
				t.Errorf("passage repeated: %q", p)
			}
		}
	}
	// The quote is the answer: the section's heading is in its citation.
	if !strings.HasPrefix(ans.Answer, "[1] You can cancel") || !strings.Contains(ans.Citations[0].Breadcrumb, "Cancellations and refunds") {
		t.Errorf("wrong passage or sentence:\n%s\n%+v", ans.Answer, ans.Citations)
	}
	if ans.Confidence != "high" {
		t.Errorf("answerable question: confidence %s (%d, %s)", ans.Confidence, ans.Score, ans.ConfidenceBasis)
	}
	if ans := ask("What is the capital of Mongolia?"); ans.Confidence != "low" {
		t.Errorf("unanswerable question: confidence %s (%d, %s)", ans.Confidence, ans.Score, ans.ConfidenceBasis)
	}

	// A contents page holding every word of the question is not evidence.
	toc := filepath.Join(work, "contents.html")
	writeFile(t, toc, "<html><body><h1>Contents</h1><p>1 Booking a tour 4</p><p>2 Cancellations and refunds 5</p>"+
		"<p>3 Safety rules 7</p><p>4 Minimum age for kayaks 8</p><p>5 Meeting point 9</p><p>6 Prices 11</p></body></html>")
	data2 := filepath.Join(work, "index2")
	if r := runCLI(t, work, nil, "index", "--data", data2, toc); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	r := runCLI(t, work, nil, "ask", "--data", data2, "--json", "minimum age kayaks")
	var tocAns answerResult
	json.Unmarshal([]byte(r.stdout), &tocAns)
	if tocAns.Score > 3 || !strings.Contains(tocAns.ConfidenceBasis, "table of contents") {
		t.Errorf("contents page rated %d (%s)", tocAns.Score, tocAns.ConfidenceBasis)
	}
}

// TestAskModelServerDown: an unreachable Ollama gives the extractive
// answer with a one-line note and no log lines.
func TestAskModelServerDown(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	r := runCLI(t, work, []string{"LLM_MODEL=ollama/llama3.2", "OLLAMA_HOST=http://127.0.0.1:1", "LLM_TIMEOUT=5s"}, "ask", "--data", data, "minimum age for a single kayak")
	if r.code != 0 || !strings.Contains(r.stdout, "12 years") {
		t.Fatalf("no extractive fallback:\n%s", r)
	}
	if strings.TrimSpace(r.stderr) != "note: Ollama at http://127.0.0.1:1 not reachable (connection refused): quoting the best passages instead" {
		t.Errorf("want exactly one note line on stderr:\n%s", r.stderr)
	}
}
