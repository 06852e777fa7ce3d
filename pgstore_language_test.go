package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// pgRecordedLanguage returns the store's recorded configuration and
// whether it still follows the documents.
func pgRecordedLanguage(t *testing.T, s *PgvecStore) (string, bool) {
	t.Helper()
	var config string
	var auto bool
	if err := s.Pool.QueryRow(t.Context(), `SELECT ts_config, ts_auto FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&config, &auto); err != nil {
		t.Fatal(err)
	}
	return config, auto
}

// TestPgvecTextSearchFollowsDocuments: a new store without a
// configuration follows its documents (a second handle, opened before,
// searches in the new one), stops at pgvecLanguageSettleChunks, and the
// tsvector column follows too; a named configuration ends the rule.
func TestPgvecTextSearchFollowsDocuments(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	name := pgTestStoreName(t)
	pgTestDropStore(t, dsn, name)
	emb := NewLocalEmbedder(32)
	open := func(o *PgvecOptions) *PgvecStore {
		s, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, 32, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := open(nil)
	b := open(nil)
	if c, auto := pgRecordedLanguage(t, a); c != "english" || !auto {
		t.Fatalf("new store: %q, follows %v; want english, true", c, auto)
	}
	if err := a.Index(ctx, langAutoDocs("en", "installs", "en", 3)); err != nil {
		t.Fatal(err)
	}
	if err := a.Index(ctx, langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if c, auto := pgRecordedLanguage(t, a); c != "simple" || !auto {
		t.Fatalf("after German: %q, follows %v; want simple, true", c, auto)
	}
	if got := keywordURLs(t, b, "installs"); !slices.Equal(got, []string{"en"}) {
		t.Errorf("second handle: installs finds %v, want [en]", got)
	}
	if got := keywordURLs(t, b, "installing"); len(got) != 0 {
		t.Errorf("second handle: installing finds %v, want nothing", got)
	}
	// The tsvector column was made again in the new configuration.
	var stems int
	if err := a.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(a.Table())+` WHERE tsv @@ 'installs'::tsquery`).Scan(&stems); err != nil {
		t.Fatal(err)
	}
	if stems != 3 {
		t.Errorf("tsvector column: %d chunks hold the unstemmed lexeme installs, want 3", stems)
	}

	if err := a.Index(ctx, langAutoDocs("de2", "Verzeichnis", "de", pgvecLanguageSettleChunks)); err != nil {
		t.Fatal(err)
	}
	if c, auto := pgRecordedLanguage(t, a); c != "simple" || auto {
		t.Fatalf("settled: %q, follows %v; want simple, false", c, auto)
	}
	if err := a.Index(ctx, langAutoDocs("en2", "installs", "en", pgvecLanguageSettleChunks+100)); err != nil {
		t.Fatal(err)
	}
	if c, _ := pgRecordedLanguage(t, a); c != "simple" {
		t.Fatalf("after settling, English chunks changed the configuration to %q", c)
	}
	if got := keywordURLs(t, b, "installing"); len(got) != 0 {
		t.Errorf("settled: installing finds %v", got)
	}
	// Reopened without options: the recorded one, silently.
	if c := open(nil).curLang().name; c != "simple" {
		t.Errorf("reopened: %q, want simple", c)
	}

	// A named configuration ends the rule at once.
	other := pgTestStoreWith(t, emb, 32, &PgvecOptions{TextSearchConfig: "english"})
	if err := other.Index(ctx, langAutoDocs("de", "Paketverwaltung", "de", 5)); err != nil {
		t.Fatal(err)
	}
	if c, auto := pgRecordedLanguage(t, other); c != "english" || auto {
		t.Errorf("named english: %q, follows %v; want english, false", c, auto)
	}
}

// TestPgvecTextSearchConcurrentWriters: writers re-indexing several
// sources at once (each keeps a chunk, so each reads the chunk table
// first) while the store's configuration flips from English stems to none
// (which re-makes the tsvector column), and searches beside them, all
// succeed, and the end state ranks every source's chunks.
func TestPgvecTextSearchConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	emb := NewLocalEmbedder(32)
	s := pgTestStoreWith(t, emb, 32, nil)
	index := func(url, code string, texts ...string) error {
		src := &ingestTestSource{url: url, texts: texts, meta: map[string]any{metaLanguage: code}}
		_, _, err := IndexSource(ctx, s, src, 500, 0, nil)
		return err
	}
	deText := func(i int) string { return fmt.Sprintf("Paketverwaltung Abschnitt %d", i) }
	for i := range 4 {
		if err := index(fmt.Sprintf("en%d", i), "en", fmt.Sprintf("installs the packages of part %d", i), fmt.Sprintf("removes part %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		if err := index(fmt.Sprintf("de%d", i), "de", deText(i)); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := pgRecordedLanguage(t, s); c != "english" {
		t.Fatalf("configuration %q with 8 English and 6 German chunks, want english", c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 6 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := index(fmt.Sprintf("de%d", i), "de", deText(i), fmt.Sprintf("Verzeichnisse Abschnitt %d", i),
				fmt.Sprintf("Dateien Abschnitt %d", i), fmt.Sprintf("Benutzer Abschnitt %d", i)); err != nil {
				errs <- fmt.Errorf("writer %d: %w", i, err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := searchHits(Search(ctx, s, "Paketverwaltung installs", &SearchOptions{Mode: SearchModeKeyword})); err != nil {
				errs <- fmt.Errorf("search %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c, _ := pgRecordedLanguage(t, s); c != "simple" {
		t.Errorf("configuration %q after 24 German and 8 English chunks (counted at 16 and 32), want simple", c)
	}
	if got := keywordURLs(t, s, "Verzeichnisse"); len(got) != 6 {
		t.Errorf("Verzeichnisse finds %d sources, want 6: %v", len(got), got)
	}
	if got := keywordURLs(t, s, "installs"); len(got) != 4 {
		t.Errorf("installs finds %v, want the four English sources", got)
	}
}
