package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// Searcher is the read side every ready-made store offers under one set of
// signatures: vector search, keyword search and the source listing, each
// restricted by a store-neutral Filter (nil keeps every chunk). Search
// runs the hybrid pipeline on any Searcher. SQLiteStore, LocalvecStore and
// PgvecStore implement it; their own methods (Retrieve, KeywordSearch with
// a predicate or SQL) stay.
type Searcher interface {
	VectorStore
	// SearchVector embeds query as a query (QueryDocument) and returns the
	// k chunks most similar to it that pass f, most similar first.
	SearchVector(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error)
	// SearchText returns at most k chunks that pass f ranked by the store's
	// keyword ranking (BM25F, see docs/retrieval.md) for query, with the
	// question stop words (QuestionStopWords) left out; a query without
	// keywords gives no chunks and no error.
	SearchText(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error)
	// Sources lists what is indexed, grouped by URL and source.
	Sources(ctx context.Context) ([]Source, error)
}

// The ready-made stores are Searchers.
var (
	_ Searcher = (*SQLiteStore)(nil)
	_ Searcher = (*LocalvecStore)(nil)
	_ Searcher = (*PgvecStore)(nil)
)

// documentSearcher is implemented by stores that search by an embedded
// document rather than a query text: Search embeds a HyDE passage as a
// passage (not as a query) through it when the store has it.
type documentSearcher interface {
	searchVectorDoc(ctx context.Context, doc *ai.Document, k int, f *Filter) ([]*ai.Document, error)
}

// searchMaxUnwrap bounds how many Unwrap calls searchCapability follows
// (a wrapper returning itself must not loop).
const searchMaxUnwrap = 16

// searchCapability returns the first Searcher along s's chain of wrappers
// (a Searcher with an Unwrap() Searcher method, as http.ResponseController
// looks through ResponseWriters) that has capability C: the keyword
// statistics, passage search, index record and embedder Search uses
// beyond the Searcher methods. A wrapper that embeds a store's pointer has
// them itself.
func searchCapability[C any](s Searcher) (C, bool) {
	for range searchMaxUnwrap {
		if c, ok := s.(C); ok {
			return c, true
		}
		u, ok := s.(interface{ Unwrap() Searcher })
		if !ok {
			break
		}
		if s = u.Unwrap(); s == nil {
			break
		}
	}
	var zero C
	return zero, false
}

// searchStopWords are the stop words SearchText leaves out of queries.
var searchStopWords = QuestionStopWords()

// searchK checks a Searcher method's k.
func searchK(op string, k int) error {
	if k < 1 {
		return fmt.Errorf("%s: k must be positive, got %d", op, k)
	}
	return nil
}

// SearchVector implements Searcher: the k chunks most similar to query
// (cosine similarity, from the int8 matrix rescored exactly, in one read
// snapshot) among those f accepts, most similar first.
func (s *SQLiteStore) SearchVector(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	return s.searchVectorDoc(ctx, QueryDocument(query), k, f)
}

func (s *SQLiteStore) searchVectorDoc(ctx context.Context, doc *ai.Document, k int, f *Filter) ([]*ai.Document, error) {
	if f.empty() {
		return s.retrieveDoc(ctx, doc, k)
	}
	if err := s.checkOpen("search vector"); err != nil {
		return nil, err
	}
	if err := searchK("sqlite search vector", k); err != nil {
		return nil, err
	}
	vecs, err := embedChecked(ctx, s.emb, []*ai.Document{doc}, 0)
	if err != nil {
		return nil, fmt.Errorf("sqlite search vector: query: %w", err)
	}
	var docs []*ai.Document
	err = s.readTx(ctx, func(conn *sql.Conn) error {
		s.mu.Lock()
		_, err := s.refresh(ctx, conn)
		s.mu.Unlock()
		if err != nil {
			return err
		}
		allowed, err := s.filterRids(ctx, conn, f)
		if err != nil || len(allowed) == 0 {
			return err
		}
		docs, err = s.rankAllowed(ctx, conn, vecs[0], k, allowed)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite search vector: %w", err)
	}
	return docs, nil
}

// filterRids returns the rids of the chunks passing f, ascending: the url
// and source conditions in SQL, the metadata ones on the decoded documents.
func (s *SQLiteStore) filterRids(ctx context.Context, conn *sql.Conn, f *Filter) ([]int64, error) {
	var conds []string
	var args []any
	if len(f.Sources) > 0 {
		conds = append(conds, "source IN ("+sqlitePlaceholders(len(f.Sources))+")")
		for _, src := range f.Sources {
			args = append(args, src)
		}
	}
	if f.URLPrefix != "" {
		conds = append(conds, "substr(url, 1, ?) = ?")
		args = append(args, len(f.URLPrefix), f.URLPrefix)
	}
	cols := "rid"
	if len(f.Metadata) > 0 {
		cols = "rid, url, source, doc"
	}
	q := "SELECT " + cols + " FROM chunks"
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := conn.QueryContext(ctx, q+" ORDER BY rid", args...)
	if err != nil {
		return nil, fmt.Errorf("filter chunks: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var rid int64
		if len(f.Metadata) == 0 {
			if err := rows.Scan(&rid); err != nil {
				return nil, err
			}
			out = append(out, rid)
			continue
		}
		var url, src string
		var raw []byte
		if err := rows.Scan(&rid, &url, &src, &raw); err != nil {
			return nil, err
		}
		d, err := sqliteDecodeDoc(raw, url, src)
		if err != nil {
			return nil, err
		}
		if f.match(d.Metadata) {
			out = append(out, rid)
		}
	}
	return out, rows.Err()
}

// SearchText implements Searcher: the keyword ranking of LocalvecStore's
// KeywordSearch (BM25 from the FTS5 index, in stages for quoted phrases and
// all keywords) with the question stop words, restricted to f.
func (s *SQLiteStore) SearchText(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	if err := searchK("sqlite search text", k); err != nil {
		return nil, err
	}
	return s.keywordSearch(ctx, query, k, searchStopWords, f.predicate())
}

// SearchVector implements Searcher: the Retriever's search restricted to f.
func (s *LocalvecStore) SearchVector(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	return s.searchVectorDoc(ctx, QueryDocument(query), k, f)
}

func (s *LocalvecStore) searchVectorDoc(ctx context.Context, doc *ai.Document, k int, f *Filter) ([]*ai.Document, error) {
	if err := searchK("localvec search vector", k); err != nil {
		return nil, err
	}
	if err := s.refreshForRead(); err != nil {
		return nil, fmt.Errorf("localvec search vector: %w", err)
	}
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("localvec search vector: %w", err)
	}
	vecs, err := embedChecked(ctx, s.emb, []*ai.Document{doc}, 0)
	if err != nil {
		return nil, fmt.Errorf("localvec search vector: query: %w", err)
	}
	q := vecs[0]
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("localvec search vector: %w", ErrStoreClosed)
	}
	if len(s.rows.ids) == 0 {
		return nil, nil
	}
	if len(q) != s.rows.dim {
		return nil, fmt.Errorf("localvec search vector: %w: query vector has %d dimensions, the store has %d", ErrDimensionMismatch, len(q), s.rows.dim)
	}
	var allow func(row int) bool
	if !f.empty() {
		allow = func(row int) bool { return f.match(s.rows.docs[row].Metadata) }
	}
	top := s.rows.topKWhere(q, k, allow)
	docs := make([]*ai.Document, len(top))
	for i, h := range top {
		docs[i] = localvecCopyDoc(s.rows.docs[h.row])
	}
	return docs, nil
}

// SearchText implements Searcher: KeywordSearch with the question stop
// words, restricted to f.
func (s *LocalvecStore) SearchText(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	if err := searchK("localvec search text", k); err != nil {
		return nil, err
	}
	return s.KeywordSearch(ctx, query, k, searchStopWords, f.predicate())
}

// SearchVector implements Searcher: Retrieve restricted to f, translated to
// SQL with bound parameters.
func (s *PgvecStore) SearchVector(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	return s.searchVectorDoc(ctx, QueryDocument(query), k, f)
}

func (s *PgvecStore) searchVectorDoc(ctx context.Context, doc *ai.Document, k int, f *Filter) ([]*ai.Document, error) {
	where, args := f.pgWhere(3)
	return s.retrieveWhere(ctx, doc, k, 0, where, args)
}

// SearchText implements Searcher: the one keyword ranker every store
// shares (LocalvecKeywordSearch's order, read from the posting table), with
// the question stop words and f translated to SQL with bound parameters;
// KeywordSearchSQL's ILIKE stages are not run. A store of a custom text
// search configuration (no textAnalyzer) ranks with the tsvector column.
func (s *PgvecStore) SearchText(ctx context.Context, query string, k int, f *Filter) ([]*ai.Document, error) {
	if err := searchK("pgvector search text", k); err != nil {
		return nil, err
	}
	if err := s.checkOpen("pgvector search text"); err != nil {
		return nil, err
	}
	where, args := f.pgWhere(3)
	return s.keywordStages(ctx, query, k, "", searchStopWords, where, args, false)
}

// topKWhere is topK over the rows allow accepts (all when allow is nil).
func (r *localvecRows) topKWhere(q []float32, k int, allow func(row int) bool) []localvecHit {
	if allow == nil {
		return r.topK(q, k)
	}
	qn := slices.Clone(q)
	if inv := localvecInvNorm(qn); inv != 0 {
		for i := range qn {
			qn[i] *= inv
		}
	}
	rejected := float32(math.Inf(-1))
	all := localvecScanTopK(len(r.ids), r.dim, k, func(i int) float32 {
		if !allow(i) {
			return rejected
		}
		return localvecDot(qn, r.vec(i)) * r.inv[i]
	})
	all = slices.DeleteFunc(all, func(h localvecHit) bool { return h.score == rejected })
	slices.SortFunc(all, func(a, b localvecHit) int {
		if localvecWorse(b, a) {
			return -1
		}
		if localvecWorse(a, b) {
			return 1
		}
		return 0
	})
	return all
}

// errNoSearcher is returned by Search for a nil Searcher.
var errNoSearcher = errors.New("search: searcher is nil")
