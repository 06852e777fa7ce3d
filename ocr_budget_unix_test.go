//go:build unix

package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOCRDocumentTimeout: OCR of one document stops at DocumentTimeout,
// every page together, with ErrDocumentTooLarge, though no single page
// reached PageTimeout. The programs are stand-ins that never finish
// recognising (tesseract answers only --list-langs); the test ends on
// the budget's deadline.
func TestOCRDocumentTimeout(t *testing.T) {
	dir := t.TempDir()
	o := fakeOCR(t, "exec sleep 600", "exec sleep 600")
	o.PageTimeout = 10 * time.Minute
	o.DocumentTimeout = 200 * time.Millisecond
	d := newPDFTestDoc()
	for range 2 {
		content := d.addStream("", "")
		d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox [0 0 595 842] /Contents %d 0 R >>", content)))
	}
	pdf := filepath.Join(dir, "scan.pdf")
	tif := filepath.Join(dir, "scan.tif")
	page := tiffPage{1000, 1400}
	if err := os.WriteFile(pdf, d.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tif, buildTIFF(binary.LittleEndian, false, 4, page, page, page), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pdf, tif} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the test's own bound
		_, err := ExtractParagraphsWithOptions(ctx, path, &ExtractOptions{OCR: o})
		cancel()
		var de *DocumentError
		if !errors.Is(err, ErrDocumentTooLarge) || !errors.As(err, &de) {
			t.Errorf("%s: %v, want a *DocumentError wrapping ErrDocumentTooLarge", filepath.Base(path), err)
		}
	}
}
