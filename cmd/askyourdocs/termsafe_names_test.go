package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHostileNamesPrintOneLine: a file named with a newline (forging an
// "Indexed 999 sources" line), one with a tab and an escape character, and
// a malformed PDF whose parser error would quote its bytes each print as
// one clean line in `index` and `sources`; --json keeps the real names.
func TestHostileNamesPrintOneLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("newlines and tabs are not allowed in Windows file names")
	}
	dir := t.TempDir()
	forged := "evil\nIndexed 999 sources.txt"
	tabbed := "tab\there\x1b[31mred.md"
	files := map[string]string{
		forged: "The ferry leaves at nine from pier four.",
		tabbed: "# Tides\n\nThe tide turns twice a day at the harbour mouth.",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed PDF: a header, then bytes that are not PDF syntax.
	rng := rand.New(rand.NewPCG(7, 11))
	bad := []byte("%PDF-1.4\n")
	for range 600 {
		bad = append(bad, byte(0x80+rng.IntN(0x80)))
	}
	bad = append(bad, "\nYns\x1b]0;owned\x07\nstartxref\n9\n%%EOF\n"...)
	if err := os.WriteFile(filepath.Join(dir, "broken.pdf"), bad, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "idx")
	var out, errb bytes.Buffer
	run(ctx, []string{"--data", data, "index", dir}, nil, &out, &errb)
	clean := func(what, s string) {
		t.Helper()
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "Indexed 999") {
				t.Errorf("%s: a file name forged a line: %q", what, line)
			}
			if !utf8.ValidString(line) || strings.ContainsAny(line, "\t\x1b\x07\r") {
				t.Errorf("%s: line with raw bytes: %q", what, line)
			}
		}
	}
	clean("index stdout", out.String())
	clean("index stderr", errb.String())
	for _, want := range []string{`evil\nIndexed 999 sources.txt`, "broken.pdf: unreadable PDF"} {
		if !strings.Contains(out.String()+errb.String(), want) {
			t.Errorf("index output lacks %q:\n%s\n%s", want, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String()+errb.String(), `tab\there\x1b[31mred.md`) {
		t.Errorf("index output lacks the escaped tab name:\n%s\n%s", out.String(), errb.String())
	}

	out.Reset()
	errb.Reset()
	if code := run(ctx, []string{"--data", data, "sources"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("sources: %d %s", code, errb.String())
	}
	clean("sources", out.String())
	if n := strings.Count(out.String(), "\n"); n != 4 { // header, two files, summary
		t.Errorf("sources prints %d lines, want 4:\n%s", n, out.String())
	}

	out.Reset()
	if code := run(ctx, []string{"--data", data, "--json", "sources"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("sources --json: %d %s", code, errb.String())
	}
	var js struct {
		Results []sourceEntry `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range js.Results {
		got[filepath.Base(e.URL)] = true
	}
	if !got[forged] || !got[tabbed] {
		t.Errorf("--json lost the real names: %v", got)
	}
}

// TestPrintable: what printable escapes and what it keeps.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.pdf":     "plain name.pdf",
		"日本語のファイル.pdf":       "日本語のファイル.pdf",
		"a\nb":               `a\nb`,
		"a\tb":               `a\tb`,
		"esc\x1b[2J":         `esc\x1b[2J`,
		"bad\xbd\xb2":        `bad\xbd\xb2`,
		"rtl\u202egnp.exe":   `rtl\u202egnp.exe`,
		"quote\" and \\ ok":  "quote\" and \\ ok",
		"quote\" and \n bad": `quote\" and \n bad`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
