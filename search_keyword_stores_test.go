package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// kwTestStore is one store under the keyword tests of this file, behind
// the few calls they make.
type kwTestStore struct {
	index        func(docs []*ai.Document) error
	deleteSource func(source string) error
	search       func(query string, stop map[string]bool) ([]*ai.Document, error)
	searchText   func(query string) ([]*ai.Document, error) // Searcher.SearchText, its first 100
}

// kwTestOpeners returns a constructor of a new, empty store of each kind:
// LocalvecStore, SQLiteStore and PgvecStore (the last skips its subtest,
// or fails under scripts/test, without a database).
func kwTestOpeners() map[string]func(t *testing.T) kwTestStore {
	ctx := context.Background()
	return map[string]func(t *testing.T) kwTestStore{
		"localvec": func(t *testing.T) kwTestStore {
			s, err := NewLocalvecStore(genkit.Init(ctx), "kw", newTestEmbedder(8), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return kwTestStore{
				index:        func(d []*ai.Document) error { return s.Index(ctx, d) },
				deleteSource: func(src string) error { _, err := s.DeleteBySource(ctx, src); return err },
				search: func(q string, stop map[string]bool) ([]*ai.Document, error) {
					return s.KeywordSearch(ctx, q, 0, stop, nil)
				},
				searchText: func(q string) ([]*ai.Document, error) { return s.SearchText(ctx, q, 100, nil) },
			}
		},
		"sqlite": func(t *testing.T) kwTestStore {
			s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "kw.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return kwTestStore{
				index:        func(d []*ai.Document) error { return s.Index(ctx, d) },
				deleteSource: func(src string) error { _, err := s.DeleteBySource(ctx, src); return err },
				search: func(q string, stop map[string]bool) ([]*ai.Document, error) {
					return s.keywordSearch(ctx, q, 0, stop, nil)
				},
				searchText: func(q string) ([]*ai.Document, error) { return s.SearchText(ctx, q, 100, nil) },
			}
		},
		"pgvec": func(t *testing.T) kwTestStore {
			s := pgTestStoreWith(t, newTestEmbedder(8), 8, &PgvecOptions{TextSearchConfig: "english"})
			return kwTestStore{
				index:        func(d []*ai.Document) error { return s.Index(ctx, d) },
				deleteSource: func(src string) error { _, err := s.DeleteBySource(ctx, src); return err },
				search: func(q string, stop map[string]bool) ([]*ai.Document, error) {
					return s.KeywordSearch(ctx, q, 0, stop, "", nil)
				},
				searchText: func(q string) ([]*ai.Document, error) { return s.SearchText(ctx, q, 100, nil) },
			}
		},
	}
}

// kwTestDocs returns one document per text, all of source src.
func kwTestDocs(src string, texts ...string) []*ai.Document {
	out := make([]*ai.Document, len(texts))
	for i, x := range texts {
		out[i] = ai.DocumentFromText(x, map[string]any{MetaSource: src, MetaURL: "file:///" + src})
	}
	return out
}

// kwTestTexts returns the texts of docs.
func kwTestTexts(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = DocText(d)
	}
	return out
}

// TestKeywordIdentifierWholeOutranksScattered checks, on every store,
// that a query naming an identifier ranks the chunk holding it whole above
// chunks holding its parts scattered, even when those hold the parts more
// often.
func TestKeywordIdentifierWholeOutranksScattered(t *testing.T) {
	cases := []struct{ query, whole, scattered string }{
		{"max_log_file_size", "Set max_log_file_size in the configuration to bound it.",
			"The max size of a log file: when the log file grows past the size, the file is rotated."},
		{"http.server.read_timeout", "The key http.server.read_timeout bounds slow clients.",
			"An HTTP server has a read timeout; the server read loop uses the timeout of http requests."},
		{"CMAKE_BUILD_TYPE", "Pass -DCMAKE_BUILD_TYPE=Release for optimised builds.",
			"The build type of CMake: a CMake build of any type, the type of build."},
		{"--allow-private", "Run with --allow-private to crawl intranet hosts.",
			"Private hosts are not allowed: allow them in private networks, allow lists."},
		{"filepath.Join", "Paths are built with filepath.Join.",
			"Join the path parts: filepath handling, join and filepath cleaning."},
		{"HashMap::new", "let m = HashMap::new();",
			"A new map: a hash map is new, hash every key of the new map."},
		{"how do I set max_log_file_size", "Set max_log_file_size in the configuration to bound it.",
			"How do I set the max size of a log file? Set the file size of the log."},
	}
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			var docs []*ai.Document
			for i, c := range cases {
				docs = append(docs, kwTestDocs(fmt.Sprintf("d%d", i), c.whole, c.scattered)...)
			}
			if err := s.index(docs); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				got, err := s.search(c.query, QuestionStopWords())
				if err != nil {
					t.Fatal(err)
				}
				texts := kwTestTexts(got)
				iw, is := slices.Index(texts, c.whole), slices.Index(texts, c.scattered)
				if iw != 0 || is < 0 {
					t.Errorf("%q: whole at %d, scattered at %d (want 0 and found): %q", c.query, iw, is, texts)
				}
			}
		})
	}
}

// TestKeywordStopWordsKeepContent checks, on every store, that the
// question stop list does not reduce a query below its content: a
// stop-listed word few chunks hold ("show" in a manual of commands) still
// ranks, and a query of stop-listed words alone still finds chunks, while
// a stop-listed word most chunks hold ("the") does not reorder anything.
func TestKeywordStopWordsKeepContent(t *testing.T) {
	var texts []string
	for i := range 60 {
		texts = append(texts, fmt.Sprintf("The commit %d of the branch records the changes of the tree.", i))
	}
	show := "Use git show to display the commits of a branch."
	log := "The log of the commits of a branch, newest first."
	what := "What is it? It is a shell."
	texts = append(texts, show, log, what)
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if err := s.index(kwTestDocs("manual", texts...)); err != nil {
				t.Fatal(err)
			}
			stop := QuestionStopWords()
			for _, c := range []struct{ query, first string }{
				{"How do I show the commits of a branch?", show},
				{"show commits", show},
				{"What is it?", what},
				{"commits branch", log}, // the shortest chunk with both
			} {
				got, err := s.search(c.query, stop)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 || DocText(got[0]) != c.first {
					t.Errorf("%q: first %q, want %q", c.query, kwTestTexts(got[:min(3, len(got))]), c.first)
				}
			}
			// "the" is in every chunk: kept, it would change the order of
			// a query's results; left out, the order is the one without it.
			with, err := s.search("the branch tree", stop)
			if err != nil {
				t.Fatal(err)
			}
			without, err := s.search("branch tree", stop)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(kwTestTexts(with), kwTestTexts(without)) {
				t.Errorf("a common stop word changed the ranking:\n%q\n%q", kwTestTexts(with)[:3], kwTestTexts(without)[:3])
			}
		})
	}
}

// TestKeywordOrderSurvivesChurn checks, on every store, that the same
// chunks give the same keyword order in a fresh index and in one that went
// through re-index churn (other sources added and deleted, sources deleted
// and indexed again in another order): ties rank by a content-derived key
// and the statistics follow deletes.
func TestKeywordOrderSurvivesChurn(t *testing.T) {
	sources := map[string][]string{
		"a": {"alpha beta gamma", "alpha beta delta", "the alpha release notes"},
		"b": {"alpha beta epsilon", "beta gamma delta", "gamma rays and alpha particles"},
		"c": {"alpha beta zeta", "delta delta alpha", "release of beta"},
		"d": {"alpha beta eta", "theta alpha beta", "beta alpha"},
	}
	order := []string{"a", "b", "c", "d"}
	queries := []string{"alpha", "beta", "alpha beta", "gamma delta", "release", "alpha particles"}
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			fresh := open(t)
			for _, src := range order {
				if err := fresh.index(kwTestDocs(src, sources[src]...)); err != nil {
					t.Fatal(err)
				}
			}
			churned := open(t)
			junk := func(src string) []*ai.Document {
				var texts []string
				for i := range 40 {
					texts = append(texts, fmt.Sprintf("alpha junk %s %d beta beta", src, i))
				}
				return kwTestDocs(src, texts...)
			}
			for round := range 3 {
				j := fmt.Sprintf("junk%d", round)
				if err := churned.index(junk(j)); err != nil {
					t.Fatal(err)
				}
				for i := range order {
					src := order[(len(order)-1-i+round)%len(order)]
					if err := churned.deleteSource(src); err != nil {
						t.Fatal(err)
					}
					if err := churned.index(kwTestDocs(src, sources[src]...)); err != nil {
						t.Fatal(err)
					}
				}
				if err := churned.deleteSource(j); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range queries {
				want, err := fresh.search(q, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := churned.search(q, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) < 2 || !slices.Equal(kwTestTexts(got), kwTestTexts(want)) {
					t.Errorf("%q after churn:\n%q\nfresh:\n%q", q, kwTestTexts(got), kwTestTexts(want))
				}
			}
		})
	}
}

// TestKeywordForeignStopWords checks, on every store (SearchText, the
// keyword list of Search), that a German stop word counts as one only in
// an index holding German text: in an English manual "des" names the DES
// cipher and ranks the chunk holding both words first, in a German one it
// changes nothing.
func TestKeywordForeignStopWords(t *testing.T) {
	var english, german []string
	for i := range 40 {
		english = append(english, fmt.Sprintf("Encryption of the data in step %d uses the encryption key and encryption modes.", i))
		if i%2 == 0 {
			german = append(german, fmt.Sprintf("Die Verschlüsselung und der Modus im Schritt %d.", i))
		} else {
			german = append(german, fmt.Sprintf("Die Schlüssel des Schritts %d und des Modus und des Geräts.", i))
		}
	}
	for i := range 4 {
		english = append(english, fmt.Sprintf("The DES cipher %d, DES keys and DES parity.", i))
	}
	desEnc := "DES encryption of one block."
	english = append(english, desEnc)
	for name, open := range kwTestOpeners() {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			if err := s.index(kwTestDocs("en", english...)); err != nil {
				t.Fatal(err)
			}
			got, err := s.searchText("DES encryption")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || DocText(got[0]) != desEnc {
				t.Errorf("English index, %q: first %q, want %q", "DES encryption", kwTestTexts(got[:min(3, len(got))]), desEnc)
			}
			de := open(t)
			if err := de.index(kwTestDocs("de", german...)); err != nil {
				t.Fatal(err)
			}
			with, err := de.searchText("Verschlüsselung des Modus")
			if err != nil {
				t.Fatal(err)
			}
			without, err := de.searchText("Verschlüsselung Modus")
			if err != nil {
				t.Fatal(err)
			}
			if len(with) == 0 || !slices.Equal(kwTestTexts(with), kwTestTexts(without)) {
				t.Errorf("German index: \"des\" changed the ranking:\n%q\n%q", kwTestTexts(with)[:min(3, len(with))], kwTestTexts(without)[:min(3, len(without))])
			}
		})
	}
}
