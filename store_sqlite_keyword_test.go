package engine

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// keywordParityDocs returns n chunks of keywordBenchDocs' kind with
// metadata "n" and, for most, a breadcrumb drawn from the same vocabulary
// (so the BM25F boost changes the order), a few repeating another's text,
// some with merged headings (MetaHeadings); and every 20th chunk with a
// breadcrumb is followed by a chunk with its text and the breadcrumb's
// last two words swapped, which only the heading pairs tell apart.
func keywordParityDocs(n int) []*ai.Document {
	base := keywordBenchDocs(n)
	vocab := keywordBenchVocabulary(300)
	r := rand.New(rand.NewPCG(21, 22))
	rh := rand.New(rand.NewPCG(25, 26)) // merged headings: r's sequence stays as it was
	docs := make([]*ai.Document, n)
	for i, d := range base {
		text := DocText(d)[:200+r.IntN(600)]
		if i > 0 && r.IntN(25) == 0 {
			text = DocText(docs[r.IntN(i)])
		}
		meta := map[string]any{"n": i, MetaSource: "parity", MetaURL: fmt.Sprintf("file:///p%d", i/10)}
		if r.IntN(4) != 0 {
			meta[MetaBreadcrumb] = "Manual > " + vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		}
		if rh.IntN(5) == 0 {
			meta[MetaHeadings] = vocab[rh.IntN(len(vocab))] + "\n" + vocab[rh.IntN(len(vocab))] + " " + vocab[rh.IntN(len(vocab))]
		}
		docs[i] = ai.DocumentFromText(text, meta)
	}
	// Headings with a stop word between their words ("Manual > x the y"),
	// off the twins' positions below: the query's word-sequence pairs
	// ("x the", "the y") are index terms then.
	rs := rand.New(rand.NewPCG(27, 28))
	for i := range docs {
		crumb, _ := docs[i].Metadata[MetaBreadcrumb].(string)
		if w := strings.Fields(strings.TrimPrefix(crumb, "Manual > ")); i%20 >= 2 && len(w) == 2 && rs.IntN(4) == 0 {
			docs[i].Metadata[MetaBreadcrumb] = "Manual > " + w[0] + " the " + w[1]
		}
	}
	for i := 0; i+1 < n; i += 20 {
		crumb, _ := docs[i].Metadata[MetaBreadcrumb].(string)
		if w := strings.Fields(strings.TrimPrefix(crumb, "Manual > ")); len(w) == 2 && w[0] != w[1] {
			docs[i+1] = ai.DocumentFromText(DocText(docs[i]), map[string]any{"n": i + 1, MetaSource: "parity", MetaURL: docs[i+1].Metadata[MetaURL], MetaBreadcrumb: "Manual > " + w[1] + " " + w[0]})
		}
	}
	return docs
}

// keywordParityQueries returns queries of words from docs: plain, with a
// double- and a single-quoted phrase, with a breadcrumb word, with a word
// no chunk has, words of merged headings (MetaHeadings), breadcrumbs with
// a stop word and breadcrumbs with a swapped twin (keywordParityDocs).
func keywordParityQueries(docs []*ai.Document) []string {
	qs := keywordBenchQueries(docs, 40)
	r := rand.New(rand.NewPCG(23, 24))
	vocab := keywordBenchVocabulary(300)
	for i := range 20 {
		words := strings.Fields(DocText(docs[r.IntN(len(docs))]))
		a := r.IntN(len(words) - 3)
		ph := strings.Join(words[a:a+2], " ")
		switch i % 4 {
		case 0:
			qs = append(qs, `"`+ph+`" `+words[a+2])
		case 1:
			qs = append(qs, `'`+ph+`' `+vocab[r.IntN(len(vocab))])
		case 2:
			qs = append(qs, vocab[r.IntN(len(vocab))]+" "+words[a])
		default:
			qs = append(qs, words[a]+" zzqqxx")
		}
	}
	for _, d := range docs {
		if h, _ := d.Metadata[MetaHeadings].(string); h != "" && len(qs) < 70 {
			qs = append(qs, strings.ReplaceAll(h, "\n", " "))
		}
	}
	// Breadcrumbs with a stop word: the pairs of the word sequence score.
	with := 0
	for _, d := range docs {
		if crumb, _ := d.Metadata[MetaBreadcrumb].(string); strings.Contains(crumb, " the ") && with < 12 {
			qs = append(qs, strings.TrimPrefix(crumb, "Manual > "))
			with++
		}
	}
	// Breadcrumbs whose swapped twin follows: the heading pair decides.
	for i := 0; i+1 < len(docs); i += 20 {
		if crumb, _ := docs[i].Metadata[MetaBreadcrumb].(string); DocText(docs[i]) == DocText(docs[i+1]) && crumb != "" {
			qs = append(qs, strings.TrimPrefix(crumb, "Manual > "))
		}
	}
	return qs
}

// keywordSameOrder fails t unless got is want up to the reordering of
// results the reference ranking scores alike (same stage, score within
// 1e-9 relative): exact ties may fall either way.
func keywordSameOrder(t *testing.T, label string, got, want []*ai.Document, rank map[string]bm25Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d:\ngot  %s\nwant %s", label, len(got), len(want), docMetaN(got), docMetaN(want))
	}
	for i := range got {
		g, w := fmt.Sprint(got[i].Metadata["n"]), fmt.Sprint(want[i].Metadata["n"])
		if g == w {
			continue
		}
		hg, hw := rank[g], rank[w]
		if hg.stage != hw.stage || math.Abs(hg.score-hw.score) > 1e-9*math.Max(1, math.Abs(hw.score)) {
			t.Fatalf("%s: result %d is chunk %s (stage %d, score %.12g), want chunk %s (stage %d, score %.12g):\ngot  %s\nwant %s",
				label, i, g, hg.stage, hg.score, w, hw.stage, hw.score, docMetaN(got), docMetaN(want))
		}
	}
}

// keywordReferenceRank returns the hits of LocalvecStore's ranking of q
// over docs by their metadata "n", which keywordSameOrder consults for
// ties.
func keywordReferenceRank(t *testing.T, docs []*ai.Document, q string, stop map[string]bool) map[string]bm25Hit {
	t.Helper()
	an := localvecDefaultAnalyzer
	hits, err := newLocalvecBM25(an, docs).rank(t.Context(), newBM25Plan(an, q, stop), docs, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	rank := make(map[string]bm25Hit, len(hits))
	for _, h := range hits {
		rank[fmt.Sprint(docs[h.row].Metadata["n"])] = h
	}
	return rank
}

// TestSQLiteKeywordParityWithLocalvec indexes one corpus (breadcrumbs,
// repeated texts) into an SQLiteStore and a LocalvecStore and checks that
// their keyword searches return the same top 10 and the same full list,
// in the same order up to exact ties, for plain queries, quoted phrases
// (double and single quotes), breadcrumb words and a word no chunk has;
// also after reopens that migrate a schema 2 database (keyword index
// without breadcrumb terms) and a schema 3 one (without merged headings)
// to the current one.
func TestSQLiteKeywordParityWithLocalvec(t *testing.T) {
	ctx := t.Context()
	docs := keywordParityDocs(400)
	queries := keywordParityQueries(docs)
	local := keywordBenchStore(docs)
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	stop := map[string]bool{"the": true}
	check := func(label string, s *SQLiteStore) {
		t.Helper()
		nonEmpty := 0
		for _, q := range queries {
			rank := keywordReferenceRank(t, docs, q, stop)
			for _, maxN := range []int{10, 0} {
				want, err := local.KeywordSearch(ctx, q, maxN, stop, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.keywordSearch(ctx, q, maxN, stop, nil)
				if err != nil {
					t.Fatal(err)
				}
				keywordSameOrder(t, fmt.Sprintf("%s: query %q, max %d", label, q, maxN), got, want, rank)
				if len(want) > 0 {
					nonEmpty++
				}
			}
		}
		if nonEmpty < len(queries) {
			t.Fatalf("%s: only %d of %d searches found anything: the parity check checks too little", label, nonEmpty, 2*len(queries))
		}
	}
	check("new store", s)

	// A schema 2 database (the old trigger, an index without breadcrumb
	// terms) and a schema 3 one (breadcrumb terms, no merged headings).
	// Opening either migrates and rebuilds.
	for _, old := range []struct {
		version int
		terms   string
	}{
		{2, sqliteTermsFunc + `(text, 'english', NULL)`},
		{3, sqliteTermsFunc + `(text, 'english', json_extract(CAST(doc AS TEXT), '$.metadata.` + MetaBreadcrumb + `'))`},
	} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{
			`DROP TRIGGER chunks_terms_ai`,
			`CREATE TRIGGER chunks_terms_ai AFTER INSERT ON chunks BEGIN SELECT 1; END`,
			`INSERT INTO chunk_terms (chunk_terms) VALUES ('delete-all')`,
			`INSERT INTO chunk_terms (rowid, terms) SELECT rid, ` + old.terms + ` FROM chunks`,
			fmt.Sprintf(`UPDATE meta SET value = %d WHERE key = 'schema'`, old.version),
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				db.Close()
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		db.Close()
		s, err = NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("migrated from schema %d", old.version), s)
	}
	defer s.Close()
	// The migrated trigger indexes new chunks with their breadcrumbs and
	// merged headings.
	extra := ai.DocumentFromText("plain words only", map[string]any{"n": 9999, MetaBreadcrumb: "Qqxyzzy", MetaHeadings: "Zzheading"})
	if err := s.Index(ctx, []*ai.Document{extra}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"qqxyzzy", "zzheading"} {
		got, err := s.keywordSearch(ctx, q, 0, nil, nil)
		if err != nil || docMetaN(got) != "[9999]" {
			t.Fatalf("heading-field word %q of a chunk added after the migration: %s, %v", q, docMetaN(got), err)
		}
	}
	var version int
	if err := s.db.QueryRowContext(context.Background(), `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Fatalf("schema version %d (%v), want %d", version, err, sqliteSchemaVersion)
	}
}

// BenchmarkSQLiteKeywordSearch measures SQLiteStore.KeywordSearch (top
// 10) over the corpus BenchmarkLocalvecKeywordSearch uses (synthetic
// ~800-character chunks, Zipf words) at 10k and 50k chunks, and building
// the store (chunks and their keyword index, 8-dimensional test vectors)
// with the size its keyword index adds to the database, in one run:
//
//	go test -run '^$' -bench 'LocalvecKeywordSearch|SQLiteKeywordSearch|ReciprocalRankFusion' -benchtime 1x -timeout 30m .
func BenchmarkSQLiteKeywordSearch(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10000, 50000} {
		docs := keywordBenchDocs(n)
		queries := keywordBenchQueries(docs[:min(n, 2000)], 64)
		path := filepath.Join(b.TempDir(), "k.db")
		var s *SQLiteStore
		b.Run(fmt.Sprintf("%dk/build", n/1000), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if s != nil {
					s.Close()
				}
				os.Remove(path)
				var err error
				if s, err = NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil); err != nil {
					b.Fatal(err)
				}
				if err := IndexInBatches(ctx, s, docs, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/1e6, "ms/build")
			var pages int64
			if err := s.db.QueryRowContext(ctx, `SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'chunk_terms%'`).Scan(&pages); err == nil {
				b.ReportMetric(float64(pages)/(1<<20), "MB-index")
			}
		})
		b.Run(fmt.Sprintf("%dk/query", n/1000), func(b *testing.B) {
			// CPU time too: on a shared machine the wall time also counts
			// waiting for a core.
			cpu0 := pdfCPUSeconds()
			i := 0
			for b.Loop() { // every query once per iteration, so -benchtime 1x is enough
				for _, q := range queries {
					if _, err := s.keywordSearch(ctx, q, 10, nil, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/1e6, "ms/query")
			b.ReportMetric((pdfCPUSeconds()-cpu0)*1e3/float64(i), "cpu-ms/query")
		})
		s.Close()
	}
}

// TestSQLiteSchema4ReindexesIdentifiers checks the migration from schema 4
// (terms without whole identifiers): the keyword index is rebuilt when the
// database opens, so a whole identifier ranks its chunk first.
func TestSQLiteSchema4ReindexesIdentifiers(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v4.db")
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole := "Set max_log_file_size to bound the log."
	scattered := "The max size of a log file: the log file size, the file size max."
	if err := s.Index(ctx, kwTestDocs("d", scattered, whole)); err != nil {
		t.Fatal(err)
	}
	// A version 4 index: the same chunks, their terms without the
	// identifier terms.
	an, err := newTextAnalyzer("english")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`INSERT INTO chunk_terms (chunk_terms) VALUES ('delete-all')`,
		`UPDATE meta SET value = 4 WHERE key = 'schema'`,
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rid, text FROM chunks`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		rid  int64
		text string
	}
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.rid, &r.text); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	for _, r := range rs {
		var old []string
		an.tokenize(r.text, func(_, term string, extra bool) {
			if !extra {
				old = append(old, sqliteEncodeTerm(term))
			}
		})
		if _, err := s.db.ExecContext(ctx, `INSERT INTO chunk_terms (rowid, terms) VALUES (?, ?)`, r.rid, strings.Join(old, " ")); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.keywordSearch(ctx, "max_log_file_size", 0, nil, nil); err != nil || len(got) != 2 || DocText(got[0]) != scattered {
		t.Fatalf("version 4 index: %q (%v), want the parts to rank %q first", kwTestTexts(got), err, scattered)
	}
	s.Close()
	s, err = NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.keywordSearch(ctx, "max_log_file_size", 0, nil, nil)
	if err != nil || len(got) != 2 || DocText(got[0]) != whole {
		t.Fatalf("after the migration: %q (%v), want %q first", kwTestTexts(got), err, whole)
	}
}
