//go:build unix

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOCRPDFPageBoxAnyCornerOrder: a scanned page whose media box lists
// its corners right to left is as wide as pdftoppm renders it, so the
// resolution is lowered for it, and a page too large to render at all is
// refused before pdftoppm runs. The programs are stand-ins that record
// their arguments.
func TestOCRPDFPageBoxAnyCornerOrder(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "pdftoppm.args")
	o := fakeOCR(t, "exit 1", `echo "$@" >> '`+argsFile+`'; exit 1`)
	for _, c := range []struct {
		box     string
		maxDPI  int // 0: refused before pdftoppm runs
		wantErr error
	}{
		{"[40000 0 0 792]", 140, ErrOCRFailed},
		{"[0 792 612 0]", 300, ErrOCRFailed},
		{"[4000000 0 0 792]", 0, ErrDocumentTooLarge},
	} {
		os.Remove(argsFile)
		d := newPDFTestDoc()
		content := d.addStream("", "")
		d.pages = append(d.pages, d.add(fmt.Sprintf("<< /Type /Page /Parent PAGES /MediaBox %s /Contents %d 0 R >>", c.box, content)))
		path := filepath.Join(dir, "scan.pdf")
		if err := os.WriteFile(path, d.bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ExtractParagraphsWithOptions(context.Background(), path, &ExtractOptions{OCR: o})
		if !errors.Is(err, c.wantErr) {
			t.Errorf("box %s: %v, want an error wrapping %v", c.box, err, c.wantErr)
		}
		args, _ := os.ReadFile(argsFile)
		if c.maxDPI == 0 {
			if len(args) > 0 {
				t.Errorf("box %s: pdftoppm ran (%s), want it refused before", c.box, args)
			}
			continue
		}
		f := strings.Fields(string(args))
		dpi := -1
		for i := range f {
			if f[i] == "-r" && i+1 < len(f) {
				dpi, _ = strconv.Atoi(f[i+1])
			}
		}
		if dpi <= 0 || dpi > c.maxDPI {
			t.Errorf("box %s: pdftoppm %s, want -r at most %d", c.box, fmt.Sprint(f), c.maxDPI)
		}
	}
}
