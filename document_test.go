package engine

import (
	"errors"
	"fmt"
	"go/build"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSupportedDocumentExt(t *testing.T) {
	for ext, want := range map[string]bool{
		".pdf": true, ".PDF": true, ".Pdf": true, ".docx": true, ".DOCX": true, ".DocX": true,
		".md": true, ".markdown": true, ".txt": true, ".TXT": true, ".text": true, ".pptx": true,
		".xlsx": true, ".odt": true, ".ods": true, ".odp": true, ".epub": true,
		// Files without extension are read only when named explicitly; the
		// legacy binary formats and .rtf are refused; HTML has its own path.
		"": false, "pdf": false, "docx": false, ".doc": false, ".xls": false, ".ppt": false,
		".rtf": false, ".html": false, ".pdf.gz": false, ".docm": false, ".pptm": false,
	} {
		if got := SupportedDocumentExt(ext); got != want {
			t.Errorf("SupportedDocumentExt(%q) = %v, want %v", ext, got, want)
		}
	}
}

func TestExtractParagraphsDispatch(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "docx", "birds.docx"))
	if err != nil {
		t.Fatal(err)
	}
	want := docxFixture(t, "birds.docx")
	dir := t.TempDir()
	for _, name := range []string{"upper.DOCX", "mixed.DocX"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ExtractParagraphs(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: paragraphs differ from birds.docx", name)
		}
	}
	for _, name := range []string{"old.doc", "OLD.DOC", "deck.PPT", "sheet.xls", "memo.rtf", "noext", "page.html", "x.docx.bak", "Scan.Png"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ExtractParagraphs(path); !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("%s: got %v, want ErrUnsupportedFormat", name, err)
		}
	}
	// A .docx extension on something else is an invalid .docx, not a panic.
	bad := filepath.Join(dir, "fake.docx")
	if err := os.WriteFile(bad, []byte("plain text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractParagraphs(bad); !errors.Is(err, ErrInvalidDocx) || !strings.Contains(err.Error(), bad) {
		t.Errorf("fake .docx: %v", err)
	}
}

func TestNormalizeSpaces(t *testing.T) {
	for in, want := range map[string]string{
		"":                            "",
		"   ":                         "",
		"a":                           "a",
		"already normal":              "already normal",
		" lead":                       "lead",
		"trail ":                      "trail",
		"a  b":                        "a b",
		"a\tb\nc\r\nd":                "a b c d",
		"\n\n para \n":                "para",
		"no\u00a0break":               "no break",
		"ideo\u3000graphic":           "ideo graphic",
		"thin\u2009space\u202fnarrow": "thin space narrow",
		"line\u2028sep\u0085nel":      "line sep nel",
		"zero\u200bwidth":             "zerowidth",
		"soft\u00adhyphen":            "softhyphen",
		"\ufeffbom start":             "bom start",
		"word\u2060joiner":            "wordjoiner",
		"a \u200b b":                  "a b",
		"keep\u200djoiner":            "keep\u200djoiner",
		"émigré  café":                "émigré café",
		"bad\xffutf8  x":              "bad\xffutf8 x",
		"a \u00a0\t b":                "a b",
	} {
		if got := NormalizeSpaces(in); got != want {
			t.Errorf("NormalizeSpaces(%q) = %q, want %q", in, got, want)
		}
	}
	s := "nothing to do here, café"
	if n := testing.AllocsPerRun(100, func() { NormalizeSpaces(s) }); n != 0 {
		t.Errorf("normalised input allocates %v times", n)
	}
}

// chunkTestPara builds a paragraph for the BuildChunks tests.
func chunkTestPara(text string, page int, heading bool, crumb string) Paragraph {
	return Paragraph{Text: text, PageNum: page, Heading: heading, Breadcrumb: crumb}
}

func TestBuildChunksSectionsAndMetadata(t *testing.T) {
	paras := []Paragraph{
		chunkTestPara("Preface text before any heading.", 1, false, ""),
		chunkTestPara("A. Guide", 1, true, "A. Guide"),
		chunkTestPara("Install", 2, true, "A. Guide > Install"),
		chunkTestPara("Run the installer.", 2, false, "A. Guide > Install"),
		chunkTestPara("Then reboot.", 3, false, "A. Guide > Install"),
		chunkTestPara("  ", 3, false, "A. Guide > Install"), // ignored
		chunkTestPara("Use", 4, true, "A. Guide > Use"),
		chunkTestPara("Open the app.", 4, false, "A. Guide > Use"),
	}
	got := BuildChunks(paras, 100, 20)
	want := []Chunk{
		{Text: "Preface text before any heading.", ParentText: "Preface text before any heading.", Pages: "1"},
		{ // a heading with no text of its own stays with the next one
			Text:       "A. Guide\nInstall\nRun the installer.\nThen reboot.",
			ParentText: "A. Guide\nInstall\nRun the installer.\nThen reboot.",
			Pages:      "1-3", Section: "Install", Top: "A", Breadcrumb: "A. Guide > Install",
		},
		{Text: "Use\nOpen the app.", ParentText: "Use\nOpen the app.", Pages: "4", Section: "Use", Top: "A", Breadcrumb: "A. Guide > Use"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%#v\nwant\n%#v", got, want)
	}
}

func TestBuildChunksWithoutHeadingParagraphs(t *testing.T) {
	// Sources that only set Breadcrumb: a change of breadcrumb is a new
	// section; Section is its last element.
	paras := []Paragraph{
		chunkTestPara("Alpha text.", 0, false, "§ 3 Docs > Alpha"),
		chunkTestPara("More alpha.", 0, false, "§ 3 Docs > Alpha"),
		chunkTestPara("Beta text.", 0, false, "§ 3 Docs > Beta"),
	}
	got := BuildChunks(paras, 60, 0) // sections of at least 60/6 runes: none is merged
	if len(got) != 2 || got[0].Text != "Alpha text.\nMore alpha." || got[1].Section != "Beta" || got[1].Top != "§ 3" || got[0].Pages != "" {
		t.Errorf("got %#v", got)
	}
}

// Chunk.Top is the original engine's short label of the top-level heading.
func TestTopLabel(t *testing.T) {
	for heading, want := range map[string]string{
		"TOP 7 Ein Antrag auf Änderung der Studienordnung": "TOP 7",
		"TOP N2 Honorarprofessur":                          "TOP N2",
		"N1. Antrag auf Verlängerung":                      "TOP N1",
		"§ 12 Modulabschluss":                              "§ 12",
		"§12a Fristen":                                     "§ 12a",
		"A. Allgemeine Regelungen":                         "A",
		"II. Modulabschluss":                               "II",
		"1. Begrüßung":                                     "",
		"Bestätigt:":                                       "",
		"§ 54 Absatz 6 ThürHG anwesend sein.":              "",
		"§ 5 Abs. 2 gilt entsprechend.":                    "",
		"Guide":                                            "",
		"":                                                 "",
	} {
		if got := topLabel(heading); got != want {
			t.Errorf("topLabel(%q) = %q, want %q", heading, got, want)
		}
	}
	// In chunks: the label of the breadcrumb's first element.
	paras := []Paragraph{
		chunkTestPara("TOP 7 Ein Antrag", 1, true, "TOP 7 Ein Antrag"),
		chunkTestPara("Der Rat stimmt zu.", 1, false, "TOP 7 Ein Antrag"),
		chunkTestPara("1. Begrüßung", 2, true, "1. Begrüßung"),
		chunkTestPara("Alle sind da.", 2, false, "1. Begrüßung"),
	}
	got := BuildChunks(paras, 100, 0)
	if len(got) != 2 || got[0].Top != "TOP 7" || got[1].Top != "" {
		t.Errorf("chunks %#v", got)
	}
}

// FuzzTopLabel: topLabel never panics, and a label is built from the
// heading's own characters: "TOP " or "§ " and a number that occurs in the
// heading, or a part letter or Roman numeral the heading starts with.
func FuzzTopLabel(f *testing.F) {
	for _, s := range []string{"TOP 7 Ein Antrag", "TOP N2 Honorarprofessur", "N1. Antrag", "§ 12 Modulabschluss",
		"§12a", "A. Allgemeine Regelungen", "II. Modulabschluss", "1. Begrüßung", "Bestätigt:",
		"§ 54 Absatz 6 ThürHG anwesend sein.", "TOP", "§", "  TOP 3a: Bericht", "\u00a7 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, heading string) {
		label := topLabel(heading)
		h := strings.TrimSpace(heading)
		switch {
		case label == "":
		case strings.HasPrefix(label, "TOP "):
			if !strings.Contains(h, strings.TrimPrefix(label, "TOP ")) {
				t.Errorf("topLabel(%q) = %q: number not in the heading", heading, label)
			}
		case strings.HasPrefix(label, "§ "):
			if !strings.HasPrefix(h, "§") || !strings.Contains(h, strings.TrimPrefix(label, "§ ")) {
				t.Errorf("topLabel(%q) = %q", heading, label)
			}
		default:
			if !strings.HasPrefix(h, label+".") {
				t.Errorf("topLabel(%q) = %q: not the heading's part label", heading, label)
			}
		}
	})
}

// Pages cover the ParentText window, what the answer is drawn from: 20
// one-page paragraphs under one heading, chunked small, give "1-20" for
// every chunk, on both chunking paths.
func TestBuildChunksPagesCoverParentText(t *testing.T) {
	paras := []Paragraph{chunkTestPara("Protokoll", 1, true, "Protokoll")}
	for p := 1; p <= 20; p++ {
		paras = append(paras, chunkTestPara(fmt.Sprintf("Seite %d: Der Rat berät über Punkt %d und beschließt.", p, p), p, false, "Protokoll"))
	}
	for _, words := range []bool{false, true} {
		cb := newChunkBuilder(paras, 80, 10)
		cb.forceWords = words
		cb.run(paras)
		if len(cb.chunks) < 10 {
			t.Fatalf("only %d chunks", len(cb.chunks))
		}
		for i, c := range cb.chunks {
			if c.Pages != "1-20" {
				t.Errorf("words path %v: chunk %d (%q) pages %q, want 1-20 (its ParentText's)", words, i, c.Text, c.Pages)
			}
		}
	}
	// A section longer than the ParentText window: Pages follow the
	// window, wider than the chunk's own pages but not the whole section.
	long := []Paragraph{chunkTestPara("Lang", 1, true, "Lang")}
	for p := 1; p <= 200; p++ {
		long = append(long, chunkTestPara(strings.Repeat(fmt.Sprintf("Seite %d Text ", p), 6), p, false, "Lang"))
	}
	chunks := BuildChunks(long, 100, 0)
	mid := chunks[len(chunks)/2]
	var lo, hi int
	fmt.Sscanf(mid.Pages, "%d-%d", &lo, &hi)
	if lo <= 1 || hi >= 200 || hi-lo < 2 {
		t.Errorf("middle chunk pages %q: want a window around it, wider than its own page", mid.Pages)
	}
}

func TestBuildChunksSplitsAtBoundaries(t *testing.T) {
	// Paragraph ends are preferred, then sentence ends, then any word.
	paras := []Paragraph{
		chunkTestPara("Title", 1, true, "Title"),
		chunkTestPara("One two three four five six. Seven eight nine ten.", 1, false, "Title"),
		chunkTestPara("Eleven twelve thirteen fourteen fifteen sixteen seventeen.", 2, false, "Title"),
	}
	got := BuildChunks(paras, 60, 0)
	var texts []string
	for _, c := range got {
		texts = append(texts, c.Text)
	}
	want := []string{
		"Title\nOne two three four five six. Seven eight nine ten.",
		"Eleven twelve thirteen fourteen fifteen sixteen seventeen.",
	}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("got %q\nwant %q", texts, want)
	}
	// Pages are those of the ParentText window (here the whole section).
	if got[0].Pages != "1-2" || got[1].Pages != "1-2" {
		t.Errorf("pages %q %q, want the ParentText window's 1-2", got[0].Pages, got[1].Pages)
	}
	// Sentence end inside a long paragraph.
	got = BuildChunks([]Paragraph{chunkTestPara("Aaa bbb ccc ddd. Eee fff ggg hhh iii jjj kkk lll mmm.", 0, false, "")}, 30, 0)
	if got[0].Text != "Aaa bbb ccc ddd." {
		t.Errorf("sentence boundary: %q", got[0].Text)
	}
}

func TestBuildChunksHeadingStaysWithText(t *testing.T) {
	// The heading plus the first paragraph do not fit, but the chunk must
	// not end right after the heading.
	body := strings.Repeat("word ", 30) // 150 runes
	got := BuildChunks([]Paragraph{
		chunkTestPara("A fairly long heading line", 1, true, "A fairly long heading line"),
		chunkTestPara(body, 1, false, "A fairly long heading line"),
	}, 60, 10)
	if !strings.HasPrefix(got[0].Text, "A fairly long heading line\nword") {
		t.Errorf("first chunk %q", got[0].Text)
	}
	for _, c := range got {
		if strings.HasSuffix(c.Text, "heading line") {
			t.Errorf("chunk ends with the heading: %q", c.Text)
		}
	}
}

func TestBuildChunksOverlap(t *testing.T) {
	var words []string
	for i := range 200 {
		words = append(words, fmt.Sprintf("w%03d", i))
	}
	got := BuildChunks([]Paragraph{chunkTestPara(strings.Join(words, " "), 0, false, "")}, 50, 15)
	for i := 1; i < len(got); i++ {
		prev, cur := strings.Fields(got[i-1].Text), strings.Fields(got[i].Text)
		// The first words of cur are the last words of prev, at most 15 runes.
		overlap := ""
		for n := min(len(cur), len(prev)); n > 0; n-- {
			if strings.Join(prev[len(prev)-n:], " ") == strings.Join(cur[:n], " ") {
				overlap = strings.Join(cur[:n], " ")
				break
			}
		}
		if overlap == "" || utf8.RuneCountInString(overlap) > 15 {
			t.Fatalf("chunk %d overlap %q (prev %q, cur %q)", i, overlap, got[i-1].Text, got[i].Text)
		}
	}
}

func TestBuildChunksParentText(t *testing.T) {
	// A section much longer than the window: ParentText is up to
	// max(2*maxSize, 3000) runes around the chunk, inside the section.
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "s%04d ", i)
	}
	long := sb.String() // 12,000 runes
	// The second section is short, but not so short (under maxSize/6) that
	// it is merged into the first.
	short := strings.TrimSpace(strings.Repeat("short body ", 40))
	paras := []Paragraph{
		chunkTestPara("First", 1, true, "First"),
		chunkTestPara(long, 1, false, "First"),
		chunkTestPara("Second", 2, true, "Second"),
		chunkTestPara(short, 2, false, "Second"),
	}
	for _, maxSize := range []int{200, 2000} {
		window := max(2*maxSize, 3000)
		chunks := BuildChunks(paras, maxSize, maxSize/10)
		for i, c := range chunks {
			if !strings.Contains(c.ParentText, c.Text) {
				t.Fatalf("max %d chunk %d: ParentText does not contain Text", maxSize, i)
			}
			n := utf8.RuneCountInString(c.ParentText)
			if c.Section == "First" {
				if n > window || n < window-20 {
					t.Errorf("max %d chunk %d: ParentText of %d runes, want about %d", maxSize, i, n, window)
				}
				if strings.Contains(c.ParentText, "Second") {
					t.Errorf("ParentText crosses into the next section")
				}
			} else if c.ParentText != "Second\n"+short {
				t.Errorf("short section ParentText %q", c.ParentText)
			}
		}
		// A chunk in the middle is centred: room on both sides.
		mid := chunks[len(chunks)/2]
		at := strings.Index(mid.ParentText, mid.Text)
		after := len(mid.ParentText) - at - len(mid.Text)
		if room := (window-len(mid.Text))/2 - 20; at < room || after < room {
			t.Errorf("max %d: middle chunk not centred (%d before, %d after)", maxSize, at, after)
		}
		// The first chunk starts the window at the section start, heading
		// included, and uses the room after it.
		if first := chunks[0]; !strings.HasPrefix(first.ParentText, "First\ns0000") {
			t.Errorf("first ParentText starts %q", first.ParentText[:20])
		}
	}
}

func TestBuildChunksDegenerate(t *testing.T) {
	if got := BuildChunks(nil, 100, 10); got != nil {
		t.Errorf("nil input: %v", got)
	}
	if got := BuildChunks([]Paragraph{{Text: " \n\t"}, {Text: ""}}, 100, 10); got != nil {
		t.Errorf("blank input: %v", got)
	}
	paras := []Paragraph{chunkTestPara("H", 1, true, "H"), chunkTestPara(strings.Repeat("abc ", 1000), 1, false, "H")}
	for _, maxSize := range []int{0, -5} {
		got := BuildChunks(paras, maxSize, 10)
		if len(got) != 1 || utf8.RuneCountInString(got[0].Text) != 4001 {
			t.Errorf("maxSize %d: want one chunk per section, got %d", maxSize, len(got))
		}
	}
	// overlap >= maxSize, negative overlap: clamped, terminates.
	for _, overlap := range []int{-1, 10, 11, 1000} {
		got := BuildChunks(paras, 10, overlap)
		if len(got) == 0 || len(got) > 1000 {
			t.Errorf("overlap %d: %d chunks", overlap, len(got))
		}
	}
	// maxSize 1: every rune its own chunk for a long word.
	got := BuildChunks([]Paragraph{{Text: "héllo"}}, 1, 0)
	if len(got) != 5 || got[1].Text != "é" {
		t.Errorf("maxSize 1: %q", got)
	}
	// A word longer than maxSize is cut into maxSize pieces; short words
	// around it stay whole.
	got = BuildChunks([]Paragraph{{Text: "ab " + strings.Repeat("x", 25) + " cd"}}, 10, 3)
	var texts []string
	for _, c := range got {
		texts = append(texts, c.Text)
	}
	want := []string{"ab", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx cd"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("long word: got %q, want %q", texts, want)
	}
}

func TestBuildChunksDeterministic(t *testing.T) {
	paras := chunkRandomParas(rand.New(rand.NewPCG(7, 7)), 300)
	a, b := BuildChunks(paras, 300, 60), BuildChunks(paras, 300, 60)
	if !reflect.DeepEqual(a, b) {
		t.Error("same input, different chunks")
	}
}

// chunkRandomParas returns n random paragraphs (words of 1-14 letters, now
// and then a word longer than any chunk, non-ASCII letters, headings).
func chunkRandomParas(r *rand.Rand, n int) []Paragraph {
	return chunkRandomParasFrom(r, n, []rune("abcdefghijklmnopqrstuvwxyzéßжλ中"), true)
}

// chunkRandomParasFrom is chunkRandomParas with the given letters, and
// with or without over-long words and odd whitespace.
func chunkRandomParasFrom(r *rand.Rand, n int, letters []rune, odd bool) []Paragraph {
	var paras []Paragraph
	crumb := ""
	for i := range n {
		if r.IntN(6) == 0 {
			crumb = fmt.Sprintf("H%d", i)
			paras = append(paras, Paragraph{Text: crumb, Heading: true, Breadcrumb: crumb, PageNum: i/10 + 1})
			continue
		}
		var words []string
		for range r.IntN(60) {
			l := 1 + r.IntN(14)
			if odd && r.IntN(80) == 0 {
				l = 50 + r.IntN(400)
			}
			w := make([]rune, l)
			for k := range w {
				w[k] = letters[r.IntN(len(letters))]
			}
			if r.IntN(8) == 0 {
				w = append(w, '.')
			}
			words = append(words, string(w))
		}
		sep := " "
		if odd && r.IntN(4) == 0 {
			sep = " \u00a0\t "
		}
		paras = append(paras, Paragraph{Text: strings.Join(words, sep), Breadcrumb: crumb, PageNum: i/10 + 1})
	}
	return paras
}

func TestBuildChunksProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 400 {
		paras := chunkRandomParas(r, 1+r.IntN(40))
		if iter%2 == 1 { // plain ASCII: the fast path
			paras = chunkRandomParasFrom(r, 1+r.IntN(40), []rune("abcdefghijklmnopqrstuvwxyz"), false)
		}
		maxSize := 1 + r.IntN(300)
		overlap := r.IntN(maxSize + 50)
		chunks := BuildChunks(paras, maxSize, overlap)

		// The input's words, a word longer than maxSize as its pieces of
		// maxSize runes.
		var input []string
		for _, p := range paras {
			for _, w := range strings.Fields(NormalizeSpaces(p.Text)) {
				rs := []rune(w)
				for len(rs) > maxSize {
					input = append(input, string(rs[:maxSize]))
					rs = rs[maxSize:]
				}
				input = append(input, string(rs))
			}
		}
		// Each chunk is a run of input words starting after the previous
		// chunk's start and no later than its end: every word is covered,
		// in order.
		pos, end := 0, 0
		for ci, c := range chunks {
			if n := utf8.RuneCountInString(c.Text); n > maxSize || n == 0 {
				t.Fatalf("iter %d chunk %d: %d runes, max %d", iter, ci, n, maxSize)
			}
			if !strings.Contains(c.ParentText, c.Text) {
				t.Fatalf("iter %d chunk %d: ParentText misses Text", iter, ci)
			}
			words := strings.Fields(c.Text)
			start := -1
			for s := end; s >= pos && s >= 0; s-- {
				if s+len(words) <= len(input) && reflect.DeepEqual(input[s:s+len(words)], words) && (ci == 0 || s > pos) {
					start = s
					break
				}
			}
			if start < 0 || (ci == 0 && start != 0) {
				t.Fatalf("iter %d chunk %d (max %d): %q is not the continuation of the input at %d..%d", iter, ci, maxSize, c.Text, pos, end)
			}
			// A section's short last chunk may start earlier (see
			// sectionWithTail): its overlap is longer, it stays short.
			extended := utf8.RuneCountInString(c.Text) <= maxSize/chunkMinFraction+chunkLongestWord(words)
			if start < end && !extended {
				ov := strings.Join(input[start:end], " ")
				if utf8.RuneCountInString(ov) > overlap && overlap >= 0 {
					t.Fatalf("iter %d chunk %d: overlap %q longer than %d", iter, ci, ov, overlap)
				}
			}
			if ci > 0 && start+len(words) <= end && start >= pos {
				t.Fatalf("iter %d chunk %d: %q brings no new word", iter, ci, c.Text)
			}
			pos, end = start, start+len(words)
		}
		if end != len(input) {
			t.Fatalf("iter %d: chunks cover %d of %d words", iter, end, len(input))
		}
	}
}

// chunkBenchCorpus returns about size bytes of real prose as paragraphs:
// the Go specification and memory model from the Go installation running
// the benchmark (doc/*.html in GOROOT), tags stripped, h2/h3 as headings,
// repeated with running page numbers until size is reached.
func chunkBenchCorpus(b *testing.B, size int) []Paragraph {
	b.Helper()
	var base []Paragraph
	tag := regexp.MustCompile(`<[^>]*>`)
	for _, name := range []string{"go_spec.html", "go_mem.html"} {
		data, err := os.ReadFile(filepath.Join(build.Default.GOROOT, "doc", name))
		if err != nil {
			b.Skipf("benchmark corpus: %v (needs GOROOT/doc from the Go installation)", err)
		}
		top, sub := strings.TrimSuffix(name, ".html"), ""
		for _, block := range regexp.MustCompile(`\n\s*\n|<p>|</p>|<pre>|</pre>`).Split(string(data), -1) {
			heading := strings.Contains(block, "<h2") || strings.Contains(block, "<h3")
			text := NormalizeSpaces(html.UnescapeString(tag.ReplaceAllString(block, " ")))
			if text == "" {
				continue
			}
			crumb := top
			if heading {
				sub = text
			}
			if sub != "" {
				crumb += " > " + sub
			}
			base = append(base, Paragraph{Text: text, Heading: heading, Breadcrumb: crumb})
		}
	}
	var paras []Paragraph
	n := 0
	for n < size {
		for _, p := range base {
			p.PageNum = len(paras)/25 + 1
			paras = append(paras, p)
			n += len(p.Text)
		}
	}
	return paras
}

func BenchmarkBuildChunks(b *testing.B) {
	paras := chunkBenchCorpus(b, 4<<20)
	var bytes int64
	for _, p := range paras {
		bytes += int64(len(p.Text))
	}
	// Baseline for the ratio: a bare paragraph packer (whole paragraphs up
	// to max runes, joined with newlines; no words, overlap, sections,
	// pages or ParentText).
	b.Run("baseline=packer", func(b *testing.B) {
		b.SetBytes(bytes)
		b.ReportAllocs()
		var chunks int
		for b.Loop() {
			var out []string
			var cur []string
			size := 0
			for _, p := range paras {
				n := utf8.RuneCountInString(p.Text)
				if size+n > 1000 && len(cur) > 0 {
					out = append(out, strings.Join(cur, "\n"))
					cur, size = cur[:0], 0
				}
				cur = append(cur, p.Text)
				size += n + 1
			}
			out = append(out, strings.Join(cur, "\n"))
			chunks = len(out)
		}
		b.ReportMetric(float64(chunks), "chunks/op")
	})
	for _, sz := range []struct{ max, overlap int }{{300, 50}, {1000, 150}, {4000, 400}} {
		b.Run(fmt.Sprintf("max=%d", sz.max), func(b *testing.B) {
			b.SetBytes(bytes)
			b.ReportAllocs()
			var chunks int
			for b.Loop() {
				chunks = len(BuildChunks(paras, sz.max, sz.overlap))
			}
			b.ReportMetric(float64(chunks), "chunks/op")
		})
	}
}

func TestChunkPathsAgree(t *testing.T) {
	// Plain ASCII sections are chunked by scanning the text; all others
	// through a word array. On ASCII input both must give the same chunks.
	r := rand.New(rand.NewPCG(3, 4))
	ascii := []rune("abcdefghijklmnopqrstuvwxyz")
	fast := 0
	for iter := range 300 {
		paras := chunkRandomParasFrom(r, 1+r.IntN(60), ascii, false)
		maxSize := 5 + r.IntN(400)
		overlap := r.IntN(maxSize)
		if iter%10 == 0 {
			maxSize = 2000 + r.IntN(3000) // ParentText windows larger than 3000
		}
		a := newChunkBuilder(paras, maxSize, overlap)
		a.run(paras)
		b := newChunkBuilder(paras, maxSize, overlap)
		b.forceWords = true
		b.run(paras)
		if !reflect.DeepEqual(a.chunks, b.chunks) {
			for i := range min(len(a.chunks), len(b.chunks)) {
				if a.chunks[i] != b.chunks[i] {
					t.Fatalf("iter %d (max %d, overlap %d) chunk %d differs:\nascii %#v\nwords %#v", iter, maxSize, overlap, i, a.chunks[i], b.chunks[i])
				}
			}
			t.Fatalf("iter %d: %d chunks vs %d", iter, len(a.chunks), len(b.chunks))
		}
		if len(a.words) == 0 {
			fast++
		}
	}
	if fast < 100 {
		t.Errorf("the ASCII path ran on only %d inputs", fast)
	}
}

func FuzzBuildChunks(f *testing.F) {
	f.Add("# Title\nSome text. More text.\n\n## Sub\nBody \u00a0 words", 20, 5)
	f.Add("one\ntwo three four five six seven eight nine ten", 3, 1)
	f.Add(strings.Repeat("long", 100)+" x", 7, 100)
	f.Add("\u4e2d\u6587 \u200b mixed \xff bytes\n#\n# \n", 1, 0)
	f.Fuzz(func(t *testing.T, doc string, maxSize, overlap int) {
		maxSize %= 5000
		var paras []Paragraph
		crumb := ""
		for i, line := range strings.Split(doc, "\n") {
			p := Paragraph{Text: line, PageNum: i / 3, Breadcrumb: crumb}
			if h, ok := strings.CutPrefix(line, "#"); ok {
				crumb = NormalizeSpaces(h)
				p = Paragraph{Text: h, Heading: true, Breadcrumb: crumb, PageNum: i / 3}
			}
			paras = append(paras, p)
		}
		chunks := BuildChunks(paras, maxSize, overlap)
		var words int
		for _, p := range paras {
			words += len(strings.Fields(NormalizeSpaces(p.Text)))
		}
		if words > 0 && len(chunks) == 0 {
			t.Fatal("text but no chunks")
		}
		for _, c := range chunks {
			if maxSize > 0 && utf8.RuneCountInString(c.Text) > maxSize {
				t.Fatalf("chunk of %d runes, max %d", utf8.RuneCountInString(c.Text), maxSize)
			}
			if c.Text == "" || !strings.Contains(c.ParentText, c.Text) {
				t.Fatalf("bad chunk %#v", c)
			}
		}
	})
}

func TestChunkSimple(t *testing.T) {
	// chunkSimple against its definition, byte by byte.
	ref := func(t string, maxSize int) bool {
		if t == "" || t != NormalizeSpaces(t) {
			return false
		}
		for i := 0; i < len(t); i++ {
			if t[i] < ' ' || t[i] >= utf8.RuneSelf {
				return false
			}
		}
		for _, w := range strings.Split(t, " ") {
			if maxSize > 0 && len(w) > maxSize {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "b", "Z", "9", ".", "~", "\x7f", " ", " ", " ", "\t", "\n", "\x00", "\x1f", "é", "\u00a0", "\xff"}
	for iter := range 20000 {
		var sb strings.Builder
		n := r.IntN(40)
		for range n {
			if iter%3 == 0 && r.IntN(3) > 0 {
				sb.WriteString(alphabet[r.IntN(4)]) // mostly plain
			} else {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
		}
		s := sb.String()
		maxSize := r.IntN(12)
		if got, want := chunkSimple(s, maxSize), ref(s, maxSize); got != want {
			t.Fatalf("chunkSimple(%q, %d) = %v, want %v", s, maxSize, got, want)
		}
	}
	for _, c := range []struct {
		s    string
		max  int
		want bool
	}{
		{"abcdefgh ijklmnop", 8, true},
		{"abcdefgh ijklmnop", 7, false},
		{"abcdefg  hijklmnop", 0, false},
		{"abcdefg hijklmno pqrstuvw xyz", 8, true},
		{"abcdefgh" + " " + "ijklmnopq", 8, false},
		{"0123456 \x7f", 0, true},
	} {
		if got := chunkSimple(c.s, c.max); got != c.want {
			t.Errorf("chunkSimple(%q, %d) = %v", c.s, c.max, got)
		}
	}
}

// chunkLongestWord returns the length in runes of the longest of words.
func chunkLongestWord(words []string) int {
	n := 0
	for _, w := range words {
		n = max(n, utf8.RuneCountInString(w))
	}
	return n
}
