package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// mergeTestSection returns a heading and one paragraph of about n runes.
func mergeTestSection(heading, crumb string, n int) []Paragraph {
	words := strings.TrimSpace(strings.Repeat("word ", n/5))
	return []Paragraph{
		{Text: heading, Heading: true, Breadcrumb: crumb},
		{Text: words, Breadcrumb: crumb},
	}
}

func TestBuildChunksMergesSmallSiblings(t *testing.T) {
	// A reference page: a parameter list of a heading and a sentence each,
	// under one parent, after a long description.
	var paras []Paragraph
	paras = append(paras, mergeTestSection("EXECUTE", "EXECUTE", 900)...)
	paras = append(paras, mergeTestSection("Parameters", "EXECUTE > Parameters", 10)...)
	for _, p := range []string{"name", "parameter", "options"} {
		paras = append(paras, mergeTestSection(p, "EXECUTE > Parameters > "+p, 60)...)
	}
	paras = append(paras, mergeTestSection("Notes", "EXECUTE > Notes", 700)...)
	chunks := BuildChunks(paras, 1200, 150)
	var crumbs []string
	for _, c := range chunks {
		crumbs = append(crumbs, c.Breadcrumb)
		if n := utf8.RuneCountInString(c.Text); n < 200 {
			t.Errorf("chunk of %d runes: %q", n, c.Text)
		}
	}
	want := []string{"EXECUTE", "EXECUTE > Parameters", "EXECUTE > Notes"}
	if strings.Join(crumbs, "|") != strings.Join(want, "|") {
		t.Fatalf("breadcrumbs %q, want %q", crumbs, want)
	}
	// The parameters are one chunk named after their parent, the headings
	// lines of its text.
	if got := chunks[1].Text; !strings.HasPrefix(got, "Parameters\nword") || !strings.Contains(got, "\nname\nword") || !strings.Contains(got, "\noptions\nword") {
		t.Errorf("merged chunk %q", got)
	}
	if chunks[1].Section != "Parameters" || chunks[1].Top != topLabel("EXECUTE") {
		t.Errorf("merged chunk section %q top %q", chunks[1].Section, chunks[1].Top)
	}
	// The headings the breadcrumb no longer names are the chunk's
	// Headings (keyword ranking weighs them like the breadcrumb); the
	// run's own heading is named by the breadcrumb, and unmerged chunks
	// have none.
	if got := chunks[1].Headings; got != "name\nparameter\noptions" {
		t.Errorf("merged chunk headings %q", got)
	}
	if chunks[0].Headings != "" || chunks[2].Headings != "" {
		t.Errorf("unmerged chunks with headings: %q, %q", chunks[0].Headings, chunks[2].Headings)
	}
	// The caller's paragraphs are unchanged.
	if !paras[4].Heading || paras[4].Breadcrumb != "EXECUTE > Parameters > name" {
		t.Errorf("input modified: %+v", paras[4])
	}
}

func TestBuildChunksMergeKeepsLargeSections(t *testing.T) {
	var paras []Paragraph
	for _, h := range []string{"A", "B", "C"} {
		paras = append(paras, mergeTestSection(h, "Top > "+h, 500)...)
	}
	chunks := BuildChunks(paras, 1200, 150)
	if len(chunks) != 3 || chunks[1].Breadcrumb != "Top > B" {
		t.Fatalf("sections of 500 runes were merged: %d chunks, %+v", len(chunks), chunks)
	}
}

func TestBuildChunksMergeSiblingsWithoutParent(t *testing.T) {
	// Siblings whose parent section is elsewhere: the run is named after
	// the parent and starts with the first sibling's heading.
	var paras []Paragraph
	paras = append(paras, mergeTestSection("Intro", "Guide > Intro", 1000)...)
	paras = append(paras, mergeTestSection("Tip one", "Guide > Tips > Tip one", 80)...)
	paras = append(paras, mergeTestSection("Tip two", "Guide > Tips > Tip two", 80)...)
	paras = append(paras, mergeTestSection("Tip three", "Guide > Tips > Tip three", 80)...)
	chunks := BuildChunks(paras, 1200, 150)
	if len(chunks) != 2 {
		t.Fatalf("%d chunks: %+v", len(chunks), chunks)
	}
	if c := chunks[1]; c.Breadcrumb != "Guide > Tips" || !strings.HasPrefix(c.Text, "Tip one\n") || !strings.Contains(c.Text, "\nTip three\n") {
		t.Errorf("merged chunk: %+v", c)
	}
	// Its first heading too is one the breadcrumb does not name.
	if got := chunks[1].Headings; got != "Tip one\nTip two\nTip three" {
		t.Errorf("merged chunk headings %q", got)
	}
}

func TestBuildChunksShortDocument(t *testing.T) {
	// A whole document shorter than the minimum is one chunk.
	paras := []Paragraph{
		{Text: "Contact", Heading: true, Breadcrumb: "Contact"},
		{Text: "Call us.", Breadcrumb: "Contact"},
		{Text: "Address", Heading: true, Breadcrumb: "Contact > Address"},
		{Text: "Main street 1.", Breadcrumb: "Contact > Address"},
	}
	chunks := BuildChunks(paras, 1200, 150)
	if len(chunks) != 1 || chunks[0].Text != "Contact\nCall us.\nAddress\nMain street 1." || chunks[0].Breadcrumb != "Contact" || chunks[0].Headings != "Address" {
		t.Errorf("got %+v", chunks)
	}
	// A short last section that fits nowhere joins the one before.
	paras = append(mergeTestSection("Long", "Long", 1190), mergeTestSection("End", "End", 20)...)
	chunks = BuildChunks(paras, 1200, 150)
	for _, c := range chunks {
		if n := utf8.RuneCountInString(c.Text); n < 200 {
			t.Errorf("chunk of %d runes: %q", n, c.Text)
		}
	}
	// Their common breadcrumb is empty: the chunk is named after its
	// first heading.
	if last := chunks[len(chunks)-1]; !strings.HasSuffix(last.Text, "End\nword word word word") || last.Breadcrumb != "Long" || last.Headings != "End" {
		t.Errorf("last chunk %+v", last)
	}
	// Only the chunks holding the merged heading list it.
	for _, c := range chunks {
		if want := map[bool]string{true: "End"}[strings.Contains(c.Text, "\nEnd")]; c.Headings != want {
			t.Errorf("chunk %q has headings %q, want %q", c.Text, c.Headings, want)
		}
	}
}

func TestBuildChunksShortTail(t *testing.T) {
	// A section a little longer than a chunk: its last chunk starts early
	// enough to hold maxSize/6 runes, and reports the pages of both.
	words := strings.Fields(strings.Repeat("alpha beta gamma delta. ", 52)) // 1,248 runes
	paras := []Paragraph{
		{Text: "Section", Heading: true, Breadcrumb: "Section", PageNum: 1},
		{Text: strings.Join(words[:20], " "), Breadcrumb: "Section", PageNum: 1},
		{Text: strings.Join(words[20:], " "), Breadcrumb: "Section", PageNum: 2},
	}
	chunks := BuildChunks(paras, 1200, 50)
	if len(chunks) != 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	last := chunks[1]
	if n := utf8.RuneCountInString(last.Text); n < 200 || n > 230 {
		t.Errorf("tail of %d runes: %q", n, last.Text)
	}
	// It repeats more than the 50-rune overlap of the chunk before.
	if at := strings.LastIndex(chunks[0].Text, last.Text[:40]); at < 0 || len(chunks[0].Text)-at <= 50 {
		t.Errorf("tail starts at %d of the previous chunk's %d bytes", at, len(chunks[0].Text))
	}
	if !strings.HasSuffix(last.ParentText, last.Text) || last.Pages != "1-2" {
		t.Errorf("tail pages %q, text %q", last.Pages, last.Text)
	}
}

func TestBuildChunksMinimumSize(t *testing.T) {
	// Random documents: no chunk under maxSize/6 runes unless the whole
	// document is that short.
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		paras := chunkRandomParasFrom(r, 1+r.IntN(60), []rune("abcdefghijklmnopqrstuvwxyz"), false)
		maxSize := 120 + r.IntN(1500)
		total := 0
		for _, p := range paras {
			total += utf8.RuneCountInString(NormalizeSpaces(p.Text)) + 1
		}
		for i, c := range BuildChunks(paras, maxSize, maxSize/8) {
			if n := utf8.RuneCountInString(c.Text); n < maxSize/chunkMinFraction && total > maxSize/chunkMinFraction {
				t.Fatalf("iter %d (max %d) chunk %d: %d runes %q", iter, maxSize, i, n, c.Text)
			}
		}
	}
}

func TestChunkCommonCrumb(t *testing.T) {
	for _, c := range [][3]string{
		{"A > B", "A > B", "A > B"},
		{"A > B", "A > B > C", "A > B"},
		{"A > B > C", "A > D", "A"},
		{"A > Bc", "A > B", "A"},
		{"X", "Y", ""},
		{"", "A", ""},
	} {
		if got := chunkCommonCrumb(c[0], c[1]); got != c[2] {
			t.Errorf("chunkCommonCrumb(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestBuildChunksTailKeepsMergedHeadings(t *testing.T) {
	// A long section and two small ones merged into it, too long for one
	// chunk: the short last chunk (no overlap) is lengthened back over the
	// first small section, and lists both merged headings it now holds.
	var paras []Paragraph
	paras = append(paras, mergeTestSection("Long", "Page > Long", 1150)...)
	paras = append(paras, mergeTestSection("Alpha", "Page > Long > Alpha", 40)...)
	paras = append(paras, mergeTestSection("Beta", "Page > Long > Beta", 40)...)
	chunks := BuildChunks(paras, 1200, 0)
	if len(chunks) != 2 {
		t.Fatalf("%d chunks: %+v", len(chunks), chunks)
	}
	last := chunks[1]
	if !strings.Contains(last.Text, "\nAlpha\n") || !strings.Contains(last.Text, "\nBeta\n") {
		t.Fatalf("tail %q does not reach back over Alpha", last.Text)
	}
	if last.Headings != "Alpha\nBeta" || last.Breadcrumb != "Page > Long" {
		t.Errorf("tail breadcrumb %q, headings %q", last.Breadcrumb, last.Headings)
	}
}
