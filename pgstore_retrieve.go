package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/plugins/localvec"
	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
)

// pgvecRetrieverOptions are the options of PgvecStore.Retriever requests,
// as the request's map (Genkit's JSON config: "k", "source", "urlPrefix",
// "efSearch") gives them. Filters combine with AND.
type pgvecRetrieverOptions struct {
	// K is the number of documents to return (default 3).
	K int `json:"k,omitempty"`
	// Source, when not "", keeps chunks whose "source" metadata equals it.
	Source string `json:"source,omitempty"`
	// URLPrefix, when not "", keeps chunks whose "url" starts with it.
	URLPrefix string `json:"urlPrefix,omitempty"`
	// EfSearch overrides the store's PgvecOptions.EfSearch for this request
	// (0: the store's).
	EfSearch int `json:"efSearch,omitempty"`
}

// pgvecIterativeScans are the values of hnsw.iterative_scan.
var pgvecIterativeScans = map[string]bool{"off": true, "relaxed_order": true, "strict_order": true}

// Retrieve returns the k chunks most similar to query by cosine similarity,
// most similar first, without any filter. It embeds the query with the
// store's Embedder; k must be positive. The HNSW scan uses the store's
// EfSearch (raised to k when k is larger).
func (s *PgvecStore) Retrieve(ctx context.Context, query *ai.Document, k int) ([]*ai.Document, error) {
	return s.retrieveWhere(ctx, query, k, 0, "", nil)
}

// retrieveWhere is Retrieve restricted to chunks matching extraWhere, a SQL
// condition on the chunk table's columns (id, content, metadata, url,
// source, created_at) with placeholders from $3 bound to extraArgs ($1 is
// the query vector, $2 the limit), as KeywordSearchSQL's; "" means no
// filter. ef, when not 0, overrides the store's EfSearch.
//
// The search is one round trip that sets hnsw.ef_search and
// hnsw.iterative_scan (PgvecOptions) for this query only (SET LOCAL in the
// query's implicit transaction, pipelined with it): with an iterative scan
// the HNSW index keeps searching until k rows pass the filter, so a filter
// that rejects most chunks still gives k results whenever k match.
func (s *PgvecStore) retrieveWhere(ctx context.Context, query *ai.Document, k, ef int, extraWhere string, extraArgs []any) ([]*ai.Document, error) {
	if err := s.checkOpen("retrieve"); err != nil {
		return nil, err
	}
	if err := s.checkDim(ctx, "retrieve"); err != nil {
		return nil, err
	}
	if query == nil {
		return nil, errors.New("pgvector retrieve: nil query")
	}
	if k < 1 {
		return nil, fmt.Errorf("pgvector retrieve: k must be positive, got %d", k)
	}
	if strings.TrimSpace(extraWhere) == "" && len(extraArgs) > 0 {
		return nil, fmt.Errorf("pgvector retrieve: %d extraArgs but no extraWhere to use them", len(extraArgs))
	}
	if ef == 0 {
		ef = s.efSearch
	}
	if ef < 1 || ef > 1000 {
		return nil, fmt.Errorf("pgvector retrieve: ef_search %d out of range 1..1000", ef)
	}
	vecs, err := embedChecked(ctx, s.Embedder, []*ai.Document{query}, s.dim)
	if err != nil {
		return nil, fmt.Errorf("pgvector retrieve: query: %w", err)
	}
	where := ""
	if strings.TrimSpace(extraWhere) != "" {
		where = ` WHERE (` + extraWhere + `)`
	}
	sql := `SELECT content, metadata FROM ` + pgvecIdent(s.names.table) + where + ` ORDER BY ` + s.vec.order + ` LIMIT $2`
	args := append([]any{pgvector.NewVector(vecs[0]), k}, extraArgs...)
	docs, err := pgvecRead(ctx, s, func(ctx context.Context) ([]*ai.Document, error) {
		if s.vec.indexExpr == "" {
			rows, err := s.readPool(ctx).Query(ctx, sql, args...)
			if err != nil {
				return nil, err
			}
			return pgvecScanDocs(rows)
		}
		// An HNSW scan yields at most hnsw.ef_search rows (without an
		// iterative scan): never fewer than k.
		return s.queryHNSW(ctx, max(ef, min(k, 1000)), where != "", sql, args)
	})
	if err != nil {
		return nil, fmt.Errorf("pgvector retrieve: %w", err)
	}
	return docs, nil
}

// pgvecSetHNSW sets hnsw.ef_search and hnsw.iterative_scan for the rest of
// the transaction (SET LOCAL).
const pgvecSetHNSW = `SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', $2, true)`

// queryHNSW runs sql, a query of (content, metadata) rows, with
// hnsw.ef_search = ef and hnsw.iterative_scan (the store's for filtered
// queries, else off) in one round trip: the settings and the query go as
// one pipelined batch ending in a single Sync, which PostgreSQL runs as one
// implicit transaction, so the SET LOCAL settings apply to the query and
// end with it. Nothing is left on the pooled connection, whoever made the
// pool and whatever other stores or requests set on it.
func (s *PgvecStore) queryHNSW(ctx context.Context, ef int, filtered bool, sql string, args []any) ([]*ai.Document, error) {
	scan := "off"
	if filtered {
		scan = s.iterativeScan
	}
	batch := &pgx.Batch{}
	batch.Queue(pgvecSetHNSW, strconv.Itoa(ef), scan)
	batch.Queue(sql, args...)
	br := s.readPool(ctx).SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, fmt.Errorf("set hnsw.ef_search and hnsw.iterative_scan: %w", err)
	}
	rows, err := br.Query()
	var docs []*ai.Document
	if err == nil {
		docs, err = pgvecScanDocs(rows)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return docs, nil
}

// retrieve implements the Retriever.
func (s *PgvecStore) retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	if req == nil {
		return nil, errors.New("pgvector retriever: nil request")
	}
	o, err := pgvecRetrieverOpts(req.Options)
	if err != nil {
		return nil, err
	}
	var conds []string
	var args []any
	if o.Source != "" {
		args = append(args, o.Source)
		conds = append(conds, fmt.Sprintf("source = $%d", 2+len(args)))
	}
	if o.URLPrefix != "" {
		args = append(args, o.URLPrefix)
		// starts_with, not LIKE: the prefix is literal.
		conds = append(conds, fmt.Sprintf("starts_with(url, $%d)", 2+len(args)))
	}
	docs, err := s.retrieveWhere(ctx, req.Query, o.K, o.EfSearch, strings.Join(conds, " AND "), args)
	if err != nil {
		return nil, err
	}
	return &ai.RetrieverResponse{Documents: docs}, nil
}

// pgvecRetrieverK reads the result count from a retriever request's options.
func pgvecRetrieverK(opts any) (int, error) {
	o, err := pgvecRetrieverOpts(opts)
	return o.K, err
}

// pgvecRetrieverOpts reads a retriever request's options, with K defaulted.
func pgvecRetrieverOpts(opts any) (pgvecRetrieverOptions, error) {
	var o pgvecRetrieverOptions
	switch v := opts.(type) {
	case nil:
	case *pgvecRetrieverOptions:
		if v != nil {
			o = *v
		}
	case pgvecRetrieverOptions:
		o = v
	case *localvec.RetrieverOptions:
		if v != nil {
			o.K = v.K
		}
	case map[string]any:
		switch n := v["k"].(type) {
		case nil:
		case float64:
			o.K = int(n)
		case int:
			o.K = n
		default:
			return o, fmt.Errorf("pgvector retriever: option k has type %T, want a number", n)
		}
		for key, dst := range map[string]*string{"source": &o.Source, "urlPrefix": &o.URLPrefix} {
			switch x := v[key].(type) {
			case nil:
			case string:
				*dst = x
			default:
				return o, fmt.Errorf("pgvector retriever: option %s has type %T, want a string", key, x)
			}
		}
		switch n := v["efSearch"].(type) {
		case nil:
		case float64:
			o.EfSearch = int(n)
		case int:
			o.EfSearch = n
		default:
			return o, fmt.Errorf("pgvector retriever: option efSearch has type %T, want a number", n)
		}
	default:
		return o, fmt.Errorf("pgvector retriever: options have type %T, want nil, *localvec.RetrieverOptions or a map of k, source, urlPrefix, efSearch", opts)
	}
	if o.K <= 0 {
		o.K = pgvecDefaultK
	}
	return o, nil
}
