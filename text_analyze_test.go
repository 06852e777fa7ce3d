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
		{"exchange BIGNUMs", []string{"exchang", "bignum"}}, // an acronym's plural is one word
		{"URLs and IDs", []string{"url", "and", "id"}},
		{"ParseURLs", []string{"parseurl", "pars", "url"}},
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

// TestTextAnalyzerCJK: runs of Han, kana and Hangul give overlapping
// bigrams (a lone character itself), Latin words and identifiers next to
// them stay whole, and text is read in NFKC.
func TestTextAnalyzerCJK(t *testing.T) {
	a, err := newTextAnalyzer("english")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"受験者数", []string{"受験", "験者", "者数"}},
		{"数", []string{"数"}},
		{"数 を", []string{"数", "を"}},
		{"試験問題用紙を印刷", []string{"試験", "験問", "問題", "題用", "用紙", "紙を", "を印", "印刷"}},
		{"サーバー", []string{"サー", "ーバ", "バー"}},
		{"ｻｰﾊﾞｰ", []string{"サー", "ーバ", "バー"}}, // half-width kana
		{"密码。配置", []string{"密码", "配置"}},
		{"한국어 문서", []string{"한국", "국어", "문서"}},
		{"ＡＢＣ１２３", []string{"abc123"}},     // full-width
		{"ﬁle", []string{"file"}},          // the ligature
		{"e\u0301cole", []string{"école"}}, // composed
		{"PostgreSQLの設定", []string{"postgresql", "postgr", "sql", "の設", "設定"}},
		{"設定max_log_file_sizeを変更", []string{"設定", "max", "log", "file", "size", "max_log_file_size", "を変", "変更"}},
	} {
		if got := a.terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q = %q, want %q", tc.text, got, tc.want)
		}
	}
	// Bigrams are extra terms: no word pairs are formed from them.
	var extra []bool
	a.tokenize("受験者数 max", func(_, _ string, x bool) { extra = append(extra, x) })
	if !slices.Equal(extra, []bool{true, true, true, false}) {
		t.Errorf("extra flags %v, want the bigrams extra and max not", extra)
	}
}

// TestExtractKeywordsCJK: a two-character word of a CJK script is a
// keyword (three runes are needed elsewhere).
func TestExtractKeywordsCJK(t *testing.T) {
	if got := ExtractKeywords("密码 ab 設定ファイル", nil); !slices.Equal(got, []string{"密码", "設定ファイル"}) {
		t.Errorf("ExtractKeywords = %q", got)
	}
}

// BenchmarkTextAnalyzerNFKC measures the analyzer on English text (the
// NFKC check's ASCII fast path) and on Japanese text, in bytes/s.
func BenchmarkTextAnalyzerNFKC(b *testing.B) {
	a, err := newTextAnalyzer("english")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, text string }{
		{"english", strings.Repeat("The server reads max_log_file_size from its configuration file at start-up. ", 40)},
		{"japanese", strings.Repeat("サーバーは起動時に設定ファイルからmax_log_file_sizeを読み込みます。", 40)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				a.tokenize(tc.text, func(_, _ string, _ bool) { n++ })
			}
			if n == 0 {
				b.Fatal("no terms")
			}
		})
	}
}

// TestCJKKeywords: a Japanese question's clause keyword becomes its
// bigrams, and the confidence of the passage that answers it counts them
// in its quoted sentences (it read "0 of 1 question terms" before).
func TestCJKKeywords(t *testing.T) {
	got := cjkKeywords(ExtractKeywords("受験者数はどこで入力しますか kayak postgresqlの設定", nil))
	want := []string{"受験", "験者", "者数", "数は", "で入", "入力", "力し", "kayak", "postgresql", "の設", "設定"}
	if !slices.Equal(got, want) {
		t.Errorf("cjkKeywords = %q\nwant %q", got, want)
	}
	q := "受験者数はどこで入力しますか"
	c := &confidenceChecker{question: q, keywords: cjkKeywords(ExtractKeywords(q, searchStopWords)), absent: map[string]bool{}}
	score, basis := c.evidenceConfidence(t.Context(), "採点の前に答案を読み込みます。試験の準備では、まず受験者数を入力してから、試験問題用紙を印刷してください。", false, 0, 0)
	if score < 6 || !strings.HasPrefix(basis, "5 of 7 question terms") {
		t.Errorf("confidence %d (%s), want 5 of the 7 bigrams quoted", score, basis)
	}
}
