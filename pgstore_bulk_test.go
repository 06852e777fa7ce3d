package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgBulkTestDim is the embedding dimension of the bulk tests (the bench
// corpus with small random vectors).
const pgBulkTestDim = 16

// pgBulkEvents records a store's bulk events.
func pgBulkEvents(s *PgvecStore) *[]string {
	var ev []string
	s.bulk.hook = func(e string) { ev = append(ev, e) }
	return &ev
}

// pgBulkIndexSources runs IndexSource for each source, inside a Bulk run
// when bulk.
func pgBulkIndexSources(t *testing.T, s *PgvecStore, sources [][]*ai.Document, bulk bool) pgvecBulkStats {
	t.Helper()
	ctx := context.Background()
	load := func(w VectorStore) error {
		for _, docs := range sources {
			if _, _, err := IndexSource(ctx, w, &pgBulkBenchSource{docs: docs}, 1200, 0, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if !bulk {
		if err := load(s); err != nil {
			t.Fatal(err)
		}
		return pgvecBulkStats{}
	}
	stats, err := s.bulkWithStats(ctx, func(bt VectorStore) error { return load(bt) })
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// pgBulkCheckIndexes fails unless every index a bulk load drops exists,
// the store records no pending rebuild, and a similarity search can use
// the HNSW index.
func pgBulkCheckIndexes(t *testing.T, s *PgvecStore) {
	t.Helper()
	ctx := context.Background()
	var have []string
	rows, err := s.Pool.Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ANY($1)`, pgvecBulkCandidates(s.names))
	if err != nil {
		t.Fatal(err)
	}
	if have, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	for _, want := range pgvecBulkCandidates(s.names) {
		if !slices.Contains(have, want) {
			t.Errorf("index %s is missing after the bulk load (have %v)", want, have)
		}
	}
	var pending bool
	if err := s.Pool.QueryRow(ctx, `SELECT bulk_rebuild IS NOT NULL FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, s.name).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending {
		t.Error("the store still records indexes to rebuild")
	}
	q := pgvector.NewVector(make([]float32, s.dim))
	var plan []string
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN SELECT id FROM `+pgvecIdent(s.Table())+` ORDER BY `+s.vec.order+` LIMIT 5`, q)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), s.names.hnsw) {
		t.Errorf("similarity search does not use the HNSW index:\n%s", strings.Join(plan, "\n"))
	}
}

// TestPgvecBulkPathChoice checks the automatic choice: a first index of
// many chunks in a Bulk run, or one large Index call, drops and rebuilds
// the search indexes; small writes (and a small re-index of a large store)
// keep them.
func TestPgvecBulkPathChoice(t *testing.T) {
	ctx := context.Background()
	sources, emb := pgBulkBenchSources(1500, pgBulkTestDim)
	s := pgTestStoreWith(t, emb, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
	ev := pgBulkEvents(s)

	if err := s.Index(ctx, sources[0][:5]); err != nil {
		t.Fatal(err)
	}
	if len(*ev) != 0 {
		t.Fatalf("a 5-chunk Index took the bulk path: %v", *ev)
	}
	if _, err := s.DeleteByURL(ctx, metaString(sources[0][0].Metadata, MetaURL)); err != nil {
		t.Fatal(err)
	}

	stats := pgBulkIndexSources(t, s, sources, true)
	if !stats.Bulk || !slices.Contains(stats.Dropped, s.names.hnsw) || stats.Rows != 1500 || stats.Sources != len(sources) {
		t.Fatalf("first index of 1500 chunks: stats %+v, want the bulk path with the HNSW index dropped", stats)
	}
	if !slices.Equal(*ev, []string{"dropped", "committed", "rebuild", "built"}) {
		t.Errorf("bulk events %v, want dropped, committed, rebuild, built (one batch: fewer than %d rows)", *ev, pgvecBulkFlushRows)
	}
	pgBulkCheckIndexes(t, s)

	// A re-index of two changed sources into the 1500 chunks: the live path
	// inside the Bulk run (batched, indexes kept).
	*ev = nil
	changed := [][]*ai.Document{slices.Clone(sources[1]), slices.Clone(sources[2])}
	for _, docs := range changed {
		docs[0] = ai.DocumentFromText(DocText(docs[0])+" changed", docs[0].Metadata)
		emb.vecs[DocText(docs[0])] = emb.vecs[DocText(sources[1][0])]
	}
	stats = pgBulkIndexSources(t, s, changed, true)
	if stats.Bulk || stats.Rows != 2 || len(*ev) != 1 || (*ev)[0] != "committed" {
		t.Fatalf("re-index of 2 changed chunks: stats %+v, events %v; want 2 rows written without the bulk path", stats, *ev)
	}
	var n int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgvecIdent(s.Table())).Scan(&n); err != nil || n != 1500 {
		t.Fatalf("store holds %d chunks (%v) after the re-index, want 1500", n, err)
	}

	// One large Index call (1,100 new chunks against 1,500): the bulk path
	// on its own; a small one afterwards: not.
	more, _ := pgBulkBenchSources(1100, pgBulkTestDim)
	var docs []*ai.Document
	for _, src := range more {
		for _, d := range src {
			d.Metadata[MetaSource] = "more"
			docs = append(docs, d)
		}
	}
	*ev = nil
	if err := s.Index(ctx, docs[:1099]); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*ev, []string{"dropped", "rebuild", "built"}) {
		t.Errorf("Index of 1099 chunks into 1500: events %v, want dropped, rebuild, built", *ev)
	}
	pgBulkCheckIndexes(t, s)
	*ev = nil
	if err := s.Index(ctx, docs[1099:]); err != nil {
		t.Fatal(err)
	}
	if len(*ev) != 0 {
		t.Errorf("Index of 1 chunk took the bulk path: %v", *ev)
	}
	pgTermsConsistent(t, s)
}

// TestPgvecBulkCommitFails checks the pipelined commit: a batch is
// committed by a goroutine while the run prepares the next sources, so a
// batch whose transaction fails is reported by a later replacement (at
// most one) and by Bulk, never by the replacement that filled it; its
// sources keep their previous version (none), the later batches are
// committed whole, and the indexes are rebuilt.
func TestPgvecBulkCommitFails(t *testing.T) {
	ctx := context.Background()
	sources, emb := pgBulkBenchSources(pgvecBulkFlushRows+300, pgBulkTestDim)
	s := pgTestStoreWith(t, emb, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
	errRefused := errors.New("refused by the test")
	var failed atomic.Bool
	s.replaceHook = func(context.Context) error {
		if failed.CompareAndSwap(false, true) {
			return errRefused
		}
		return nil
	}
	// The first batch: the sources up to pgvecBulkFlushRows rows.
	first, rows := 0, 0
	for rows < pgvecBulkFlushRows {
		rows += len(sources[first])
		first++
	}
	var reported []int
	err := s.Bulk(ctx, func(bt VectorStore) error {
		for i, docs := range sources {
			if _, _, err := IndexSource(ctx, bt, &pgBulkBenchSource{docs: docs}, 1200, 0, nil); err != nil {
				if !errors.Is(err, errRefused) {
					return err
				}
				reported = append(reported, i)
			}
		}
		return nil
	})
	if !errors.Is(err, errRefused) {
		t.Fatalf("Bulk returned %v, want the failed commit", err)
	}
	if len(reported) > 1 || len(reported) == 1 && reported[0] < first {
		t.Errorf("the failed commit of sources 0-%d was returned by replacements %v, want at most one after them", first-1, reported)
	}
	chunks := pgChunksByURL(t, s)
	for i, src := range sources {
		url := metaString(src[0].Metadata, MetaURL)
		if want := map[bool]int{true: 0, false: len(src)}[i < first]; chunks[url] != want {
			t.Errorf("source %d (%s) has %d chunks, want %d", i, url, chunks[url], want)
		}
	}
	pgBulkCheckIndexes(t, s)
	pgTermsConsistent(t, s)
}

// pgChunksByURL returns the store's chunk count per URL (Sources).
func pgChunksByURL(t *testing.T, s *PgvecStore) map[string]int {
	t.Helper()
	got, err := s.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	chunks := map[string]int{}
	for _, src := range got {
		chunks[src.URL] += src.Chunks
	}
	return chunks
}

// pgTermsConsistent fails unless every term's summed document frequency
// equals its number of postings.
func pgTermsConsistent(t *testing.T, s *PgvecStore) {
	t.Helper()
	var bad int
	err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM (
		SELECT term, count(*) AS n FROM `+pgvecIdent(s.names.kw)+` GROUP BY term) p
		FULL JOIN (SELECT term, sum(df) AS df FROM `+pgvecIdent(s.names.kwDF)+` GROUP BY term HAVING sum(df) <> 0) d USING (term)
		WHERE p.n IS DISTINCT FROM d.df`).Scan(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d terms' document frequencies differ from their postings", bad)
	}
}

// TestPgvecBulkParity checks that a first index through the bulk path
// gives the store the small-write path gives it: the same chunks and
// postings, the same similarity and keyword results in the same order.
func TestPgvecBulkParity(t *testing.T) {
	ctx := context.Background()
	sources, emb := pgBulkBenchSources(1200, pgBulkTestDim)
	live := pgTestStoreWith(t, emb, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
	bulk := pgTestStoreWith(t, emb, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
	pgBulkIndexSources(t, live, sources, false)
	if stats := pgBulkIndexSources(t, bulk, sources, true); !stats.Bulk {
		t.Fatalf("the bulk store did not take the bulk path: %+v", stats)
	}
	pgBulkCheckIndexes(t, bulk)
	pgTermsConsistent(t, live)
	pgTermsConsistent(t, bulk)

	dump := func(s *PgvecStore, sql string) string {
		rows, err := s.Pool.Query(ctx, strings.ReplaceAll(strings.ReplaceAll(sql, "{t}", pgvecIdent(s.Table())), "{kw}", pgvecIdent(s.names.kw)))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, v...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, sql := range []string{
		`SELECT id, content, metadata::text, content_hash, text_hash, embedder, embedding::text, tsv::text FROM {t} ORDER BY id`,
		`SELECT term, cid, tf, len, w FROM {kw} ORDER BY term, cid`,
	} {
		if a, b := dump(live, sql), dump(bulk, sql); a != b {
			t.Fatalf("the stores differ in %s (%d vs %d bytes)", sql, len(a), len(b))
		}
	}

	r := rand.New(rand.NewPCG(9, 9))
	for i := range 20 {
		src := sources[r.IntN(len(sources))]
		d := src[r.IntN(len(src))]
		words := strings.Fields(DocText(d))
		q := strings.Join(words[1+i%5:3+i%5], " ")
		texts := func(docs []*ai.Document) []string {
			out := make([]string, len(docs))
			for j, d := range docs {
				out[j] = DocText(d)
			}
			return out
		}
		a, err := live.KeywordSearch(ctx, q, 10, nil, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bulk.KeywordSearch(ctx, q, 10, nil, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(texts(a), texts(b)) || len(a) == 0 {
			t.Errorf("keyword search %q: live path %d results, bulk path %d, or in another order", q, len(a), len(b))
		}
		qv := ai.DocumentFromText(DocText(d), nil)
		va, err := live.retrieveWhere(ctx, qv, 10, 0, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		vb, err := bulk.retrieveWhere(ctx, qv, 10, 0, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(texts(va), texts(vb)) || len(va) != 10 || DocText(va[0]) != DocText(d) {
			t.Errorf("similarity search %d: live and bulk results differ, or the query's own chunk is not first", i)
		}
	}
}

// pgBulkChildMain is the "bulk" child of TestPgvecBulkKilled: it indexes
// PGCHILD_N chunks of the bench corpus in one Bulk run, committing every
// 10 sources (flushBulkNow), prints each
// bulk event as "EVENT SOURCES" (sources committed so far) and blocks in
// the PGCHILD_BLOCK-th event named PGCHILD_AT until killed.
func pgBulkChildMain(say func(string, ...any), in *bufio.Reader) error {
	ctx := context.Background()
	n, _ := strconv.Atoi(os.Getenv("PGCHILD_N"))
	blockAt, _ := strconv.Atoi(os.Getenv("PGCHILD_BLOCK"))
	at := os.Getenv("PGCHILD_AT")
	sources, emb := pgBulkBenchSources(n, pgBulkTestDim)
	s, err := NewPgvecStoreWithOptions(ctx, nil, os.Getenv("PGCHILD_STORE"), emb, os.Getenv("PGCHILD_DSN"), pgBulkTestDim,
		&PgvecOptions{TextSearchConfig: "english"})
	if err != nil {
		return err
	}
	defer s.Close()
	handed, seen := 0, 0
	s.bulk.hook = func(e string) {
		say("%s %d", e, handed)
		if e == at {
			if seen++; seen == blockAt {
				_, _ = in.ReadString('\n') // until killed
			}
		}
	}
	err = s.Bulk(ctx, func(bt VectorStore) error {
		for i, docs := range sources {
			if _, _, err := IndexSource(ctx, bt, &pgBulkBenchSource{docs: docs}, 1200, 0, nil); err != nil {
				return err
			}
			if (i+1)%10 == 0 {
				handed = i + 1
				if err := s.flushBulkNow(ctx); err != nil {
					return err
				}
			}
		}
		handed = len(sources)
		return nil
	})
	if err != nil {
		return err
	}
	say("done")
	return nil
}

// TestPgvecBulkKilled kills (SIGKILL) a process in the middle of a bulk
// load: after some batches were committed with the indexes dropped,
// inside the HNSW index's build transaction (the other indexes are built
// beside it, on another connection), and once every index is built but
// before the record is cleared. While it is stopped there, the store
// records indexes to rebuild, and a store opened by another process does
// not rebuild (the load is alive) and, while the HNSW index is missing,
// its similarity searches are exact. After the kill, the next write (first
// case) or open (the others) rebuilds what is missing and clears the
// record, every source committed before the kill is there whole, nothing
// of the others, and the postings agree with their frequencies.
func TestPgvecBulkKilled(t *testing.T) {
	ctx := context.Background()
	dsn := pgTestDSN(t)
	const n = 2000
	sources, emb := pgBulkBenchSources(n, pgBulkTestDim)
	for _, c := range []struct {
		at      string
		block   int
		reopen  bool
		minSrcs int
		hnsw    bool // the HNSW index exists while the child is stopped
	}{
		{at: "committed", block: 6, minSrcs: 60},
		{at: "rebuild", block: 1, reopen: true, minSrcs: len(sources)},
		{at: "built", block: 1, reopen: true, minSrcs: len(sources), hnsw: true},
	} {
		t.Run(c.at, func(t *testing.T) {
			name := pgTestStoreName(t)
			pgTestDropStore(t, dsn, name)
			child := pgStartChild(t, "bulk", "PGCHILD_DSN="+dsn, "PGCHILD_STORE="+name, "PGCHILD_N="+strconv.Itoa(n),
				"PGCHILD_AT="+c.at, "PGCHILD_BLOCK="+strconv.Itoa(c.block))
			var line string
			for seen := 0; seen < c.block; {
				line = child.waitFor(t, c.at+" ")
				seen++
			}
			committed, _ := strconv.Atoi(strings.Fields(line)[1])
			if committed < c.minSrcs {
				t.Fatalf("child committed %d sources at %q, want >= %d", committed, line, c.minSrcs)
			}

			// The load is alive and stopped: another process's store opens
			// without rebuilding and searches exactly.
			other, err := NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			var hnsw bool
			if err := other.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pgvecIdent(other.names.hnsw)).Scan(&hnsw); err != nil {
				t.Fatal(err)
			}
			if hnsw != c.hnsw {
				t.Fatalf("the HNSW index exists: %v while the bulk load is stopped at %q, want %v", hnsw, c.at, c.hnsw)
			}
			var pending bool
			if err := other.Pool.QueryRow(ctx, `SELECT bulk_rebuild IS NOT NULL FROM `+pgvecIdent(pgvecMetaTable)+` WHERE store = $1`, name).Scan(&pending); err != nil {
				t.Fatal(err)
			}
			if !pending {
				t.Fatalf("the store records no indexes to rebuild while the bulk load is stopped at %q", c.at)
			}
			var stored []*ai.Document
			for _, src := range sources[:committed] {
				stored = append(stored, src...)
			}
			for i := range 5 {
				if c.hnsw {
					break // approximate: the exact top 10 is not promised
				}
				q := stored[(i*397)%len(stored)]
				got, err := other.retrieveWhere(ctx, ai.DocumentFromText(DocText(q), nil), 10, 0, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				want := pgBenchExactTop(emb, stored, emb.vecs[DocText(q)], 10)
				var texts []string
				for _, d := range got {
					texts = append(texts, DocText(d))
				}
				if !slices.Equal(texts, want) {
					t.Errorf("search %d during the bulk load is not the exact top 10", i)
				}
			}

			if err := child.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-child.done
			// The killed process's sessions end when the server notices:
			// wait for its bulk lock to be free.
			lock, err := other.Pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock($1)`, other.bulkLockKey()); err != nil {
				t.Fatal(err)
			}
			if _, err := lock.Exec(ctx, `SELECT pg_advisory_unlock($1)`, other.bulkLockKey()); err != nil {
				t.Fatal(err)
			}
			lock.Release()

			s := other
			if c.reopen {
				if s, err = NewPgvecStoreWithOptions(ctx, nil, name, emb, dsn, pgBulkTestDim, &PgvecOptions{TextSearchConfig: "english"}); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			} else {
				extra := ai.DocumentFromText(DocText(sources[len(sources)-1][0]), map[string]any{MetaSource: "extra"})
				if err := s.Index(ctx, []*ai.Document{extra}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.DeleteBySource(ctx, "extra"); err != nil {
					t.Fatal(err)
				}
			}
			pgBulkCheckIndexes(t, s)
			pgTermsConsistent(t, s)
			chunks := pgChunksByURL(t, s)
			for i, src := range sources {
				url := metaString(src[0].Metadata, MetaURL)
				switch {
				case i < committed && chunks[url] != len(src):
					t.Errorf("committed source %s has %d chunks, want %d", url, chunks[url], len(src))
				case i >= committed && chunks[url] != 0:
					t.Errorf("source %s, never committed, has %d chunks", url, chunks[url])
				}
			}
		})
	}
}
