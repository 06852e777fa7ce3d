package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

func TestExtractQuotedPhrases(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{``, nil},
		{`no quotes here`, nil},
		{`find "exact phrase" please`, []string{"exact phrase"}},
		{`"a" and "b c" and "a"`, []string{"a", "b c"}},
		{`German „Max  Mustermann“ and „other”`, []string{"max mustermann", "other"}},
		{`English “smart quotes” here`, []string{"smart quotes"}},
		{`French «entre guillemets» and »umgekehrt«`, []string{"entre guillemets", "umgekehrt"}},
		{`unclosed "quote stays`, nil},
		{`empty "" and "   " quotes`, nil},
		{`mixed "one» two"`, []string{"one» two"}},
		{`metachars "100% _x_ o'neil \d"`, []string{`100% _x_ o'neil \d`}},
		{"\"multi\nline\tphrase\"", []string{"multi line phrase"}},
		{`「印刷」ボタンと『設定ファイル』`, []string{"印刷", "設定ファイル"}},
		{`点击“保存”按钮，再看〝注意〟`, []string{"保存", "注意"}},
		{`「閉じない`, nil},
		// The original engine's: single quotes, and phrases lower-cased.
		{`Suche 'Modulhandbuch Informatik' bitte`, []string{"modulhandbuch informatik"}},
		{`'Erster Teil' und "Zweiter TEIL" und 'erster teil'`, []string{"erster teil", "zweiter teil"}},
		{`typographic ‘Single Quotes’ and German ‚Einfache‘`, []string{"single quotes", "einfache"}},
		// Apostrophes are not quotes.
		{`don't stop o'neil's music`, nil},
		{`Peter's 'red car' isn't here`, []string{"red car"}},
		{`rock 'n' roll`, []string{"n"}},
		{`'unclosed single`, nil},
		{`it's 'quoted, isn't it' now`, []string{"quoted, isn't it"}},
	}
	for _, tt := range tests {
		if got := ExtractQuotedPhrases(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("ExtractQuotedPhrases(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExtractKeywords(t *testing.T) {
	stop := map[string]bool{"der": true, "die": true, "und": true, "finde": true, "the": true}
	tests := []struct {
		in   string
		want []string
	}{
		{``, nil},
		{`Finde die Protokolle und der Beschlüsse`, []string{"protokolle", "beschlüsse"}},
		{`Straße STRASSE straße`, []string{"straße", "strasse"}},
		{`E-Mail-Adresse: a@b.de`, []string{"mail", "adresse"}},
		{`100% of the 2024 budget_items`, []string{"100", "2024", "budget", "items"}},
		{`' % _ \ ; -- */`, nil},
		{`der die und`, nil},
		{`x y z ab abc`, []string{"abc"}}, // 3+ letters, as the original engine
		{`Café café CAFÉ`, []string{"café"}},
		{`naïve` + "\u0301" + ` 東京都 タワー 東京`, []string{"naïve\u0301", "東京都", "タワー", "東京"}}, // two CJK characters are a keyword
	}
	for _, tt := range tests {
		if got := ExtractKeywords(tt.in, stop); !slices.Equal(got, tt.want) {
			t.Errorf("ExtractKeywords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := ExtractKeywords("The end", nil); !slices.Equal(got, []string{"the", "end"}) {
		t.Errorf("nil stop words: %q", got)
	}
}

func TestKeywordPlan(t *testing.T) {
	stop := map[string]bool{"zeige": true, "die": true}
	p := newKeywordPlan(`Zeige die Rechnungen von „Max Mustermann“ zum Protokoll`, stop)
	if !slices.Equal(p.phrases, []string{"max mustermann"}) {
		t.Errorf("phrases %q", p.phrases)
	}
	if !slices.Equal(p.keywords, []string{"rechnungen", "von", "zum", "protokoll"}) {
		t.Errorf("keywords %q", p.keywords)
	}
	if !slices.Equal(p.prefixes, []string{"rechnun", "protoko"}) {
		t.Errorf("prefixes %q", p.prefixes)
	}
	if !newKeywordPlan(`die zeige ?? %%`, stop).empty() {
		t.Error("stop words and punctuation only: plan not empty")
	}
}

func TestKeywordLikePattern(t *testing.T) {
	for in, want := range map[string]string{
		"abc":     "%abc%",
		"100%":    `%100\%%`,
		"a_b":     `%a\_b%`,
		`c:\dir`:  `%c:\\dir%`,
		"o'neil":  "%o'neil%",
		`\%_`:     `%\\\%\_%`,
		"":        "%%",
		"straße":  "%straße%",
		"50%_off": `%50\%\_off%`,
	} {
		if got := keywordLikePattern(in); got != want {
			t.Errorf("keywordLikePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeywordPlanSearchRanksStages(t *testing.T) {
	docs := []*ai.Document{
		ai.DocumentFromText("Die Rechnung wurde bezahlt.", map[string]any{"n": 0}),                    // prefix only
		ai.DocumentFromText("Protokoll der Sitzung von Max Mustermann.", map[string]any{"n": 1}),      // phrase + keyword
		ai.DocumentFromText("Nichts hier.", map[string]any{"n": 2}),                                   // nothing
		ai.DocumentFromText("Rechnungen und Protokolle im Archiv.", map[string]any{"n": 3}),           // two prefixes
		ai.DocumentFromText("Die Rechnung wurde bezahlt.", map[string]any{"n": 4}),                    // duplicate text
		ai.DocumentFromText("Zum Archiv von 2024.", map[string]any{"n": 5}),                           // short keywords
		ai.DocumentFromText("max mustermann hat rechnungen.", map[string]any{"n": 6, "hidden": true}), // filtered
	}
	search := func(q string, stop map[string]bool, maxN int, filter func(map[string]any) bool) ([]*ai.Document, error) {
		an, _ := newTextAnalyzer("german")
		return newLocalvecBM25(an, docs).search(t.Context(), newBM25Plan(an, q, stop), docs, nil, maxN, filter)
	}
	const q = `„Max Mustermann“ Rechnungen Protokoll von`
	got, err := search(q, nil, 0, func(m map[string]any) bool { return m["hidden"] == nil })
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, d := range got {
		order = append(order, d.Metadata["n"].(int))
	}
	// Phrase first; then all of rechnung, protokoll, von (none has all);
	// then any, by BM25: 3 has two terms, 0 and 5 one each (the shorter 5
	// wins); 4 repeats 0's text.
	if want := []int{1, 3, 5, 0}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	got, _ = search(q, nil, 2, nil)
	if len(got) != 2 || got[0].Metadata["n"] != 1 || got[1].Metadata["n"] != 6 {
		t.Errorf("capped unfiltered search: %v", docMetaN(got))
	}
	if got, err := search("the", map[string]bool{"the": true}, 5, nil); err != nil || got != nil {
		t.Errorf("empty plan: %v, %v", got, err)
	}
}

func docMetaN(docs []*ai.Document) string {
	var s []string
	for _, d := range docs {
		s = append(s, fmt.Sprint(d.Metadata["n"]))
	}
	return fmt.Sprint(s)
}

func TestLocalvecKeywordSearchFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := NewLocalvecStore(genkit.Init(ctx), "kw", newTestEmbedder(16), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	texts := []string{
		"Rabatt von 50% auf alle Artikel",
		"Die Variable user_name enthält den Namen",
		"O'Neil schrieb den Bericht",
		`Pfad C:\daten\bericht.pdf`,
		"Ein Bericht über 50 Artikel",
		"Der Jahresbericht 2024",
	}
	docs := make([]*ai.Document, len(texts))
	for i, x := range texts {
		docs[i] = ai.DocumentFromText(x, map[string]any{"i": i})
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	stop := map[string]bool{"der": true, "die": true, "den": true}
	tests := []struct {
		query string
		want  []string // texts, in order
	}{
		{`"50%"`, texts[:1]},
		{`"user_name"`, texts[1:2]},
		{`"O'Neil"`, texts[2:3]},
		{`"C:\daten"`, texts[3:4]},
		{`%`, texts[:1]}, // a symbol token
		{`_`, nil},
		{`'`, nil},
		{`\`, texts[3:4]},
		{`' OR 1=1 --`, nil},                      // no text holds "or", "1", "=" or "--"
		{`% _ ' \`, []string{texts[3], texts[0]}}, // the shorter text first
		{`der die den`, []string{texts[1], texts[5], texts[2]}}, // only stop words: they are the content
		{``, nil},
		{`„Jahresbericht“`, texts[5:6]},
		{`Jahresberichte`, texts[5:6]},                      // stemmed: jahresbericht
		{`Bericht`, []string{texts[2], texts[3], texts[4]}}, // a word, not a substring of "Jahresbericht"
	}
	for _, tt := range tests {
		for name, search := range map[string]func() ([]*ai.Document, error){
			"file":  func() ([]*ai.Document, error) { return LocalvecKeywordSearch(s.path, tt.query, 10, stop, nil) },
			"store": func() ([]*ai.Document, error) { return s.KeywordSearch(ctx, tt.query, 10, stop, nil) },
		} {
			got, err := search()
			if err != nil {
				t.Errorf("%s %q: %v", name, tt.query, err)
				continue
			}
			g := localvecTexts(got)
			if tt.query == "Bericht" {
				slices.Sort(g)
				slices.Sort(tt.want)
			}
			if !slices.Equal(g, tt.want) {
				t.Errorf("%s %q = %q, want %q", name, tt.query, g, tt.want)
			}
		}
	}
	// Filter on metadata read from the file (numbers are float64 there).
	got, err := LocalvecKeywordSearch(s.path, "bericht", 10, nil, func(m map[string]any) bool { return m["i"] == float64(4) })
	if err != nil || len(got) != 1 || DocText(got[0]) != texts[4] {
		t.Errorf("filtered: %q, %v", localvecTexts(got), err)
	}
	if _, err := LocalvecKeywordSearch(filepath.Join(dir, "missing.json"), "x", 5, nil, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("[1,2"), 0o644)
	if _, err := LocalvecKeywordSearch(bad, "x", 5, nil, nil); err == nil {
		t.Error("malformed file: no error")
	}
}

func FuzzKeywordPlan(f *testing.F) {
	for _, s := range []string{
		``, `"`, `„“`, `«»`, `»«`, `"a" "b"`, `„Max Mustermann“ Rechnungen`, `' OR 1=1 --`, `%_\`,
		"\xff\xfe\"broken", `Straße STRASSE`, "\u0301\u0301", `"unclosed`, `“nested "quotes" here”`,
	} {
		f.Add(s)
	}
	stop := map[string]bool{"der": true, "the": true}
	f.Fuzz(func(t *testing.T, q string) {
		p := newKeywordPlan(q, stop)
		for _, k := range p.keywords {
			if k != strings.ToLower(k) || stop[k] || utf8.RuneCountInString(k) < keywordMinRunes {
				t.Errorf("bad keyword %q", k)
			}
			if strings.ContainsAny(k, `%_'\" `) {
				t.Errorf("keyword %q holds a separator", k)
			}
		}
		for _, ph := range p.phrases {
			if ph == "" || ph != strings.TrimSpace(ph) {
				t.Errorf("bad phrase %q", ph)
			}
		}
		for _, pre := range p.prefixes {
			if utf8.RuneCountInString(pre) != keywordPrefixRunes {
				t.Errorf("bad prefix %q", pre)
			}
		}
		// Searching a document made of the query itself never fails, and
		// finds it whenever the plan is not empty.
		d := []*ai.Document{ai.DocumentFromText(q, nil)}
		bp := newBM25Plan(localvecDefaultAnalyzer, q, stop)
		got, err := newLocalvecBM25(localvecDefaultAnalyzer, d).search(t.Context(), bp, d, nil, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bp.empty() && len(got) != 1 && utf8.ValidString(q) {
			t.Errorf("query %q does not find itself", q)
		}
	})
}
