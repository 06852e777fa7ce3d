package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testOCR returns an OCR for the tests, or skips the test when tesseract
// or pdftoppm is missing; with ASKYOURDOCS_REQUIRE_OCR=1 (scripts/test and
// CI set it, having installed them) it fails instead.
func testOCR(t *testing.T) *OCR {
	t.Helper()
	o, err := NewOCR()
	if err == nil && o.Pdftoppm == "" {
		err = errors.New("pdftoppm not found in PATH")
	}
	if err != nil {
		if os.Getenv("ASKYOURDOCS_REQUIRE_OCR") == "1" {
			t.Fatalf("ASKYOURDOCS_REQUIRE_OCR=1 but OCR is not usable: %v", err)
		}
		t.Skipf("OCR not installed (%v); scripts/test installs it", err)
	}
	return o
}

// ocrTruth returns the words of the pdftotext golden text of a PDF
// fixture: all pages, or just page (1-based) when page > 0.
func ocrTruth(t *testing.T, name string, page int) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pdf", name+".pdftotext.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if page > 0 {
		text = strings.Split(text, "\f")[page-1]
	}
	return textWords(text)
}

func parasWords(paras []Paragraph, page int) []string {
	var words []string
	for _, p := range paras {
		if page == 0 || p.PageNum == page {
			words = append(words, textWords(p.Text)...)
		}
	}
	return words
}

// TestOCRFixturesF1 reads every OCR fixture and scores its words against
// the text the images were rendered from (docs/formats.md reports the
// figures): at least 0.95 on clean scans, 0.9 on the photograph-like one.
func TestOCRFixturesF1(t *testing.T) {
	o := testOCR(t)
	cases := []struct {
		file, truth string
		page        int // of the truth; 0: all
		min         float64
		pages       []int
	}{
		{"scan.pdf", "table", 0, 0.95, []int{1, 2}},
		{"scan.png", "two-column", 1, 0.95, []int{1}},
		{"scan.tiff", "two-column", 2, 0.95, []int{1}},
		{"photo.jpg", "two-column", 1, 0.90, []int{1}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			paras, err := ExtractParagraphsWithOptions(context.Background(), filepath.Join("testdata", "ocr", c.file), &ExtractOptions{OCR: o})
			if err != nil {
				t.Fatal(err)
			}
			f1, p, r := wordF1(parasWords(paras, 0), ocrTruth(t, c.truth, c.page))
			t.Logf("%s: word F1 %.4f (precision %.4f, recall %.4f), %d paragraphs", c.file, f1, p, r, len(paras))
			if f1 < c.min {
				t.Errorf("%s: word F1 %.4f, want >= %.2f", c.file, f1, c.min)
			}
			seen := map[int]bool{}
			for _, p := range paras {
				seen[p.PageNum] = true
			}
			for _, pg := range c.pages {
				if !seen[pg] {
					t.Errorf("no paragraph on page %d", pg)
				}
			}
			if len(seen) != len(c.pages) {
				t.Errorf("pages %v, want %v", seen, c.pages)
			}
		})
	}
}

// TestOCRHeadings checks that the scan's title and section headings are
// found as headings with breadcrumbs, as the text layer gives them.
func TestOCRHeadings(t *testing.T) {
	o := testOCR(t)
	paras, err := ExtractParagraphsWithOptions(context.Background(), filepath.Join("testdata", "ocr", "scan.pdf"), &ExtractOptions{OCR: o})
	if err != nil {
		t.Fatal(err)
	}
	var headings []string
	for _, p := range paras {
		if p.Heading {
			headings = append(headings, p.Text)
		}
	}
	for _, want := range []string{"Library Loans Report", "Summary", "Loans by branch"} {
		found := false
		for _, h := range headings {
			found = found || h == want
		}
		if !found {
			t.Errorf("heading %q not found; headings: %q", want, headings)
		}
	}
	for _, p := range paras {
		if strings.HasPrefix(p.Text, "The figures were collected") && !strings.HasSuffix(p.Breadcrumb, "Summary") {
			t.Errorf("breadcrumb of a Summary paragraph: %q", p.Breadcrumb)
		}
	}
}

// TestOCRScanWithoutOCR checks that without an OCR a scan keeps its
// ErrPDFNoText and an image is refused naming OCR.
func TestOCRScanWithoutOCR(t *testing.T) {
	_, err := ExtractParagraphsWithOptions(context.Background(), filepath.Join("testdata", "ocr", "scan.pdf"), &ExtractOptions{})
	if !errors.Is(err, ErrPDFNoText) {
		t.Errorf("scan without OCR: %v, want ErrPDFNoText", err)
	}
	_, err = ExtractParagraphsWithOptions(context.Background(), filepath.Join("testdata", "ocr", "scan.png"), &ExtractOptions{})
	if !errors.Is(err, ErrUnsupportedFormat) || !errors.Is(err, ErrOCRUnavailable) {
		t.Errorf("image without OCR: %v, want ErrUnsupportedFormat and ErrOCRUnavailable", err)
	}
	if _, err := ExtractParagraphs(filepath.Join("testdata", "ocr", "scan.png")); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("ExtractParagraphs on an image: %v, want ErrUnsupportedFormat", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := NewOCR(); !errors.Is(err, ErrOCRUnavailable) || !strings.Contains(err.Error(), "apt-get install tesseract-ocr") {
		t.Errorf("NewOCR without tesseract: %v, want ErrOCRUnavailable with install advice", err)
	}
	o := &OCR{Tesseract: filepath.Join(t.TempDir(), "tesseract")}
	if _, err := o.readImage(context.Background(), filepath.Join("testdata", "ocr", "scan.png")); !errors.Is(err, ErrOCRUnavailable) {
		t.Errorf("a missing tesseract binary: %v, want ErrOCRUnavailable", err)
	}
}

// TestOCRMixedPDF checks the per-page mode: page 1 of mixed.pdf has a text
// layer and gives exactly the paragraphs it gives without OCR, page 2 is a
// scan read through OCR (and missing without it).
func TestOCRMixedPDF(t *testing.T) {
	o := testOCR(t)
	paras, err := ExtractParagraphsWithOptions(context.Background(), filepath.Join("testdata", "ocr", "mixed.pdf"), &ExtractOptions{OCR: o})
	if err != nil {
		t.Fatal(err)
	}
	text, err := ExtractParagraphs(filepath.Join("testdata", "ocr", "mixed.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	var want1, got1 []string
	for _, p := range text {
		if p.PageNum != 1 {
			t.Fatalf("without OCR, a paragraph on page %d: %q", p.PageNum, p.Text)
		}
		want1 = append(want1, p.Text)
	}
	for _, p := range paras {
		if p.PageNum == 1 {
			got1 = append(got1, p.Text)
		}
	}
	if strings.Join(got1, "\n") != strings.Join(want1, "\n") {
		t.Errorf("page 1 (text layer) differs from the text layer read without OCR:\n got %q\nwant %q", got1, want1)
	}
	f1, _, _ := wordF1(parasWords(paras, 2), ocrTruth(t, "table", 2))
	t.Logf("mixed.pdf page 2 (OCR): word F1 %.4f", f1)
	if f1 < 0.95 {
		t.Errorf("page 2 word F1 %.4f, want >= 0.95", f1)
	}
	last := -1
	for _, p := range paras {
		if p.PageNum < last {
			t.Fatalf("paragraphs out of page order: page %d after %d", p.PageNum, last)
		}
		last = p.PageNum
	}
}

// TestOCRLimits checks the time limit, cancellation, an unknown language,
// the page cap and that temporary files are removed.
func TestOCRLimits(t *testing.T) {
	base := testOCR(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	scan := filepath.Join("testdata", "ocr", "scan.pdf")
	ctx := context.Background()

	o := &OCR{Tesseract: base.Tesseract, Pdftoppm: base.Pdftoppm, PageTimeout: time.Millisecond}
	if _, err := ExtractParagraphsWithOptions(ctx, scan, &ExtractOptions{OCR: o}); !errors.Is(err, ErrOCRFailed) || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("1 ms per page: %v, want ErrOCRFailed (time limit)", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ExtractParagraphsWithOptions(cctx, scan, &ExtractOptions{OCR: base}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	o = &OCR{Tesseract: base.Tesseract, Pdftoppm: base.Pdftoppm, Languages: "xx_nonexistent"}
	if _, err := ExtractParagraphsWithOptions(ctx, scan, &ExtractOptions{OCR: o}); !errors.Is(err, ErrOCRUnavailable) || !strings.Contains(err.Error(), "tesseract-ocr-xx-nonexistent") {
		t.Errorf("unknown language: %v, want ErrOCRUnavailable naming the package", err)
	}
	o = &OCR{Tesseract: base.Tesseract, Pdftoppm: base.Pdftoppm, MaxPages: 1}
	if _, err := ExtractParagraphsWithOptions(ctx, scan, &ExtractOptions{OCR: o}); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "OCR limit of 1") {
		t.Errorf("2 scanned pages over MaxPages 1: %v, want ErrDocumentTooLarge naming the limit", err)
	}
	o = &OCR{Tesseract: base.Tesseract, Pdftoppm: base.Pdftoppm}
	if _, err := ExtractParagraphsWithOptions(ctx, filepath.Join("testdata", "ocr", "mixed.pdf"), &ExtractOptions{OCR: o}); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestOCRTSVGrouping checks the TSV reading without tesseract: low
// confidence words and noise strokes are dropped, hyphenated line breaks
// joined, a large short line becomes a heading.
func TestOCRTSVGrouping(t *testing.T) {
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t0\t0\t10\t80\t95\tAnnual\n" +
		"5\t1\t1\t1\t1\t2\t0\t0\t10\t80\t95\tFigures\n" +
		"5\t1\t2\t1\t1\t1\t0\t0\t10\t40\t96\tThe\n" +
		"5\t1\t2\t1\t1\t2\t0\t0\t10\t40\t12\tq#@\n" +
		"5\t1\t2\t1\t1\t3\t0\t0\t10\t40\t91\tlibrary\n" +
		"5\t1\t2\t1\t1\t4\t0\t0\t10\t40\t90\t|\n" +
		"5\t1\t2\t1\t1\t5\t0\t0\t10\t40\t93\tcounts\n" +
		"5\t1\t2\t1\t1\t6\t0\t0\t10\t40\t93\tcircu-\n" +
		"5\t1\t2\t1\t2\t1\t0\t0\t10\t40\t92\tlation\n" +
		"5\t1\t2\t1\t2\t2\t0\t0\t10\t40\t92\tevery\n" +
		"5\t1\t2\t1\t2\t3\t0\t0\t10\t40\t92\tmonth.\n" +
		"5\t1\t3\t1\t1\t1\t0\t0\t10\t40\t20\t~~\n" +
		"5\t1\t3\t1\t1\t2\t0\t0\t10\t40\t25\tnoise\n"
	paras := ocrParagraphs(ocrGroup(ocrParseTSV([]byte(tsv)), defaultOCRMinConfidence), &ocrHeadingStack{}, nil)
	want := []Paragraph{
		{Text: "Annual Figures", PageNum: 1, Heading: true, Breadcrumb: "Annual Figures"},
		{Text: "The library counts circulation every month.", PageNum: 1, Breadcrumb: "Annual Figures"},
	}
	if len(paras) != len(want) {
		t.Fatalf("got %+v, want %+v", paras, want)
	}
	for i := range want {
		if paras[i] != want[i] {
			t.Errorf("paragraph %d: %+v, want %+v", i, paras[i], want[i])
		}
	}
	if l := tesseractLang("de-DE"); l != "deu" {
		t.Errorf("de-DE: %q", l)
	}
}

// TestOCRDocumentLanguage checks the language choice: the PDF's /Lang when
// its trained data is installed, else English.
func TestOCRDocumentLanguage(t *testing.T) {
	o := testOCR(t)
	ctx := context.Background()
	if l, err := o.languages(ctx, "en-GB"); err != nil || l != "eng" {
		t.Errorf("en-GB: %q, %v", l, err)
	}
	if l, err := o.languages(ctx, "zz"); err != nil || l != "eng" {
		t.Errorf("an unknown document language falls back to eng: %q, %v", l, err)
	}
	if _, err := exec.LookPath(o.Tesseract); err != nil {
		t.Error(err)
	}
}
