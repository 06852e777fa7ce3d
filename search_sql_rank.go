package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/jackc/pgx/v5"
)

// pgvecKeywordIndex is a PgvecStore's posting table as the one keyword
// ranker reads it: ordinals number the chunk keys (pgvecChunkUUID) as the
// postings name them; where (placeholders from $3, bound to args), when
// not "", is the search's SQL filter. The chunk count and average length
// come from the statistics termScoring read.
type pgvecKeywordIndex struct {
	s     *PgvecStore
	n     int
	avg   float64
	where string
	args  []any
	cids  keywordOrds[[16]byte]
}

// ids returns the chunk IDs of ords.
func (x *pgvecKeywordIndex) ids(ords []int) []string {
	out := make([]string, len(ords))
	for i, o := range ords {
		out[i] = hex.EncodeToString(x.cids.keys[o][:])
	}
	return out
}

func (x *pgvecKeywordIndex) chunks(context.Context) (int, error) { return x.n, nil }

func (x *pgvecKeywordIndex) docFreqs(ctx context.Context, terms []string) ([]int, error) {
	return x.s.docFreqs(ctx, terms)
}

// docFreqs returns the document frequency of each of terms, summed from the
// statistics table's deltas (one query; the empty term gives the chunk
// count).
func (s *PgvecStore) docFreqs(ctx context.Context, terms []string) ([]int, error) {
	rows, err := s.readPool(ctx).Query(ctx, `SELECT coalesce(sum(d.df), 0) FROM unnest($1::text[]) WITH ORDINALITY AS u(t, o)
		LEFT JOIN `+pgvecIdent(s.names.kwDF)+` d ON d.term = u.t GROUP BY u.o ORDER BY u.o`, terms)
	if err != nil {
		return nil, fmt.Errorf("read term frequencies: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (int, error) {
		var df int64
		err := r.Scan(&df)
		return int(df), err
	})
	if err != nil {
		return nil, fmt.Errorf("read term frequencies: %w", err)
	}
	return out, nil
}

// postings reads term's postings through the impact index (index-only:
// it holds tf and len) and scores them with bm25TermScore, as the SQL of
// the threshold search does (pgvecShareSQL).
func (x *pgvecKeywordIndex) postings(ctx context.Context, term string, n int, add func(int, float64)) (int, error) {
	rows, err := x.s.readPool(ctx).Query(ctx, `SELECT cid, tf, len FROM `+pgvecIdent(x.s.names.kw)+` WHERE term = $1`, term)
	if err != nil {
		return 0, fmt.Errorf("read postings: %w", err)
	}
	type posting struct {
		cid     [16]byte
		tf, len int32
	}
	var ps []posting
	for rows.Next() {
		var p posting
		if err := rows.Scan(&p.cid, &p.tf, &p.len); err != nil {
			rows.Close()
			return 0, fmt.Errorf("read postings: %w", err)
		}
		ps = append(ps, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("read postings: %w", err)
	}
	if len(ps) == 0 {
		return 0, nil
	}
	idf := bm25IDF(n, len(ps))
	for _, p := range ps {
		add(x.cids.of(p.cid), bm25TermScore(idf, p.tf, p.len, x.avg))
	}
	return len(ps), nil
}

func (x *pgvecKeywordIndex) texts(ctx context.Context, ords []int, fn func(int, string)) error {
	if len(ords) == 0 {
		return nil
	}
	rows, err := x.s.readPool(ctx).Query(ctx, `SELECT id, content FROM `+pgvecIdent(x.s.names.table)+` WHERE id = ANY($1::text[])`, x.ids(ords))
	if err != nil {
		return fmt.Errorf("read chunk texts: %w", err)
	}
	return x.scanTexts1(rows, fn)
}

func (x *pgvecKeywordIndex) scanTexts(ctx context.Context, fn func(int, string)) error {
	rows, err := x.s.readPool(ctx).Query(ctx, `SELECT id, content FROM `+pgvecIdent(x.s.names.table))
	if err != nil {
		return fmt.Errorf("read chunk texts: %w", err)
	}
	return x.scanTexts1(rows, fn)
}

// scanTexts1 calls fn with each (id, content) row of rows whose ID the
// store made (a row of the app's own has no postings and no ordinal).
func (x *pgvecKeywordIndex) scanTexts1(rows pgx.Rows, fn func(int, string)) error {
	defer rows.Close()
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			return fmt.Errorf("read chunk texts: %w", err)
		}
		if cid, ok := pgvecChunkUUID(id); ok {
			fn(x.cids.of(cid), text)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read chunk texts: %w", err)
	}
	return nil
}

func (x *pgvecKeywordIndex) keys(_ context.Context, ords []int) ([]string, error) {
	return x.ids(ords), nil
}

func (x *pgvecKeywordIndex) docs(ctx context.Context, ords []int, _ func(string) bool) ([]*ai.Document, error) {
	ids := x.ids(ords)
	byID, err := x.s.docsByID(ctx, ids, x.where, x.args)
	if err != nil {
		return nil, err
	}
	out := make([]*ai.Document, len(ids))
	for i, id := range ids {
		out[i] = byID[id] // nil: refused by the filter, or deleted meanwhile
	}
	return out, nil
}

// docsByID reads the chunks of ids that where accepts (all when ""; its
// placeholders from $3, bound to args), by ID.
func (s *PgvecStore) docsByID(ctx context.Context, ids []string, where string, args []any) (map[string]*ai.Document, error) {
	q := `SELECT id, content, metadata FROM ` + pgvecIdent(s.names.table) + ` c WHERE c.id = ANY($1::text[])`
	if where != "" {
		q += ` AND (` + where + `)`
	}
	rows, err := s.readPool(ctx).Query(ctx, q+` LIMIT $2::bigint`, append([]any{ids, len(ids)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	defer rows.Close()
	byID := make(map[string]*ai.Document, len(ids))
	for rows.Next() {
		var id, content string
		var meta map[string]any
		if err := rows.Scan(&id, &content, &meta); err != nil {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		byID[id] = ai.DocumentFromText(content, meta)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	return byID, nil
}

// pgvecPageNames caches a PgvecStore's page names (the list rule) for the
// chunk count and average length they were read at (the statistics the
// ranker reads anyway), read again when those change. A write that keeps
// both exactly (a page replaced by one of the same chunk count and total
// length under another URL) leaves the names stale until the next write
// that does not: the list rule then misjudges at most that page's name.
type pgvecPageNames struct {
	mu    sync.Mutex
	n     int
	avg   float64
	names map[string]bool
}

// pageNames returns the page names of the chunks' URLs (the url column),
// read again when the chunk count or average length changed.
func (x *pgvecKeywordIndex) pageNames(ctx context.Context) (map[string]bool, error) {
	c := &x.s.pageNames
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names != nil && c.n == x.n && c.avg == x.avg {
		return c.names, nil
	}
	rows, err := x.s.readPool(ctx).Query(ctx, `SELECT DISTINCT url FROM `+pgvecIdent(x.s.names.table))
	if err != nil {
		return nil, fmt.Errorf("read page names: %w", err)
	}
	urls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read page names: %w", err)
	}
	names := make(map[string]bool, len(urls))
	for _, u := range urls {
		if n := pageName(u); n != "" {
			names[n] = true
		}
	}
	c.n, c.avg, c.names = x.n, x.avg, names
	return names, nil
}
