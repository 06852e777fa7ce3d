package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
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
		{`German „Max  Mustermann“ and „other”`, []string{"Max Mustermann", "other"}},
		{`English “smart quotes” here`, []string{"smart quotes"}},
		{`French «entre guillemets» and »umgekehrt«`, []string{"entre guillemets", "umgekehrt"}},
		{`unclosed "quote stays`, nil},
		{`empty "" and "   " quotes`, nil},
		{`mixed "one» two"`, []string{"one» two"}},
		{`metachars "100% _x_ o'neil \d"`, []string{`100% _x_ o'neil \d`}},
		{"\"multi\nline\tphrase\"", []string{"multi line phrase"}},
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
		{`E-Mail-Adresse: a@b.de`, []string{"mail", "adresse", "de"}},
		{`100% of the 2024 budget_items`, []string{"100", "of", "2024", "budget", "items"}},
		{`' % _ \ ; -- */`, nil},
		{`der die und`, nil},
		{`x y z ab`, []string{"ab"}},
		{`Café café CAFÉ`, []string{"café"}},
		{`naïve` + "\u0301" + ` 東京 タワー`, []string{"naïve\u0301", "東京", "タワー"}},
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
	p := newKeywordPlan(`„Max Mustermann“ Rechnungen Protokoll von`, nil)
	got, err := p.search(t.Context(), docs, 0, func(m map[string]any) bool { return m["hidden"] == nil })
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for _, d := range got {
		order = append(order, d.Metadata["n"].(int))
	}
	if want := []int{1, 3, 0, 5}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	got, _ = p.search(t.Context(), docs, 2, nil)
	if len(got) != 2 || got[0].Metadata["n"] != 1 || got[1].Metadata["n"] != 6 {
		t.Errorf("capped unfiltered search: %v", docMetaN(got))
	}
	if got, err := newKeywordPlan("the a", map[string]bool{"the": true}).search(t.Context(), docs, 5, nil); err != nil || got != nil {
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
