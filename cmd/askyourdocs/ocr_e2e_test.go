package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// requireOCRTools skips the test when tesseract or pdftoppm is missing,
// and fails it instead with ASKYOURDOCS_REQUIRE_OCR=1 (scripts/test and CI
// set it after installing them).
func requireOCRTools(t *testing.T) {
	t.Helper()
	for _, prog := range []string{"tesseract", "pdftoppm"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("ASKYOURDOCS_REQUIRE_OCR") == "1" {
				t.Fatalf("ASKYOURDOCS_REQUIRE_OCR=1 but %s is not installed", prog)
			}
			t.Skipf("%s not installed; scripts/test installs it", prog)
		}
	}
}

// TestIndexOCR indexes a folder with an image-only PDF and a PNG scan
// (testdata/ocr) and finds each by a phrase only its image holds, with its
// page; doctor reports OCR. With ASKYOURDOCS_OCR=off the scan is reported
// as a document without text that names the OCR packages, and the image
// is skipped.
func TestIndexOCR(t *testing.T) {
	requireOCRTools(t)
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	copyFixture(t, "../../testdata/ocr/scan.pdf", filepath.Join(docs, "scan.pdf"))
	copyFixture(t, "../../testdata/ocr/scan.png", filepath.Join(docs, "beekeeping.png"))
	data := filepath.Join(work, "index")

	r := runCLI(t, work, nil, "index", "--data", data, "docs")
	if r.code != 0 || !strings.Contains(r.stdout, "Indexed 2 sources") {
		t.Fatalf("index of the scans:\n%s", r)
	}
	for _, c := range []struct{ query, file, pages, text string }{
		{`"busiest branch by a wide margin"`, "scan.pdf", "1", "The central library remains the busiest branch"},
		{`"twelve volunteers weighed their hives"`, "beekeeping.png", "1", "Twelve volunteers weighed their hives"},
	} {
		r := runCLI(t, work, nil, "search", "--data", data, "--mode", modeKeyword, "--json", c.query)
		var out searchOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Results) == 0 {
			t.Fatalf("search %s: %v\n%s", c.query, err, r)
		}
		top := out.Results[0]
		if filepath.Base(top.URL) != c.file || top.Pages != c.pages || !strings.Contains(top.Text, c.text) {
			t.Errorf("search %s: top hit %s pages %q text %q; want %s page %s with %q", c.query, top.URL, top.Pages, top.Text, c.file, c.pages, c.text)
		}
	}

	r = runCLI(t, work, nil, "doctor", "--data", data)
	if !strings.Contains(r.stdout, "ocr") || !strings.Contains(r.stdout, "tesseract ") || !strings.Contains(r.stdout, "scanned PDFs and .png/.jpg/.tiff images are read") {
		t.Errorf("doctor does not report OCR:\n%s", r)
	}

	off := []string{"ASKYOURDOCS_OCR=off"}
	r = runCLI(t, work, off, "index", "--data", filepath.Join(work, "index-off"), "docs")
	if !strings.Contains(r.stdout, "Skipped 1 file: .png 1") || !strings.Contains(r.stdout, "scan.pdf: PDF without a text layer") ||
		!strings.Contains(r.stdout, "apt-get install tesseract-ocr") {
		t.Errorf("index without OCR:\n%s", r)
	}
	r = runCLI(t, work, off, "doctor", "--data", data)
	if !strings.Contains(r.stdout, "ASKYOURDOCS_OCR=off") {
		t.Errorf("doctor with OCR off:\n%s", r)
	}
}

// TestServeUploadOCR uploads a PNG scan and an image-only PDF through
// serve: both are indexed through OCR and answer a question with the
// scan's text and page.
func TestServeUploadOCR(t *testing.T) {
	requireOCRTools(t)
	if !slices.Contains(supportedUploadExts(), ".png") {
		t.Fatalf("the upload form does not offer .png with OCR installed: %v", supportedUploadExts())
	}
	ts := newTestServe(t, nil, "", 0)
	png, err := os.ReadFile("../../testdata/ocr/scan.png")
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := os.ReadFile("../../testdata/ocr/scan.pdf")
	if err != nil {
		t.Fatal(err)
	}
	job := ts.uploadAndWait(t, nil, map[string][]byte{"beekeeping.png": png, "loans.pdf": pdf})
	rep, ok := job.Result.(*indexReport)
	if job.Status != "done" || !ok || rep.Sources != 2 || len(rep.Failed) != 0 || len(rep.Empty) != 0 {
		t.Fatalf("index job: %+v, report %+v", job, rep)
	}
	a := ts.askJSON(t, askInput{Question: "How often did the volunteers weigh their hives?"})
	if len(a.Citations) == 0 || !strings.HasPrefix(a.Citations[0].Title, "beekeeping.png") || !strings.Contains(a.Answer+a.Citations[0].Excerpt, "Sunday") {
		t.Errorf("answer from the PNG scan: %+v", a)
	}
}
