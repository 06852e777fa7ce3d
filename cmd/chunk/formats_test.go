package main

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestRunReadsWhatIndexingReads checks that chunk reads a file as
// NewFileSource does (the formats beyond .pdf and .docx, and HTML files,
// which ExtractParagraphs leaves to HTMLToStructuredText), refuses an
// unknown extension with ErrUnsupportedFormat, and that -h is no error.
func TestRunReadsWhatIndexingReads(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"prices.html": "<html><body><h1>Tours and prices</h1><p>The sunset paddle costs 45 euros.</p></body></html>",
		"notes.md":    "# Notes\n\nThe boathouse opens at eight.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"prices.html": "Tours and prices\nThe sunset paddle costs 45 euros.",
		"notes.md":    "Notes\nThe boathouse opens at eight.",
	} {
		var out strings.Builder
		if err := run([]string{filepath.Join(dir, name)}, &out); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if !strings.Contains(out.String(), want) {
			t.Errorf("%s: output lacks %q:\n%s", name, want, out.String())
		}
	}
	odd := filepath.Join(dir, "data.xyz")
	if err := os.WriteFile(odd, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run([]string{odd}, &out); !errors.Is(err, askyourdocs.ErrUnsupportedFormat) {
		t.Errorf("data.xyz: %v, want ErrUnsupportedFormat", err)
	}
	if err := run([]string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp (main exits 0 on it)", err)
	}
}
