package engine

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

func TestKeywordLanguageFor(t *testing.T) {
	for _, c := range []struct {
		counts map[string]int
		want   string
	}{
		{nil, "english"},
		{map[string]int{"": 40}, "english"},
		{map[string]int{"en": 3, "de": 2, "": 50}, "english"},
		{map[string]int{"en": 2, "de": 3}, "simple"},
		{map[string]int{"ja": 5, "en": 4}, "simple"},
		{map[string]int{"fr": 1}, "simple"},
		{map[string]int{"en": 2, "de": 2}, "english"}, // a tie keeps English stems
		{map[string]int{"de": 2, "fr": 2, "en": 1}, "simple"},
	} {
		if got := keywordLanguageFor(c.counts); got != c.want {
			t.Errorf("keywordLanguageFor(%v) = %q, want %q", c.counts, got, c.want)
		}
	}
}

// langAutoDocs returns n chunks of url, each "<word> <i>" and tagged with
// language code (none when code is "").
func langAutoDocs(url, word, code string, n int) []*ai.Document {
	docs := make([]*ai.Document, n)
	for i := range docs {
		m := map[string]any{MetaURL: url, MetaSource: url}
		if code != "" {
			m[metaLanguage] = code
		}
		docs[i] = ai.DocumentFromText(fmt.Sprintf("%s page %d of %s", word, i, url), m)
	}
	return docs
}

// sqliteRecordedLanguage returns the database's language and whether it
// still follows the documents.
func sqliteRecordedLanguage(t *testing.T, s *SQLiteStore) (string, bool) {
	t.Helper()
	var lang string
	var auto int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT (SELECT value FROM meta WHERE key = 'language'), (SELECT count(*) FROM meta WHERE key = 'language_auto')`).Scan(&lang, &auto); err != nil {
		t.Fatal(err)
	}
	return lang, auto > 0
}

// keywordURLs returns the URLs of a keyword search's hits.
func keywordURLs(t *testing.T, s Searcher, q string) []string {
	t.Helper()
	hits, err := searchHits(Search(t.Context(), s, q, &SearchOptions{Mode: SearchModeKeyword}))
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, h := range hits {
		if !slices.Contains(urls, h.URL) {
			urls = append(urls, h.URL)
		}
	}
	return urls
}

// TestSQLiteKeywordLanguageFollowsDocuments: a new database without a
// keyword language takes English stems while its chunks are English and no
// stemming once most are German, rebuilding the terms of the chunks it
// holds (a second handle, opened before, searches in the new language
// too); at sqliteLanguageSettleChunks chunks the choice stays; a language
// the app names, or a database made before the rule, is never changed.
func TestSQLiteKeywordLanguageFollowsDocuments(t *testing.T) {
	emb := NewLocalEmbedder(64)
	path := filepath.Join(t.TempDir(), "auto.db")
	a, err := NewSQLiteStore(t.Context(), nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewSQLiteStore(t.Context(), nil, emb, path, nil) // another process's handle
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if lang, auto := sqliteRecordedLanguage(t, a); lang != "english" || !auto {
		t.Fatalf("new database: language %q, follows documents %v; want english, true", lang, auto)
	}

	// English first: English stems ("installing" finds "installs").
	if err := a.Index(t.Context(), langAutoDocs("en", "installs", "en", 3)); err != nil {
		t.Fatal(err)
	}
	if got := keywordURLs(t, b, "installing"); !slices.Equal(got, []string{"en"}) {
		t.Fatalf("english: installing finds %v, want [en]", got)
	}
	// Then more German chunks: no stemming, the English chunks re-analysed.
	if err := a.Index(t.Context(), langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if lang, auto := sqliteRecordedLanguage(t, a); lang != "simple" || !auto {
		t.Fatalf("after German: language %q, follows %v; want simple, true", lang, auto)
	}
	for _, s := range []*SQLiteStore{a, b} {
		if got := keywordURLs(t, s, "installing"); len(got) != 0 {
			t.Errorf("simple: installing finds %v, want nothing (no stemming)", got)
		}
		if got := keywordURLs(t, s, "installs"); !slices.Equal(got, []string{"en"}) {
			t.Errorf("simple: installs finds %v, want [en] (the rebuilt terms)", got)
		}
		if got := keywordURLs(t, s, "paketverwaltung"); !slices.Equal(got, []string{"de"}) {
			t.Errorf("simple: paketverwaltung finds %v, want [de]", got)
		}
		if l := s.KeywordLanguage(); l != "simple" {
			t.Errorf("KeywordLanguage() = %q after a search, want simple", l)
		}
	}

	// Past the settling size the choice stays, whatever comes next.
	if err := a.Index(t.Context(), langAutoDocs("de2", "Verzeichnis", "de", sqliteLanguageSettleChunks)); err != nil {
		t.Fatal(err)
	}
	if lang, auto := sqliteRecordedLanguage(t, a); lang != "simple" || auto {
		t.Fatalf("settled: language %q, follows %v; want simple, false", lang, auto)
	}
	if err := a.Index(t.Context(), langAutoDocs("en2", "installs", "en", sqliteLanguageSettleChunks+100)); err != nil {
		t.Fatal(err)
	}
	if lang, _ := sqliteRecordedLanguage(t, a); lang != "simple" {
		t.Fatalf("after settling, English chunks changed the language to %q", lang)
	}
	if got := keywordURLs(t, b, "installing"); len(got) != 0 {
		t.Errorf("settled: installing finds %v, want nothing", got)
	}

	// A language the app names stays, and ends the rule.
	fixed, err := NewSQLiteStore(t.Context(), nil, emb, filepath.Join(t.TempDir(), "fixed.db"), &SQLiteOptions{KeywordLanguage: "english"})
	if err != nil {
		t.Fatal(err)
	}
	defer fixed.Close()
	if err := fixed.Index(t.Context(), langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if lang, auto := sqliteRecordedLanguage(t, fixed); lang != "english" || auto {
		t.Errorf("named english: language %q, follows %v; want english, false", lang, auto)
	}
}

// TestSQLiteKeywordLanguageOldDatabase: a database made before the rule
// (no 'language_auto' key) keeps its language whatever it is given.
func TestSQLiteKeywordLanguageOldDatabase(t *testing.T) {
	emb := NewLocalEmbedder(64)
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := NewSQLiteStore(t.Context(), nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(t.Context(), `DELETE FROM meta WHERE key = 'language_auto'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = NewSQLiteStore(t.Context(), nil, emb, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Index(t.Context(), langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if lang, auto := sqliteRecordedLanguage(t, s); lang != "english" || auto {
		t.Errorf("old database: language %q, follows %v; want english, false", lang, auto)
	}
}

// TestKeywordLanguageDetectedEndToEnd: German text indexed through
// IndexSource (which detects its language) into a new SQLiteStore and a
// LocalvecStore gives both the same choice, no stemming, and the same
// keyword list; SetKeywordLanguage overrides it.
func TestKeywordLanguageDetectedEndToEnd(t *testing.T) {
	texts := []string{
		"Die Konfigurationsdatei liegt im Verzeichnis /etc und wird beim Start des Dienstes gelesen.",
		"Netzwerkschnittstellen werden mit dem Befehl ip angezeigt und bei Bedarf geändert.",
		"Vor der Datensicherung sollte genügend freier Speicherplatz auf dem Datenträger vorhanden sein.",
		"Die Protokolldateien enthalten Fehler und Warnungen des laufenden Systems und seiner Dienste.",
	}
	emb := NewLocalEmbedder(64)
	sq, err := NewSQLiteStore(t.Context(), nil, emb, filepath.Join(t.TempDir(), "de.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	lv, err := NewLocalvecStore(genkit.Init(t.Context()), "de", emb, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lv.Close()
	for _, s := range []VectorStore{sq, lv} {
		if _, _, err := IndexSource(t.Context(), s, &ingestTestSource{url: "handbuch", texts: texts}, 500, 50, nil); err != nil {
			t.Fatal(err)
		}
	}
	if l := sq.KeywordLanguage(); l != "simple" {
		t.Errorf("sqlite: language %q, want simple", l)
	}
	lv.mu.RLock()
	l := lv.keywordAnalyzer().language()
	lv.mu.RUnlock()
	if l != "simple" {
		t.Errorf("localvec: language %q, want simple", l)
	}
	for _, q := range []string{"Verzeichnis", "Protokolldateien Fehler", "Dienste"} {
		a, err := searchHits(Search(t.Context(), sq, q, &SearchOptions{Mode: SearchModeKeyword}))
		if err != nil {
			t.Fatal(err)
		}
		b, err := searchHits(Search(t.Context(), lv, q, &SearchOptions{Mode: SearchModeKeyword}))
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%q: sqlite %d hits, localvec %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i].Text != b[i].Text {
				t.Errorf("%q hit %d: sqlite %q, localvec %q", q, i, a[i].Text, b[i].Text)
			}
		}
	}
	// Unstemmed, "Dienste" is not "Dienstes"; German stems join them.
	if got := keywordURLs(t, lv, "Dienste"); len(got) != 1 {
		t.Fatalf("simple: Dienste finds %d pages, want 1", len(got))
	}
	if hits, _ := searchHits(Search(t.Context(), lv, "Dienste", &SearchOptions{Mode: SearchModeKeyword})); len(hits) != 1 {
		t.Errorf("simple: Dienste finds %d chunks, want 1", len(hits))
	}
	if err := lv.SetKeywordLanguage("german"); err != nil {
		t.Fatal(err)
	}
	lv.mu.RLock()
	l = lv.keywordAnalyzer().language()
	lv.mu.RUnlock()
	if l != "german" {
		t.Errorf("after SetKeywordLanguage(german): %q", l)
	}
	if hits, _ := searchHits(Search(t.Context(), lv, "Dienste", &SearchOptions{Mode: SearchModeKeyword})); len(hits) != 2 {
		t.Errorf("german: Dienste finds %d chunks, want 2 (Dienstes, Dienste)", len(hits))
	}
}

// langDienstDocs returns German chunks, one saying "Dienstes" and one
// "Dienste", which English stems join ("dienst") and no stemming keeps
// apart.
func langDienstDocs() []*ai.Document {
	de := func(url, text string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{MetaURL: url, MetaSource: "handbuch", metaLanguage: "de"})
	}
	return []*ai.Document{
		de("start", "Die Konfigurationsdatei wird beim Start des Dienstes gelesen."),
		de("protokoll", "Die Protokolldateien enthalten Warnungen der Dienste."),
		de("netz", "Netzwerkschnittstellen werden mit dem Befehl ip angezeigt."),
		de("sicherung", "Vor der Datensicherung braucht es freien Speicherplatz."),
		de("aufgaben", "Geplante Aufgaben laufen zu festen Zeiten."),
	}
}

// TestStoreConformanceLanguageRule: on every store, a new store without a
// keyword language takes English stems for English chunks and no stemming
// once most chunks are German (the English chunks re-analysed), the same
// lists on every store, and Sources names each source's language.
func TestStoreConformanceLanguageRule(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Searcher, _ *testEmbedder) {
		vs := s.(VectorStore)
		if err := vs.Index(t.Context(), langAutoDocs("en", "installs", "en", 3)); err != nil {
			t.Fatal(err)
		}
		if u := keywordURLs(t, s, "installing"); !slices.Equal(u, []string{"en"}) {
			t.Errorf("english stems: installing finds %v, want [en]", u)
		}
		if err := vs.Index(t.Context(), langDienstDocs()); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			q    string
			want []string
		}{
			{"installing", nil},          // no stemming now
			{"installs", []string{"en"}}, // the English chunks' terms rebuilt
			{"Dienste", []string{"protokoll"}},
			{"Dienstes", []string{"start"}},
			{"Protokolldateien Warnungen", []string{"protokoll"}},
		} {
			u := keywordURLs(t, s, c.q)
			if !slices.Equal(u, c.want) {
				t.Errorf("no stemming: %q finds %v, want %v", c.q, u, c.want)
			}
		}
		srcs, err := s.Sources(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range srcs {
			want := "de"
			if src.URL == "en" {
				want = "en"
			}
			if src.Language != want {
				t.Errorf("Sources: %s has language %q, want %q", src.URL, src.Language, want)
			}
		}
	})
}

// TestSQLiteKeywordLanguageCountsAtDoubling: the languages are counted
// again only once the database has doubled since the last count, so a
// write of German chunks into an emptied English database keeps English
// stems until then, and the count after it takes no stemming.
func TestSQLiteKeywordLanguageCountsAtDoubling(t *testing.T) {
	s := sqliteTestStore(t, filepath.Join(t.TempDir(), "d.db"), NewLocalEmbedder(64))
	if err := s.Index(t.Context(), langAutoDocs("en", "installs", "en", 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteByURL(t.Context(), "en"); err != nil {
		t.Fatal(err)
	}
	if err := s.Index(t.Context(), langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if lang, auto := sqliteRecordedLanguage(t, s); lang != "english" || !auto {
		t.Fatalf("5 chunks after a count at 10: %q, follows %v; want english, true (no count yet)", lang, auto)
	}
	if err := s.Index(t.Context(), langAutoDocs("de2", "Verzeichnis", "de", 15)); err != nil {
		t.Fatal(err)
	}
	if lang, _ := sqliteRecordedLanguage(t, s); lang != "simple" {
		t.Fatalf("20 German chunks after a count at 10: %q, want simple", lang)
	}
	if got := keywordURLs(t, s, "paketverwaltung"); !slices.Equal(got, []string{"de"}) {
		t.Errorf("paketverwaltung finds %v, want [de] (the terms rebuilt)", got)
	}
}

// TestCJKVerbatimRule: of two Japanese pages holding a description's
// bigrams, the one holding it as written ranks first on every store, though the other holds its bigrams more often;
// split by a space (two terms, not one phrase) the query is left to BM25.
func TestCJKVerbatimRule(t *testing.T) {
	docs := []*ai.Document{
		ai.DocumentFromText("設定ファイルの読み込みと設定の変更。ファイルを読み込む前に設定を読む。設定ファイル。",
			map[string]any{MetaURL: "scrambled", MetaSource: "man"}),
		ai.DocumentFromText("名前 nscd - 起動して設定ファイルを読み込む。要求を待つ。",
			map[string]any{MetaURL: "verbatim", MetaSource: "man"}),
		ai.DocumentFromText("ネットワークの設定を表示する。", map[string]any{MetaURL: "other", MetaSource: "man"}),
	}
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			s := indexedTestStore(t, name, NewLocalEmbedder(64), 64, docs)
			if got := keywordURLs(t, s, "設定ファイルを読み込む"); len(got) < 2 || got[0] != "verbatim" {
				t.Errorf("as written: %v, want verbatim first", got)
			}
			if got := keywordURLs(t, s, "設定 ファイルを読み込む"); len(got) < 2 || got[0] != "scrambled" {
				t.Errorf("two terms: %v, want BM25's order (scrambled first)", got)
			}
		})
	}
}

func TestCJKSpacedAndCompact(t *testing.T) {
	for q, want := range map[string]bool{
		"設定 ファイル": true, "HTML 文档 从文本文档创建": true, "設定ファイル": false,
		"GNU デバッガー": false, "ext2/ext3 ファイルシステムを作成する": false,
		"파일 시스템을 만든다": false, "「設定」 ファイル": false,
	} {
		if got := cjkSpaced(q); got != want {
			t.Errorf("cjkSpaced(%q) = %v, want %v", q, got, want)
		}
	}
	for in, want := range map[string]string{
		"設定ファイルを読み\n  込む": "設定ファイルを読み込む",
		"  ＧＮＵ   デバッガー ":  "gnu デバッガー",
		"ls -  ディレクトリ":    "ls - ディレクトリ",
	} {
		if got := cjkCompact(in); got != want {
			t.Errorf("cjkCompact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCJKMatcherAgreesWithCompact: the streaming matcher finds what
// strings.Contains finds in the compact form, on random texts of CJK,
// full-width and ASCII letters and white space.
func TestCJKMatcherAgreesWithCompact(t *testing.T) {
	alphabet := []rune("設定ファイルを読込むｶﾀｶﾅＡＢａbC \n\t　-")
	r := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		w := make([]rune, n)
		for i := range w {
			w[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(w)
	}
	for range 3000 {
		text := word(r.IntN(40))
		q := cjkCompact(word(1 + r.IntN(4)))
		if r.IntN(2) == 0 && len(text) > 0 {
			// A query taken from the text itself.
			c := []rune(text)
			i := r.IntN(len(c))
			q = cjkCompact(string(c[i:min(len(c), i+1+r.IntN(6))]))
		}
		if got, want := newCJKMatcher(q).in(text), strings.Contains(cjkCompact(text), q); got != want {
			t.Fatalf("text %q, query %q: matcher %v, Contains %v", text, q, got, want)
		}
	}
}
