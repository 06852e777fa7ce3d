package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestDecodeText(t *testing.T) {
	be := []byte{0xFE, 0xFF}
	for _, u := range utf16.Encode([]rune("Grüße €")) {
		be = append(be, byte(u>>8), byte(u))
	}
	for name, c := range map[string]struct{ in, want string }{
		"utf-8 kept":          {"Grüße €", "Grüße €"},
		"utf-8 bom dropped":   {"\xEF\xBB\xBFHi", "Hi"},
		"utf-16 be":           {string(be), "Grüße €"},
		"utf-16 le":           {"\xFF\xFEH\x00\xE9\x00", "Hé"},
		"latin-1 fallback":    {"caf\xE9 \xE0 la carte", "café à la carte"},
		"windows-1252 quotes": {"\x93quoted\x94 \x80", "\u201cquoted\u201d €"},
	} {
		if got := string(decodeText([]byte(c.in))); got != c.want {
			t.Errorf("%s: got %q, want %q", name, got, c.want)
		}
	}
}

func TestExtractText(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"hard wraps joined, blank lines split", "one\ntwo\r\n\r\nthree\n", "P||one two\nP||three\n"},
		{"underlined headings", "Title\n=====\nIntro text.\n\nPart\n----\n\nBody.\n",
			"H|Title|Title\nP|Title|Intro text.\nH|Title > Part|Part\nP|Title > Part|Body.\n"},
		{"numbered headings nest below the underlined title", "Manual\n======\n\n1. Setup\n\nText here.\n\n1.1 Tools\n\nMore.\n",
			"H|Manual|Manual\nH|Manual > 1. Setup|1. Setup\nP|Manual > 1. Setup|Text here.\nH|Manual > 1. Setup > 1.1 Tools|1.1 Tools\nP|Manual > 1. Setup > 1.1 Tools|More.\n"},
		{"a run of numbered lines is a list, not headings", "1. Buy milk\n\n2. Buy bread\n\n3. Pay\n", "P||1. Buy milk\nP||2. Buy bread\nP||3. Pay\n"},
		{"sentences are not headings", "2. we went home.\n\nText.\n\n3 Cats sat on the mat\n\nText.\n",
			"P||2. we went home.\nP||Text.\nP||3 Cats sat on the mat\nP||Text.\n"},
		{"list items start paragraphs", "Bring:\n- a hat\n- sun cream\n  factor 50\n", "P||Bring:\nP||- a hat\nP||- sun cream factor 50\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			paras, err := extractText([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := mdTexts(paras); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestExtractParagraphsTextFiles(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "README")
	if err := os.WriteFile(plain, []byte("Hello\nworld.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if paras, err := ExtractParagraphs(plain); err != nil || len(paras) != 1 || paras[0].Text != "Hello world." {
		t.Errorf("extensionless text: %v %+v", err, paras)
	}
	if SupportedDocumentExt("") || !SupportedDocumentExt(".MD") || !SupportedDocumentExt(".txt") || !SupportedDocumentExt(".Epub") || SupportedDocumentExt(".doc") {
		t.Error("SupportedDocumentExt")
	}
}

// TestExtractTextNUL checks that NUL bytes in a .txt file are dropped: kept,
// they reached the breadcrumb metadata, which PostgreSQL's jsonb refuses
// ("unsupported Unicode escape sequence"), so indexing the file failed. A
// UTF-16 file without byte-order mark reads as its text.
func TestExtractTextNUL(t *testing.T) {
	wide := strings.Join(strings.Split("Notes on NUL", ""), "\x00") + "\x00"
	paras, err := extractText([]byte("Intro\x00duction\n============\n\n" + wide + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkParagraphs(t, paras)
	if got, want := mdTexts(paras), "H|Introduction|Introduction\nP|Introduction|Notes on NUL\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func FuzzExtractText(f *testing.F) {
	for _, s := range []string{"Intro\x00\n=====\n\nb\x00o\x00d\x00y\x00", "Title\n=====\n\n1. A\n\ntext", "\xFF\xFEa\x00", "\xFE\xFF\x00a", "caf\xE9", "1.2.3 X\n\ny", "- a\n* b\n+ c\n1) d"} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "formats", "notes.txt")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		paras, err := extractText(src)
		if err != nil {
			t.Fatal(err)
		}
		checkParagraphs(t, paras)
	})
}
