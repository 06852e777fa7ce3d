package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var pdfUpdateGolden = flag.Bool("update-pdf", false, "rewrite testdata/pdf/*.paragraphs.json from the current PDF extraction")

// pdfTextFixtures are the fixtures with a text layer and pdftotext golden
// text (testdata/pdf/<name>.pdftotext.txt).
var pdfTextFixtures = []string{"table", "two-column", "greek", "owner-only", "ghostscript", "bench-100"}

func pdfFixture(name string) string { return filepath.Join("testdata", "pdf", name+".pdf") }

// pdfHyphenBreak matches a word broken with a hyphen at a line end.
var pdfHyphenBreak = regexp.MustCompile(`(\pL)-\n(\p{Ll})|(\p{Lu})-\n(\p{Lu})`)

// pdfWordScores compares our words with the reference (pdftotext) words:
// the word-level F1 over word multisets, and the share of our words that
// are two adjacent reference words glued together.
func pdfWordScores(ours, ref []string) (f1, glued float64, gluedWords []string) {
	count := map[string]int{}
	known := map[string]bool{}
	for _, w := range ref {
		count[w]++
		known[w] = true
	}
	pairs := map[string]bool{}
	for i := 1; i < len(ref); i++ {
		pairs[ref[i-1]+ref[i]] = true
	}
	match := 0
	for _, w := range ours {
		if count[w] > 0 {
			count[w]--
			match++
		}
		if !known[w] && pairs[w] {
			gluedWords = append(gluedWords, w)
		}
	}
	if len(ours) == 0 || len(ref) == 0 {
		return 0, 0, nil
	}
	p := float64(match) / float64(len(ours))
	r := float64(match) / float64(len(ref))
	if p+r > 0 {
		f1 = 2 * p * r / (p + r)
	}
	return f1, float64(len(gluedWords)) / float64(len(ours)), gluedWords
}

// TestPDFFidelityAgainstPdftotext checks every text fixture against the
// committed pdftotext output: word F1 >= 0.97 and at most 0.5% glued words.
// Hyphenated line breaks in the reference are joined the way we join them.
func TestPDFFidelityAgainstPdftotext(t *testing.T) {
	for _, name := range pdfTextFixtures {
		t.Run(name, func(t *testing.T) {
			paras, err := ExtractParagraphs(pdfFixture(name))
			if err != nil {
				t.Fatal(err)
			}
			gold, err := os.ReadFile(filepath.Join("testdata", "pdf", name+".pdftotext.txt"))
			if err != nil {
				t.Fatal(err)
			}
			ref := strings.Fields(pdfHyphenBreak.ReplaceAllString(string(gold), "$1$2$3$4"))
			var ours []string
			for _, p := range paras {
				ours = append(ours, strings.Fields(p.Text)...)
			}
			f1, glued, gluedWords := pdfWordScores(ours, ref)
			t.Logf("%s: %d words (pdftotext %d), F1 %.4f, glued %.3f%%", name, len(ours), len(ref), f1, 100*glued)
			if f1 < 0.97 {
				t.Errorf("word F1 = %.4f, want >= 0.97", f1)
			}
			if glued > 0.005 {
				t.Errorf("glued words = %.3f%% (%q), want <= 0.5%%", 100*glued, gluedWords)
			}
		})
	}
}

func TestPDFWordScoresCatchGluedAndMissingWords(t *testing.T) {
	ref := strings.Fields("the quick brown fox jumps")
	f1, glued, words := pdfWordScores(strings.Fields("the quickbrown fox jumps"), ref)
	if glued == 0 || len(words) != 1 || words[0] != "quickbrown" {
		t.Errorf("glued = %v %q, want quickbrown", glued, words)
	}
	if f1 >= 0.97 {
		t.Errorf("f1 = %v for a damaged text, want < 0.97", f1)
	}
	if f1, _, _ := pdfWordScores(ref, ref); f1 != 1 {
		t.Errorf("f1 of identical texts = %v", f1)
	}
}

// TestPDFGoldenParagraphs compares the paragraphs of each small text
// fixture with testdata/pdf/<name>.paragraphs.json (-update-pdf rewrites).
func TestPDFGoldenParagraphs(t *testing.T) {
	for _, name := range []string{"table", "two-column", "greek", "owner-only", "ghostscript"} {
		t.Run(name, func(t *testing.T) {
			paras, err := ExtractParagraphs(pdfFixture(name))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(paras); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			path := filepath.Join("testdata", "pdf", name+".paragraphs.json")
			if *pdfUpdateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestPDFGoldenParagraphs -update-pdf . to create it)", err)
			}
			if string(got) != string(want) {
				var wantParas []Paragraph
				_ = json.Unmarshal(want, &wantParas)
				for i := 0; i < max(len(paras), len(wantParas)); i++ {
					var g, w Paragraph
					if i < len(paras) {
						g = paras[i]
					}
					if i < len(wantParas) {
						w = wantParas[i]
					}
					if g != w {
						t.Errorf("paragraph %d:\n got  %+v\n want %+v", i, g, w)
					}
				}
			}
		})
	}
}

func TestPDFHeadingsBreadcrumbsAndPages(t *testing.T) {
	paras, err := ExtractParagraphs(pdfFixture("table"))
	if err != nil {
		t.Fatal(err)
	}
	find := func(prefix string) Paragraph {
		t.Helper()
		for _, p := range paras {
			if strings.HasPrefix(p.Text, prefix) {
				return p
			}
		}
		t.Fatalf("no paragraph starts with %q", prefix)
		return Paragraph{}
	}
	title := find("Library Loans Report")
	if !title.Heading || title.Breadcrumb != "Library Loans Report" || title.PageNum != 1 {
		t.Errorf("title = %+v", title)
	}
	sub := find("Loans by branch")
	if !sub.Heading || sub.Breadcrumb != "Library Loans Report > Summary > Loans by branch" {
		t.Errorf("subheading = %+v", sub)
	}
	row := find("Central Library")
	if row.Heading || row.Text != "Central Library 48,210 9,874 61 percent" || row.Breadcrumb != sub.Breadcrumb {
		t.Errorf("table row = %+v", row)
	}
	header := find("Branch Loans")
	if header.Heading {
		t.Errorf("bold table header row taken for a heading: %+v", header)
	}
	rec := find("Recommendations")
	if !rec.Heading || rec.Breadcrumb != "Library Loans Report > Recommendations" {
		t.Errorf("second section heading = %+v", rec)
	}
	next := find("Next steps")
	if !next.Heading || next.PageNum != 2 || next.Breadcrumb != "Library Loans Report > Recommendations > Next steps" {
		t.Errorf("heading on page 2 = %+v", next)
	}
	for _, p := range paras {
		if p.Text == "Regional Library Network" || strings.HasPrefix(p.Text, "Page ") || p.PageNum < 1 || p.PageNum > 2 {
			t.Errorf("running header, footer or bad page number kept: %+v", p)
		}
	}
}

func TestPDFTwoColumnsReadColumnByColumn(t *testing.T) {
	paras, err := ExtractParagraphs(pdfFixture("two-column"))
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	var all []string
	for _, p := range paras {
		if p.Heading {
			headings = append(headings, p.Text)
		}
		all = append(all, p.Text)
	}
	want := []string{"Town Bees and Country Bees", "Background", "Method", "Results", "Weather", "Discussion", "Acknowledgements"}
	if strings.Join(headings, "|") != strings.Join(want, "|") {
		t.Errorf("headings = %q, want %q", headings, want)
	}
	text := strings.Join(all, "\n")
	// These sentences cross a line, a column or a page break in the
	// layout; reading line by line across both columns would tear them.
	for _, s := range []string{
		"Garden hives gained weight in nine of the twelve months, farm hives in only six.",
		"Weights were corrected for the honey that volunteers removed, which they recorded in the same notebook.",
		"Still, the pattern matches what beekeepers describe and what is known about flowering times.",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("sentence torn apart: %q", s)
		}
	}
	for _, p := range paras {
		if strings.HasPrefix(p.Text, "Still,") || strings.HasPrefix(p.Text, "the twelve months") {
			t.Errorf("paragraph split at a column or page break: %q", p.Text)
		}
	}
}

func TestPDFErrorsAreDistinct(t *testing.T) {
	dir := t.TempDir()
	notPDF := filepath.Join(dir, "notes.pdf")
	if err := os.WriteFile(notPDF, []byte("<html>not a pdf</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	sentinels := []error{ErrPDFEncrypted, ErrPDFNoText, ErrPDFMalformed}
	for _, tc := range []struct {
		path string
		want error
	}{
		{pdfFixture("encrypted"), ErrPDFEncrypted},
		{pdfFixture("encrypted-aes256"), ErrPDFEncrypted},
		{pdfFixture("image-only"), ErrPDFNoText},
		{pdfFixture("truncated"), ErrPDFMalformed},
		{notPDF, ErrPDFMalformed},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			paras, err := ExtractParagraphs(tc.path)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if paras != nil {
				t.Errorf("paragraphs returned with an error: %d", len(paras))
			}
			for _, s := range sentinels {
				if s != tc.want && errors.Is(err, s) {
					t.Errorf("err %v also matches %v", err, s)
				}
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	if _, err := ExtractParagraphs(filepath.Join(dir, "missing.pdf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}

func TestPDFOwnerPasswordOnlyAndUpperCaseExtension(t *testing.T) {
	data, err := os.ReadFile(pdfFixture("owner-only"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "OWNER.PDF")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	paras, err := ExtractParagraphs(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(paras) < 10 || paras[0].Text != "Town Bees and Country Bees" {
		t.Errorf("owner-password PDF not read: %d paragraphs, first %+v", len(paras), paras[0])
	}
}

// pdfTestTexts returns the paragraph texts of a synthetic PDF.
func pdfTestTexts(t *testing.T, data []byte) []string {
	t.Helper()
	paras, err := extractPDFBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paras {
		out = append(out, p.Text)
	}
	return out
}

func TestPDFWordSpacesFromGlyphGaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		gap  float64 // em between words
		want string
	}{
		{"normal space", 0.25, "words placed one by one"},
		{"narrow space", 0.17, "words placed one by one"},
		{"kerning only", 0.05, "wordsplacedonebyone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newPDFTestDoc()
			d.page(pdfTestWords("F1", 12, 72, 700, tc.gap, "words placed one by one"))
			got := pdfTestTexts(t, d.bytes())
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPDFTJKerningAndSpacing(t *testing.T) {
	d := newPDFTestDoc()
	// Small negative/positive kerning inside words, a large offset (-300 =
	// 0.3 em) between them, as many producers write justified text.
	d.page("BT /F1 10 Tf 72 700 Td [(Ke) 20 (rned) -300 (te) -10 (xt) -300 (here)] TJ ET\n")
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != "Kerned text here" {
		t.Errorf("got %q", got)
	}
}

func TestPDFHyphenatedLineBreakJoined(t *testing.T) {
	d := newPDFTestDoc()
	d.page(pdfTestLine("F1", 10, 72, 700, "This is an exam-") +
		pdfTestLine("F1", 10, 72, 688, "ple of a well-known hyphen-") +
		pdfTestLine("F1", 10, 72, 676, "Ated name, an ELE-") +
		pdfTestLine("F1", 10, 72, 664, "MENT."))
	want := "This is an example of a well-known hyphen-Ated name, an ELEMENT."
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPDFParagraphsSplitAtVerticalGaps(t *testing.T) {
	d := newPDFTestDoc()
	var c strings.Builder
	y := 700.0
	for p := 0; p < 3; p++ {
		for l := 0; l < 3; l++ {
			c.WriteString(pdfTestLine("F1", 10, 72, y, fmt.Sprintf("paragraph %d line %d continues here", p, l)))
			y -= 12
		}
		y -= 10 // paragraph spacing
	}
	d.page(c.String())
	got := pdfTestTexts(t, d.bytes())
	if len(got) != 3 || !strings.HasPrefix(got[2], "paragraph 2 line 0") || !strings.HasSuffix(got[2], "line 2 continues here") {
		t.Errorf("got %d paragraphs: %q", len(got), got)
	}
}

func TestPDFTeXWordSpaceGlyph(t *testing.T) {
	d := newPDFTestDoc()
	// pdfTeX (\pdfinterwordspaceon) draws an invisible glyph from its
	// "dummy-space" font between words; its code decodes as Ω (OT1 0x0A).
	d.addFont("FS", `<< /Type /Font /Subtype /Type1 /BaseFont /dummy-space /FirstChar 10 /LastChar 10 /Widths [0] /Encoding << /Differences [10 /Omega] >> >>`)
	d.page("BT /F1 10 Tf 72 700 Td (tight) Tj /FS 10 Tf <0a> Tj /F1 10 Tf 0.5 0 Td (words) Tj /FS 10 Tf <0a> Tj /F1 10 Tf 0.5 0 Td (here) Tj ET\n")
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != "tight words here" {
		t.Errorf("got %q", got)
	}
}

func TestPDFType0FontWithToUnicode(t *testing.T) {
	d := newPDFTestDoc()
	cmap := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" +
		"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" +
		"2 beginbfchar <0001> <0391> <0002> <03B2> endbfchar\n" +
		"1 beginbfrange <0010> <0012> <03B3> endbfrange\n" +
		"endcmap CMapName currentdict /CMap defineresource pop end end"
	tu := d.addStream("", cmap)
	desc := d.add(`<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Greek /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 1000 /W [1 [600 550] 16 18 500] >>`)
	d.addFont("G", fmt.Sprintf(`<< /Type /Font /Subtype /Type0 /BaseFont /Greek /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>`, desc, tu))
	// Α β then a gap of 0.3 em, then γ δ ε positioned by widths alone.
	d.page("BT /G 10 Tf 72 700 Td <00010002> Tj 14.5 0 Td <001000110012> Tj ET\n")
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != "Αβ γδε" {
		t.Errorf("got %q, want %q", got, "Αβ γδε")
	}
}

func TestPDFRotatedPage(t *testing.T) {
	d := newPDFTestDoc()
	// Text turned 90 degrees counter-clockwise: it runs upwards and the
	// next line lies to the right.
	d.page("BT /F1 10 Tf 0 1 -1 0 300 100 Tm (first line of turned text) Tj ET\n" +
		"BT /F1 10 Tf 0 1 -1 0 312 100 Tm (second line follows it) Tj ET\n")
	got := pdfTestTexts(t, d.bytes())
	if len(got) != 1 || got[0] != "first line of turned text second line follows it" {
		t.Errorf("got %q", got)
	}
}

func TestPDFFormXObjectAndRepeatedFurniture(t *testing.T) {
	d := newPDFTestDoc()
	form := d.addStream("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Matrix [1 0 0 1 0 0]",
		pdfTestLine("F1", 8, 72, 810, "Company Confidential"))
	_ = form
	for p := 1; p <= 3; p++ {
		body := pdfTestLine("F1", 10, 72, 500, fmt.Sprintf("Body text of page %d stays in the output.", p))
		d.page("/X1 Do\n" + body + pdfTestLine("F1", 9, 290, 40, fmt.Sprintf("%d", p)))
	}
	data := d.bytes()
	// Hook the form into the shared resources.
	data = []byte(strings.Replace(string(data), "/Font <<", fmt.Sprintf("/XObject << /X1 %d 0 R >> /Font <<", form), 1))
	data = pdfTestFixXref(t, data)
	got := pdfTestTexts(t, data)
	if len(got) != 3 || got[0] != "Body text of page 1 stays in the output." {
		t.Errorf("got %q", got)
	}
}

// pdfTestFixXref rewrites the xref table of data after an edit that moved
// objects.
func pdfTestFixXref(t *testing.T, data []byte) []byte {
	t.Helper()
	s := string(data)
	re := regexp.MustCompile(`(?m)^(\d+) 0 obj`)
	xref := strings.Index(s, "\nxref\n") + 1
	var b strings.Builder
	b.WriteString(s[:xref])
	locs := re.FindAllStringSubmatchIndex(s[:xref], -1)
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(locs)+1)
	for _, l := range locs {
		fmt.Fprintf(&b, "%010d 00000 n \n", l[0])
	}
	trailer := strings.Index(s, "trailer")
	rest := s[trailer:]
	rest = regexp.MustCompile(`startxref\n\d+`).ReplaceAllString(rest, fmt.Sprintf("startxref\n%d", xref))
	b.WriteString(rest)
	return []byte(b.String())
}

func TestPDFTwoColumnSynthetic(t *testing.T) {
	d := newPDFTestDoc()
	var c strings.Builder
	c.WriteString(pdfTestLine("F2", 16, 72, 760, "A Two Column Title"))
	for i := 0; i < 6; i++ {
		y := 720 - 12*float64(i)
		c.WriteString(pdfTestLine("F1", 10, 72, y, fmt.Sprintf("left column line %d of text here.", i)))
		c.WriteString(pdfTestLine("F1", 10, 320, y, fmt.Sprintf("right column line %d of text too.", i)))
	}
	d.page(c.String())
	paras, err := extractPDFBytes(d.bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(paras) != 3 || !paras[0].Heading || paras[0].Text != "A Two Column Title" ||
		!strings.HasPrefix(paras[1].Text, "left column line 0") || !strings.HasSuffix(paras[1].Text, "line 5 of text here.") ||
		!strings.HasPrefix(paras[2].Text, "right column line 0") || paras[2].Breadcrumb != "A Two Column Title" {
		t.Errorf("got %+v", paras)
	}
}

func TestPDFBorderedTableIsReadRowByRow(t *testing.T) {
	d := newPDFTestDoc()
	var c strings.Builder
	for i := 0; i < 5; i++ {
		y := 700 - 20*float64(i)
		fmt.Fprintf(&c, "0.5 w 60 %g m 540 %g l S\n", y+14, y+14)
		c.WriteString(pdfTestLine("F1", 10, 72, y, fmt.Sprintf("row %d first cell text is long enough", i)))
		c.WriteString(pdfTestLine("F1", 10, 320, y, fmt.Sprintf("row %d second cell is long as well", i)))
	}
	c.WriteString("60 606 m 540 606 l S\n")
	d.page(c.String())
	got := pdfTestTexts(t, d.bytes())
	if len(got) != 5 || got[1] != "row 1 first cell text is long enough row 1 second cell is long as well" {
		t.Errorf("got %q", got)
	}
}

func TestPDFMalformedInputsNeverPanic(t *testing.T) {
	good := newPDFTestDoc()
	good.page(pdfTestLine("F1", 10, 72, 700, "Some text."))
	data := good.bytes()
	cases := map[string][]byte{
		"empty":           nil,
		"header only":     []byte("%PDF-1.4\n"),
		"no xref":         []byte("%PDF-1.4\n1 0 obj << >> endobj\n%%EOF\n"),
		"cut in half":     data[:len(data)/2],
		"bad startxref":   []byte(strings.Replace(string(data), "startxref\n", "startxref\n9", 1)),
		"garbage content": []byte(strings.Replace(string(data), "(Some text.) Tj", "(Some text.) Tj ] >> ) ( [ << BI /W 4 ID \x00\x01 EI Q Q Q cm Tf TJ", 1)),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			paras, err := extractPDFBytes(in)
			if err == nil && len(paras) == 0 {
				t.Error("no error and no paragraphs")
			}
			if err != nil && !errors.Is(err, ErrPDFMalformed) && !errors.Is(err, ErrPDFNoText) {
				t.Errorf("err = %v, want a PDF sentinel", err)
			}
		})
	}
}

// FuzzExtractPDF feeds arbitrary bytes to the PDF reader: it must never
// panic, and any error must wrap one of the PDF sentinels (or
// ErrDocumentTooLarge, for a page past its stream or character budget).
func FuzzExtractPDF(f *testing.F) {
	// Small synthetic documents keep each execution fast; more seeds live
	// in testdata/fuzz/FuzzExtractPDF.
	d := newPDFTestDoc()
	d.page(pdfTestLine("F2", 14, 72, 760, "Heading") + pdfTestWords("F1", 10, 72, 700, 0.3, "spaced words here") +
		"BT /F1 10 Tf 72 680 Td [(Ke) 20 (rned) -300 (text)] TJ ET 0.5 w 60 670 m 540 670 l S 10 10 100 1 re f\n")
	d.page("q 0 1 -1 0 300 100 cm BT /F1 10 Tf 0 0 Td (turned) Tj T* (text) ' ET Q /X1 Do BI /W 2 /H 2 ID \x00\x01 EI")
	f.Add(d.bytes())
	g := newPDFTestDoc()
	tu := g.addStream("", "1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfchar <0001> <0391> endbfchar 1 beginbfrange <0010> <0012> [<03B3> <03B4> <03B5>] endbfrange")
	desc := g.add(`<< /Type /Font /Subtype /CIDFontType2 /BaseFont /G /DW 1000 /W [1 [600] 16 18 500] >>`)
	g.addFont("G", fmt.Sprintf(`<< /Type /Font /Subtype /Type0 /BaseFont /G /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>`, desc, tu))
	var c strings.Builder
	for i := 0; i < 4; i++ {
		y := 720 - 12*float64(i)
		c.WriteString(pdfTestLine("F1", 10, 72, y, "left column text line."))
		c.WriteString(pdfTestLine("F1", 10, 320, y, "right column text line."))
	}
	g.page(c.String() + "BT /G 12 Tf 72 600 Td <00010010> Tj ET" + pdfTestLine("F1", 9, 290, 40, "1"))
	f.Add(g.bytes())
	f.Add(pdfTestBuiltinDoc().bytes())
	// CJK fonts without ToUnicode: Identity-H through Adobe-Japan1, and
	// UniGB-UCS2-H as UTF-16 (document_pdf_cid.go).
	h := newPDFTestDoc()
	h.addFont("J", pdfTestCIDFont("Identity-H", "Japan1"))
	h.addFont("U", pdfTestCIDFont("UniGB-UCS2-H", "GB1"))
	h.page("BT /J 12 Tf 72 700 Td <0d7a0d7b037803b7> Tj ET BT /U 12 Tf 72 660 Td <914d7f6e6587> Tj ET")
	f.Add(h.bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		paras, err := extractPDFBytes(data)
		if err != nil {
			if !errors.Is(err, ErrPDFMalformed) && !errors.Is(err, ErrPDFNoText) && !errors.Is(err, ErrPDFEncrypted) && !errors.Is(err, ErrDocumentTooLarge) {
				t.Fatalf("error without a PDF sentinel: %v", err)
			}
			return
		}
		for _, p := range paras {
			if p.PageNum < 1 || p.Text == "" || !utf8.ValidString(p.Text) {
				t.Fatalf("bad paragraph %+v", p)
			}
		}
	})
}

// BenchmarkExtractPDF extracts the 100-page fixture and, for comparison in
// the same run, runs poppler's pdftotext on it (skipped when absent). Both
// report pages/s and cpu-ms/op (CPU time, which a loaded machine distorts
// less than wall time; for pdftotext it includes process start-up).
func BenchmarkExtractPDF(b *testing.B) {
	path := pdfFixture("bench-100")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	r, err := pdfOpen(data)
	if err != nil {
		b.Fatal(err)
	}
	list, err := pdfPageList(r)
	if err != nil {
		b.Fatal(err)
	}
	pages := float64(len(list))
	b.Run("engine", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		cpu0 := pdfCPUSeconds()
		for b.Loop() {
			if _, err := ExtractParagraphs(path); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(pages*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		b.ReportMetric(1000*(pdfCPUSeconds()-cpu0)/float64(b.N), "cpu-ms/op")
	})
	b.Run("pdftotext", func(b *testing.B) {
		bin, err := exec.LookPath("pdftotext")
		if err != nil {
			b.Skip("pdftotext not installed (apt-get install poppler-utils)")
		}
		b.SetBytes(int64(len(data)))
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command(bin, "-enc", "UTF-8", path, os.DevNull)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("pdftotext: %v: %s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		b.ReportMetric(pages*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}

// TestPDFHostileStructuresRejected covers inputs that would make the
// underlying parser loop forever, overflow the stack or allocate without
// bound; they must come back as ErrPDFMalformed, quickly.
func TestPDFHostileStructuresRejected(t *testing.T) {
	d := newPDFTestDoc()
	d.page(pdfTestLine("F1", 10, 72, 700, "Some text."))
	good := string(d.bytes())
	xrefAt := regexp.MustCompile(`startxref\n(\d+)`).FindStringSubmatch(good)[1]
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	for name, in := range map[string]string{
		"prev cycle":      strings.Replace(good, "trailer\n<<", "trailer\n<< /Prev "+xrefAt, 1),
		"huge size":       regexp.MustCompile(`/Size \d+`).ReplaceAllString(good, "/Size 999999999999"),
		"huge subsection": strings.Replace(good, "xref\n0 ", "xref\n0 9", 1),
		"deep nesting":    strings.Replace(good, "%PDF-1.4\n", "%PDF-1.4\n99 0 obj "+deep+" endobj\n", 1),
		"predictor bomb":  strings.Replace(good, "/Font <<", "/X << /DecodeParms << /Columns 99999999999 >> >> /Font <<", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := extractPDFBytes([]byte(in)); !errors.Is(err, ErrPDFMalformed) {
				t.Errorf("err = %v, want ErrPDFMalformed", err)
			}
		})
	}
}

func TestPDFType3FontScaledByFontMatrix(t *testing.T) {
	d := newPDFTestDoc()
	widths := strings.TrimSpace(strings.Repeat("50 ", 26))
	// Glyph space is 1/100 em here (not 1/1000), and the text is shown at
	// Tf size 1 with the size carried by the text matrix, as pdfTeX does
	// for bitmap fonts.
	d.addFont("T3", `<< /Type /Font /Subtype /Type3 /FontMatrix [0.01 0 0 0.01 0 0] /FontBBox [0 0 100 100] /CharProcs << >> /Resources << >> /FirstChar 97 /LastChar 122 /Widths [`+widths+`] /Encoding << /Type /Encoding /Differences [97 /a /b /c /d /e /f /g /h /i /j /k /l /m /n /o /p /q /r /s /t /u /v /w /x /y /z] >> >>`)
	d.page("BT /T3 1 Tf 10 0 0 10 72 700 Tm (bitmap) Tj 3.25 0 Td (fonts) Tj 2.75 0 Td (work) Tj ET\n")
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != "bitmap fonts work" {
		t.Errorf("got %q", got)
	}
}

func TestPDFListItemsAndIndentsStartParagraphs(t *testing.T) {
	d := newPDFTestDoc()
	var c strings.Builder
	y := 700.0
	line := func(x float64, s string) {
		c.WriteString(pdfTestLine("F1", 10, x, y, s))
		y -= 12
	}
	line(72, "An opening paragraph that runs across the full width of the")
	line(72, "column and ends short.")
	line(90, "An indented first line starts the next paragraph without any")
	line(72, "extra space above it, as books set their text.")
	line(72, "\x95 a bulleted item") // WinAnsi bullet
	line(72, "\x95 another item that is long enough to wrap onto a second line")
	line(84, "with a hanging indent")
	line(72, "1. a numbered item")
	d.page(c.String() + pdfTestLine("F1", 9, 290, 40, "- 1 -"))
	got := pdfTestTexts(t, d.bytes())
	want := []string{
		"An opening paragraph that runs across the full width of the column and ends short.",
		"An indented first line starts the next paragraph without any extra space above it, as books set their text.",
		"• a bulleted item",
		"• another item that is long enough to wrap onto a second line with a hanging indent",
		"1. a numbered item",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPDFPageNumberPattern(t *testing.T) {
	for s, want := range map[string]bool{
		"7": true, "- 7 -": true, "Page 7": true, "Page 7 of 9": true, "Seite 3 von 10": true,
		"7 / 9": true, "Σελίδα 7": true, "стр. 12": true, "p. 4": true,
		"Figure 3": false, "Table 2": false, "Chapter 1": false, "2023 results": false, "48,210": false,
	} {
		if got := pdfPageNumberRe().MatchString(s); got != want {
			t.Errorf("page number %q: got %v, want %v", s, got, want)
		}
	}
}

func TestPDFStandardFontWithoutWidths(t *testing.T) {
	d := newPDFTestDoc()
	d.addFont("H", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	// Each word placed absolutely, 0.25 em after the previous one ends by
	// Helvetica's real metrics; with a flat average width these short,
	// narrow words would seem to overlap slightly and be glued.
	words := []string{"it", "is", "if", "it", "fits", "tiles"}
	widths := map[rune]float64{'l': 222, 'i': 222, 't': 278, 'e': 556, 'f': 278, 'n': 556, 'g': 556, 's': 500}
	var c strings.Builder
	x := 72.0
	c.WriteString("BT /H 12 Tf ")
	for _, w := range words {
		fmt.Fprintf(&c, "1 0 0 1 %g 700 Tm (%s) Tj ", x, w)
		for _, r := range w {
			x += widths[r] / 1000 * 12
		}
		x += 0.25 * 12
	}
	c.WriteString("ET\n")
	d.page(c.String())
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != strings.Join(words, " ") {
		t.Errorf("got %q", got)
	}
}

func TestPDFGlyphNames(t *testing.T) {
	for name, want := range map[string]string{
		"period": ".", "bullet": "•", "a": "a", "Q": "Q", "eacute": "é", "Udieresis": "Ü", "uni03B1": "α",
		"uni00660069": "fi", "u1F600": "😀", "one.oldstyle": "1", "alpha": "α", "g37": "", ".notdef": "",
	} {
		if got := pdfGlyphText(name); got != want {
			t.Errorf("pdfGlyphText(%q) = %q, want %q", name, got, want)
		}
	}
}

// pdfTestBuiltinDoc returns a PDF whose symbol font, in TeX's style, has no
// ToUnicode and no /Encoding: its glyph names are only in the built-in
// encoding of the embedded program (clear-text part).
func pdfTestBuiltinDoc() *pdfTestDoc {
	d := newPDFTestDoc()
	program := "%!PS-AdobeFont-1.0: CMSY10\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\n" +
		"dup 15 /bullet put\ndup 58 /period put\ndup 65 /A put\nreadonly def\ncurrentfile eexec\n\x80\x01binary"
	ff := d.addStream("/Length1 120", program)
	desc := d.add(fmt.Sprintf("<< /Type /FontDescriptor /FontName /CMSY10 /Flags 4 /FontFile %d 0 R >>", ff))
	d.addFont("S", fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /CMSY10 /FirstChar 0 /LastChar 127 /FontDescriptor %d 0 R >>", desc))
	d.page("BT /S 10 Tf 72 700 Td <0f> Tj /F1 10 Tf 8 0 Td (item) Tj /S 10 Tf 25 0 Td <3a41> Tj ET\n")
	return d
}

func TestPDFBuiltinType1Encoding(t *testing.T) {
	d := pdfTestBuiltinDoc()
	if got := pdfTestTexts(t, d.bytes()); len(got) != 1 || got[0] != "• item .A" {
		t.Errorf("got %q, want %q", got, "• item .A")
	}
}
