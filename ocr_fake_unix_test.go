//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeOCR returns an OCR whose tesseract and pdftoppm are shell scripts in
// a temporary folder: tesseract answers --list-langs with "eng" and runs
// tesseractBody otherwise, pdftoppm runs pdftoppmBody. Tests use them to
// see what the package asks of the programs, or to have them never finish.
func fakeOCR(t *testing.T, tesseractBody, pdftoppmBody string) *OCR {
	t.Helper()
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return &OCR{
		Tesseract: script("tesseract", `[ "$1" = --list-langs ] && { echo 'List of available languages (1):'; echo eng; exit 0; }; `+tesseractBody),
		Pdftoppm:  script("pdftoppm", pdftoppmBody),
	}
}
