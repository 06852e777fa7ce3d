package engine

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
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
	known map[string]int // document frequencies the search read already (termScoring)
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
	out := make([]int, len(terms))
	for i, t := range terms {
		df, ok := x.known[t]
		if !ok {
			return x.s.docFreqs(ctx, terms)
		}
		out[i] = df
	}
	return out, nil
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

// pgvecPages caches a PgvecStore's pages (their names for the list rule,
// their chunk counts for the long-page rule) for the chunk count and
// average length they were read at (the statistics the ranker reads
// anyway), read again when those change. A write that keeps both exactly
// (a page replaced by one of the same chunk count and total length under
// another URL) leaves them stale until the next write that does not: the
// rules then misjudge at most that page.
type pgvecPages struct {
	mu    sync.Mutex
	n     int
	avg   float64
	pages *keywordPages
}

// pages returns the chunks' URLs (the url column) with their chunk
// counts, read again when the chunk count or average length changed.
func (x *pgvecKeywordIndex) pages(ctx context.Context) (*keywordPages, error) {
	c := &x.s.pages
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages != nil && c.n == x.n && c.avg == x.avg {
		return c.pages, nil
	}
	rows, err := x.s.readPool(ctx).Query(ctx, `SELECT url, count(*) FROM `+pgvecIdent(x.s.names.table)+` GROUP BY url`)
	if err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	pages := newKeywordPages()
	var url string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&url, &n}, func() error {
		pages.add(url, int(n))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read pages: %w", err)
	}
	c.n, c.avg, c.pages = x.n, x.avg, pages
	return pages, nil
}

// pgvecDocRanks returns the stage and score the term stage ranked each of
// docs by (for the rules after the cut, reweighKeywordDocs), recomputed
// from their texts: the posting table holds the terms and lengths of
// bm25DocTerms, and sc the IDFs and average length the stage scored with,
// so the scores are the threshold search's and the stage SQL's. The same
// pass over each text gives the proximity rule's pairs (nil when that
// rule does not apply), so a chunk is analysed once.
func pgvecDocRanks(bp bm25Plan, sc pgvecScoring, docs []*ai.Document) ([]keywordHit, []*proximityPairs) {
	top := min(len(docs), keywordReweighTop+1)
	prior, proximity, named := bp.reweighRules()
	if !prior && !proximity && !named && bp.cjkVerbatim() == "" {
		return nil, nil
	}
	// The terms counted: the scored ones, then keywords not scored.
	want := slices.Clone(sc.terms)
	for _, k := range bp.keywords {
		if !slices.Contains(want, k) {
			want = append(want, k)
		}
	}
	kwAt := make([]int, len(want)) // want[i]'s index among the keywords, or -1
	for i, t := range want {
		kwAt[i] = slices.Index(bp.keywords, t)
	}
	ranks := make([]keywordHit, top)
	var pairs []*proximityPairs
	if proximity {
		pairs = make([]*proximityPairs, top)
	}
	tf := make([]int32, len(want))
	for i, d := range docs[:top] {
		clear(tf)
		n := int32(0)
		var pp *proximityPairs
		if proximity {
			pp = newProximityPairs(len(bp.keywords))
			pairs[i] = pp
		}
		text, meta := "", map[string]any(nil)
		if d != nil {
			text, meta = DocText(d), d.Metadata
		}
		bp.an.tokenize(text, func(_, term string, extra bool) {
			n++
			w := slices.Index(want, term)
			if w >= 0 {
				tf[w]++
			}
			if pp != nil {
				kw := -1
				if w >= 0 {
					kw = kwAt[w]
				}
				pp.add(kw, extra)
			}
		})
		bm25HeadingTerms(bp.an, bm25HeadingText(meta), func(term string, weight int) {
			n += int32(weight)
			if w := slices.Index(want, term); w >= 0 {
				tf[w] += int32(weight)
			}
		})
		r := keywordHit{ord: i}
		for j := range sc.terms {
			if f := tf[j]; f > 0 {
				r.score += bm25TermScore(sc.idfs[j], f, n, sc.avg)
			}
		}
		all, some := len(bp.keywords) > 0, false
		for _, k := range bp.keywords {
			f := tf[slices.Index(want, k)]
			all = all && f > 0
			some = some || f > 0
		}
		switch {
		case all:
			r.stage = 1
		case !some:
			r.stage = -1 // a substring stage's chunk (KeywordSearch): after the term stage's
		}
		ranks[i] = r
	}
	return ranks, pairs
}
