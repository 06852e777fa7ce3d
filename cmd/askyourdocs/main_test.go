package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseArgsInterleaved(t *testing.T) {
	tests := []struct {
		args     []string
		wantPos  []string
		wantJSON bool
		wantData string
	}{
		{[]string{"question"}, []string{"question"}, false, ".askyourdocs"},
		{[]string{"--json", "a", "b"}, []string{"a", "b"}, true, ".askyourdocs"},
		{[]string{"a", "--json", "b", "--data", "d"}, []string{"a", "b"}, true, "d"},
		{[]string{"--data=x", "--", "--json", "-q"}, []string{"--json", "-q"}, false, "x"},
		{[]string{"a", "--", "--data"}, []string{"a", "--data"}, false, ".askyourdocs"},
	}
	for _, tt := range tests {
		a := &cliApp{stderr: &bytes.Buffer{}}
		fs, cf := a.newFlagSet("x")
		pos, err := parseArgs(fs, tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if !slices.Equal(pos, tt.wantPos) || cf.json != tt.wantJSON || cf.data != tt.wantData {
			t.Errorf("%q: pos %q json %v data %q", tt.args, pos, cf.json, cf.data)
		}
	}
	a := &cliApp{stderr: &bytes.Buffer{}}
	fs, _ := a.newFlagSet("x")
	if _, err := parseArgs(fs, []string{"--nope"}); err == nil {
		t.Error("unknown flag accepted")
	}
}

func TestRelevantKey(t *testing.T) {
	rel := []string{"debian-faq/basic-defs.en.html", "https://x.example/docs/a"}
	tests := map[string]string{
		"/tmp/corpus/debian-faq/basic-defs.en.html":       "debian-faq/basic-defs.en.html",
		"/tmp/corpus/other-debian-faq/basic-defs.en.html": "/tmp/corpus/other-debian-faq/basic-defs.en.html", // not at a path boundary
		"https://x.example/docs/a":                        "https://x.example/docs/a",
		"https://x.example/docs/ab":                       "https://x.example/docs/ab",
	}
	for url, want := range tests {
		if got := relevantKey(url, rel); got != want {
			t.Errorf("relevantKey(%q) = %q, want %q", url, got, want)
		}
	}
}

func TestLoadEvalDataset(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds, err := loadEvalDataset(write("a.json", `[{"question":"q","relevant":["a.html"]}]`))
	if err != nil || len(ds.Cases) != 1 {
		t.Errorf("bare array: %v %+v", err, ds)
	}
	ds, err = loadEvalDataset(write("b.json", `{"name":"n","cases":[{"question":"q","relevant":["a"]},{"question":"r","relevant":["b","c"]}]}`))
	if err != nil || len(ds.Cases) != 2 || ds.Name != "n" {
		t.Errorf("object: %v %+v", err, ds)
	}
	for name, bad := range map[string]string{"empty.json": `{"cases":[]}`, "norel.json": `[{"question":"q"}]`, "broken.json": `{`} {
		if _, err := loadEvalDataset(write(name, bad)); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := loadEvalDataset(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file accepted")
	}
	// The committed evaluation set loads.
	ds, err = loadEvalDataset("../../testdata/cli/debian-eval.json")
	if err != nil || len(ds.Cases) < 100 {
		t.Errorf("testdata/cli/debian-eval.json: %v", err)
	}
	// The demo set the eval command's help example names loads, and each
	// relevant document is one of the demo documents.
	ds, err = loadEvalDataset("../../testdata/cli/eval.json")
	if err != nil {
		t.Fatalf("testdata/cli/eval.json (askyourdocs help eval): %v", err)
	}
	for _, c := range ds.Cases {
		for _, rel := range c.Relevant {
			if _, err := os.Stat(filepath.Join("../../testdata/cli/docs", rel)); err != nil {
				t.Errorf("testdata/cli/eval.json: %q: %v", c.Question, err)
			}
		}
	}
}

func TestCitationString(t *testing.T) {
	wd, _ := os.Getwd()
	tests := []struct {
		c    citation
		want string
	}{
		{citation{URL: filepath.Join(wd, "docs", "a.pdf"), Pages: "3"}, "docs/a.pdf, p. 3"},
		{citation{URL: "/elsewhere/a.pdf", Pages: "3-4", Breadcrumb: "A > B"}, "/elsewhere/a.pdf, pp. 3-4 (A > B)"},
		{citation{URL: "https://x.example/p"}, "https://x.example/p"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.c, got, tt.want)
		}
	}
}

// TestRunInProcess covers the command dispatch without building the binary:
// help, usage errors, and an extractive ask through run().
func TestRunInProcess(t *testing.T) {
	ctx := context.Background()
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"--help"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("--help: %d %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"ask", "-h"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "--passages N") {
		t.Errorf("ask -h: %d %q", code, out.String())
	}
	data := filepath.Join(t.TempDir(), "idx")
	out.Reset()
	errb.Reset()
	code := run(ctx, []string{"--data", data, "index", "../../testdata/cli/docs"}, nil, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "Indexed 3 sources") {
		t.Fatalf("index: %d\n%s\n%s", code, out.String(), errb.String())
	}
	out.Reset()
	code = run(ctx, []string{"--data", data, "ask", "minimum", "age", "single", "kayak"}, nil, &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "12 years") || !strings.Contains(out.String(), "handbook.pdf, p. 2") {
		t.Errorf("ask: %d\n%s\n%s", code, out.String(), errb.String())
	}
}
