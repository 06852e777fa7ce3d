package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pdfTestLoop adds two objects that are bare references to each other (a
// reference cycle the parser cannot resolve) and returns the first one's
// number.
func (d *pdfTestDoc) pdfTestLoop() int {
	a := len(d.objs) + 1
	d.add(fmt.Sprintf("%d 0 R", a+1))
	d.add(fmt.Sprintf("%d 0 R", a))
	return a
}

// pdfCycleDoc returns a PDF whose page 2 has its own /Resources in a
// reference loop and whose page 3 inherits a looping /Resources from an
// intermediate page-tree node; pages 1 and 4 are good when good is set
// (absent otherwise).
func pdfCycleDoc(good bool) []byte {
	d := newPDFTestDoc()
	if good {
		d.page(pdfTestLine("F1", 12, 72, 700, "First good page text."))
	}
	loop := d.pdfTestLoop()
	c := d.addStream("", pdfTestLine("F1", 12, 72, 700, "Own loop page."))
	d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Resources %d 0 R /Contents %d 0 R >>", loop, c)))
	inherited := d.pdfTestLoop()
	c = d.addStream("", pdfTestLine("F1", 12, 72, 700, "Inherited loop page."))
	leaf := len(d.objs) + 2
	node := d.add(fmt.Sprintf("<< /Type /Pages /Parent PAGES /Kids [%d 0 R] /Count 1 /Resources %d 0 R >>", leaf, inherited))
	d.add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Contents %d 0 R >>", node, c))
	d.pages = append(d.pages, node)
	if good {
		d.page(pdfTestLine("F1", 12, 72, 700, "Last good page text."))
	}
	return d.bytes()
}

// TestPDFResourcesLoopSkipsPage checks that pages whose resources form a
// reference cycle (their own or inherited) are skipped and the text of the
// good pages is kept.
func TestPDFResourcesLoopSkipsPage(t *testing.T) {
	paras, err := extractPDFBytes(pdfCycleDoc(true))
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	var all []string
	for _, p := range paras {
		all = append(all, p.Text)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"First good page text.", "Last good page text."} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"Own loop page.", "Inherited loop page."} {
		if strings.Contains(text, bad) {
			t.Errorf("text holds %q from a page whose resources loop:\n%s", bad, text)
		}
	}
}

// TestPDFResourcesLoopOnlyPagesDocumentError checks that a PDF whose every
// page has looping resources fails with a *DocumentError wrapping
// ErrInvalidDocument that names the page and the loop, not the parser's
// internal wording.
func TestPDFResourcesLoopOnlyPagesDocumentError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loop.pdf")
	if err := os.WriteFile(path, pdfCycleDoc(false), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ExtractParagraphs(path)
	var de *DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want a *DocumentError", err, err)
	}
	if !errors.Is(err, ErrInvalidDocument) {
		t.Errorf("err = %v, want it to wrap ErrInvalidDocument", err)
	}
	msg := err.Error()
	for _, want := range []string{"page 1", "resources loop", "2 of 2"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, internal := range []string{"objptr", "resolve"} {
		if strings.Contains(msg, internal) {
			t.Errorf("message %q holds the parser's internal wording %q", msg, internal)
		}
	}
}
