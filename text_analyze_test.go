package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTextAnalyzerTerms(t *testing.T) {
	for _, tc := range []struct {
		lang, text string
		want       []string
	}{
		{"english", "Running C++ and C# with -22 // 10, e-mail and/or R.", []string{"run", "c++", "and", "c#", "with", "-", "22", "-22", "//", "10", "e", "mail", "e-mail", "and", "or", "r"}},
		{"english", "connections connected", []string{"connect", "connect"}},
		{"german", "Die Rechnungen der Häuser", []string{"die", "rechnung", "der", "haus"}},
		{"simple", "Rechnungen x->y", []string{"rechnungen", "x", "->", "y"}},
		{"pg_catalog.English", "Tables", []string{"tabl"}},
	} {
		a, err := newTextAnalyzer(tc.lang)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s %q = %q, want %q", tc.lang, tc.text, got, tc.want)
		}
	}
	if _, err := newTextAnalyzer("klingon"); !errors.Is(err, ErrUnknownLanguage) {
		t.Errorf("unknown language: %v", err)
	}
	// ErrUnknownLanguage's comment and docs/retrieval.md list these: keep
	// them in step.
	if got := strings.Join(textSearchLanguages(), " "); got != "arabic danish dutch english finnish french german hungarian irish italian norwegian portuguese romanian russian simple spanish swedish tamil turkish" {
		t.Errorf("languages %s: update ErrUnknownLanguage's comment and docs/retrieval.md", got)
	}
	if a, _ := newTextAnalyzer(""); a.language() != defaultTextSearchLanguage {
		t.Errorf("default language %q", a.language())
	}
}

func FuzzTextAnalyzer(f *testing.F) {
	for _, s := range []string{"", "C++", "a-b", "-22 // 10", "\xff\xfe", "Straße", "e\u0301", "c#d", "x++y"} {
		f.Add(s)
	}
	a, _ := newTextAnalyzer("german")
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range a.terms(s) {
			if term == "" {
				t.Fatalf("empty term in %q", s)
			}
		}
	})
}

func TestTextAnalyzerIdentifiers(t *testing.T) {
	a, err := newTextAnalyzer("english")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"max_log_file_size", []string{"max", "log", "file", "size", "max_log_file_size"}},
		{"set http.server.read_timeout.", []string{"set", "http", "server", "read", "timeout", "http.server.read_timeout"}},
		{"CMAKE_BUILD_TYPE", []string{"cmake", "build", "type", "cmake_build_type"}},
		{"use --allow-private now", []string{"use", "--", "allow", "privat", "--allow-private", "now"}},
		{"filepath.Join(a)", []string{"filepath", "join", "filepath.join", "a"}},
		{"HashMap::new", []string{"hashmap", "hash", "map", "new", "hashmap::new"}},
		{"HTTPServer", []string{"httpserver", "http", "server"}},
		{"version 1.4.2-1", []string{"version", "1", "4", "2", "1", "1.4.2-1"}},
		{"x -O2", []string{"x", "-", "o2", "-o2"}},
		{"-DCMAKE_BUILD_TYPE=Release", []string{"-", "dcmake", "build", "type", "-dcmake_build_type", "cmake", "cmake_build_type", "=", "releas"}},
		{"a - b", []string{"a", "-", "b"}},
		{"e-mail", []string{"e", "mail", "e-mail"}},
		{"plain words.", []string{"plain", "word"}},
	} {
		if got := a.terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q = %q, want %q", tc.text, got, tc.want)
		}
	}
}
