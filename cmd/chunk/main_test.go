package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunPrintsChunks(t *testing.T) {
	var out strings.Builder
	fixture := filepath.Join("..", "..", "testdata", "docx", "birds.docx")
	if err := run([]string{"-size", "200", "-overlap", "20", fixture}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"--- chunk 1/",
		"pages 1-2  Field guide to garden birds > Sightings\n",
		"Species: Robin | Count: 3 | Month: January",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	if err := run([]string{"-paragraphs", fixture}, &out); err != nil || !strings.Contains(out.String(), "[H page 1] Field guide to garden birds > Identification\n    Identification\n") {
		t.Errorf("-paragraphs: %v\n%s", err, out.String())
	}
}

func TestRunErrors(t *testing.T) {
	var out strings.Builder
	if err := run(nil, &out); !errors.Is(err, errUsage) {
		t.Errorf("no file: %v", err)
	}
	if err := run([]string{"notes.txt"}, &out); err == nil {
		t.Error("a .txt file was accepted")
	}
	if err := run([]string{"https://example.org/"}, &out); err == nil || !strings.Contains(err.Error(), "web.go") {
		t.Errorf("URL: %v", err)
	}
	if err := run([]string{filepath.Join(t.TempDir(), "missing.docx")}, &out); err == nil {
		t.Error("missing file accepted")
	}
}
