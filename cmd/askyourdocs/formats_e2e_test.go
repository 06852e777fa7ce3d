package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEndToEndDocumentFormats indexes a folder holding one document of
// every format the engine reads (the fixtures of testdata/formats, made
// with LibreOffice and pandoc) and checks that keyword and vector search
// find each document's own fact with the right citation: the file, the
// slide number for decks, the sheet, chapter or heading as breadcrumb.
func TestEndToEndDocumentFormats(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	for _, f := range []string{"guide.md", "notes.txt", "report.odt", "slides.pptx", "slides.odp", "budget.xlsx", "budget.ods", "book.epub"} {
		copyFixture(t, filepath.Join("..", "..", "testdata", "formats", f), filepath.Join(docs, f))
	}
	copyFixture(t, "../../testdata/cli/docs/faq.docx", filepath.Join(docs, "faq.docx"))
	copyFixture(t, "../../testdata/cli/docs/handbook.pdf", filepath.Join(docs, "handbook.pdf"))
	// A legacy binary document is skipped by the folder walk, and refused
	// with advice when named.
	if err := os.WriteFile(filepath.Join(docs, "old.doc"), []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(work, "index")

	r := runCLI(t, work, nil, "index", "--data", data, "docs")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 10 sources") || !strings.Contains(r.stdout, "Skipped 1 file: .doc 1") {
		t.Fatalf("index of the mixed folder:\n%s", r)
	}

	for _, c := range []struct {
		query, file, pages, crumb, text string
	}{
		{"stay within shouting distance; departs 07:30 from Pier 4, returns before noon", "guide.md", "", "Fjordline Safety Guide > On the water", "07:30 from Pier 4"},
		{"storage locker code changes Monday", "notes.txt", "", "Boathouse notes > 1. Opening the boathouse", "every Monday"},
		{"capsize drill Norwegian paddling federation guidelines", "report.odt", "1", "Season Report 2025", "[2] The capsize drill"},
		{"oldest doubles leak skeg box", "slides.", "3-4", "Fleet", "Notes: Mention that the oldest doubles leak"}, // small slides merge; .pptx names it "Slide 3: Fleet"
		{"dry bag price per day deposit", "budget.", "", "Rentals", "Item: Dry bag | Price per day: 4"},
		{"slack water narrows minutes", "book.epub", "", "Tides", "lasts about 20 minutes"},
	} {
		for _, mode := range []string{modeKeyword, modeVector} {
			r := runCLI(t, work, nil, "search", "--data", data, "--mode", mode, "--json", c.query)
			var out searchOutput
			err := json.Unmarshal([]byte(r.stdout), &out)
			res := out.Results
			if err != nil || len(res) == 0 {
				t.Fatalf("search %q --mode %s: %v\n%s", c.query, mode, err, r)
			}
			top := res[0]
			if !strings.Contains(filepath.Base(top.URL), c.file) || top.Pages != c.pages || !strings.HasSuffix(top.Breadcrumb, c.crumb) || !strings.Contains(top.Text, c.text) {
				t.Errorf("search %q --mode %s: top hit %s pages %q breadcrumb %q text %q; want %s pages %q breadcrumb %q text with %q",
					c.query, mode, top.URL, top.Pages, top.Breadcrumb, top.Text, c.file, c.pages, c.crumb, c.text)
			}
		}
	}

	// The hidden sheet of the workbooks is not indexed.
	r = runCLI(t, work, nil, "search", "--data", data, "--mode", modeKeyword, "--json", "secret margin")
	if strings.Contains(r.stdout, "Secret margin") {
		t.Errorf("a hidden sheet was indexed:\n%s", r)
	}

	// Named explicitly: the legacy file is refused with the engine's advice
	// on converting it (its *DocumentError's Reason); a file without extension is
	// read as plain text.
	r = runCLI(t, work, nil, "index", "--data", data, filepath.Join("docs", "old.doc"))
	if r.code != exitError || !strings.Contains(r.stdout+r.stderr, `old.doc: unsupported format: legacy binary Word document (.doc): convert it to .docx or .odt`) || strings.Contains(r.stdout, "Indexed 1 source") {
		t.Errorf("explicit legacy .doc:\n%s", r)
	}
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("The kiosk sells waffles on Sundays.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, work, nil, "index", "--data", data, "README")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 1 source") {
		t.Errorf("explicit extensionless file:\n%s", r)
	}
	r = runCLI(t, work, nil, "search", "--data", data, "--mode", modeKeyword, "--json", "waffles Sundays")
	if !strings.Contains(r.stdout, "README") {
		t.Errorf("extensionless file not searchable:\n%s", r)
	}
}
