package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/firebase/genkit/go/ai"
)

// sqliteMatrix is the in-memory form of a database's vectors: row i is
// chunk rids[i], its unit vector quantised to int8 in q[i*dim:(i+1)*dim],
// the real value of each element being q * scales[i]. q, rids and scales
// may alias a memory-mapped cache file (then unmap is non-nil and the
// matrix is copied before it is changed).
type sqliteMatrix struct {
	loaded bool
	gen    int64
	dim    int
	rids   []int64
	scales []float32
	q      []int8
	unmap  func() error
}

// release drops the matrix (unmapping a mapped cache file).
func (m *sqliteMatrix) release() {
	if m.unmap != nil {
		m.unmap()
	}
	*m = sqliteMatrix{}
}

// own copies a mapped matrix to the heap so it can be changed, with room
// for extra more rows, so that appending them does not copy it again.
func (m *sqliteMatrix) own(extra int) {
	if m.unmap == nil {
		return
	}
	n := len(m.rids)
	rids := append(make([]int64, 0, n+extra), m.rids...)
	scales := append(make([]float32, 0, n+extra), m.scales...)
	q := append(make([]int8, 0, (n+extra)*m.dim), m.q...)
	m.unmap()
	m.unmap, m.rids, m.scales, m.q = nil, rids, scales, q
}

// quantizeUnit writes v/|v| quantised to int8 into q (len(q) == len(v)) and
// returns the scale (the value of one step); a zero vector gives scale 0.
func quantizeUnit(v []float32, q []byte) float32 {
	inv := localvecInvNorm(v)
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x*inv))))
	}
	if maxAbs == 0 {
		clear(q)
		return 0
	}
	scale := maxAbs / 127
	f := inv / scale
	for i, x := range v {
		q[i] = byte(int8(math.Round(float64(x * f))))
	}
	return scale
}

// candidates returns the rows with the c highest approximate cosine
// similarities to the unit query qq (quantised), best first. Large
// matrices are scanned in parallel. Called with the store's mu held.
func (m *sqliteMatrix) candidates(qq []int8, c int) []localvecHit {
	dim := m.dim
	return localvecScanTopK(len(m.rids), dim, c, func(i int) float32 {
		return float32(dotInt8(qq, m.q[i*dim:(i+1)*dim])) * m.scales[i]
	})
}

// candidatesAllowed is candidates over the rows whose rids are in allowed
// (ascending); the matrix's rids are ascending too, so one merge pass marks
// them. Called with the store's mu held.
func (m *sqliteMatrix) candidatesAllowed(qq []int8, c int, allowed []int64) []localvecHit {
	ok := make([]bool, len(m.rids))
	j := 0
	for i, rid := range m.rids {
		for j < len(allowed) && allowed[j] < rid {
			j++
		}
		ok[i] = j < len(allowed) && allowed[j] == rid
	}
	dim := m.dim
	rejected := float32(math.Inf(-1))
	hits := localvecScanTopK(len(m.rids), dim, c, func(i int) float32 {
		if !ok[i] {
			return rejected
		}
		return float32(dotInt8(qq, m.q[i*dim:(i+1)*dim])) * m.scales[i]
	})
	return slices.DeleteFunc(hits, func(h localvecHit) bool { return h.score == rejected })
}

// sqliteGeneration reads the generation counter and the dimension.
func sqliteGeneration(ctx context.Context, q sqliteQuerier) (gen int64, dim int, err error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('generation', 'dim')`)
	if err != nil {
		return 0, 0, fmt.Errorf("read generation: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return 0, 0, err
		}
		if k == "dim" {
			dim = int(v)
		} else {
			gen = v
		}
	}
	return gen, dim, rows.Err()
}

// refresh brings s.mat up to the database state seen by q (a connection
// inside a read or write transaction): from the cache file when the matrix
// is not loaded yet and the file is current, else by applying the rows
// added and deleted since the generation the matrix (or the cache file)
// reflects. It returns the number of rows read from the database. Called
// with s.mu held exclusively.
func (s *SQLiteStore) refresh(ctx context.Context, q sqliteQuerier) (int, error) {
	gen, dim, err := sqliteGeneration(ctx, q)
	if err != nil {
		return 0, err
	}
	m := &s.mat
	if m.loaded && m.gen == gen {
		return 0, nil
	}
	if !m.loaded {
		if c, err := loadSQLiteVectorCache(s.cachePath()); err == nil && (c.dim == dim || len(c.rids) == 0) {
			*m = c
		}
		m.loaded = true
	}
	if m.gen == gen && m.dim == dim {
		return 0, nil
	}
	if m.dim != dim {
		m.release()
		m.loaded = true
	}
	m.dim = dim
	var maxRid int64
	if n := len(m.rids); n > 0 {
		maxRid = m.rids[n-1]
	}
	if m.unmap != nil {
		// A mapped cache is copied before it changes; count the rows to
		// add first, so the copy has room for them (row IDs only grow).
		var newer int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunks INDEXED BY chunks_source WHERE rid > ?`, maxRid).Scan(&newer); err != nil {
			return 0, fmt.Errorf("count new vectors: %w", err)
		}
		m.own(newer)
	}
	// Rows deleted since: the count of rows up to maxRid differs. chunks
	// and qvecs hold the same row IDs (written and deleted together in
	// one transaction); they are counted and listed from chunks' small
	// source index, not from qvecs, whose pages hold the vectors: at 100k
	// chunks x 1024 that reads ~4 MB instead of ~100 MB (11 ms, not 330).
	var present int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM chunks INDEXED BY chunks_source WHERE rid <= ?`, maxRid).Scan(&present); err != nil {
		return 0, fmt.Errorf("count vectors: %w", err)
	}
	if present != len(m.rids) {
		keep := make(map[int64]bool, present)
		rows, err := q.QueryContext(ctx, `SELECT rid FROM chunks INDEXED BY chunks_source WHERE rid <= ?`, maxRid)
		if err != nil {
			return 0, fmt.Errorf("list vectors: %w", err)
		}
		for rows.Next() {
			var rid int64
			if err := rows.Scan(&rid); err != nil {
				rows.Close()
				return 0, err
			}
			keep[rid] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		w := 0
		for i, rid := range m.rids {
			if !keep[rid] {
				continue
			}
			if w != i {
				m.rids[w], m.scales[w] = rid, m.scales[i]
				copy(m.q[w*dim:(w+1)*dim], m.q[i*dim:(i+1)*dim])
			}
			w++
		}
		m.rids, m.scales, m.q = m.rids[:w], m.scales[:w], m.q[:w*dim]
	}
	rows, err := q.QueryContext(ctx, `SELECT rid, scale, q FROM qvecs WHERE rid > ? ORDER BY rid`, maxRid)
	if err != nil {
		return 0, fmt.Errorf("read vectors: %w", err)
	}
	defer rows.Close()
	added := 0
	for rows.Next() {
		var rid int64
		var scale float32
		var b sql.RawBytes
		if err := rows.Scan(&rid, &scale, &b); err != nil {
			return 0, err
		}
		if len(b) != dim {
			return 0, fmt.Errorf("vector of row %d has %d dimensions, the store has %d", rid, len(b), dim)
		}
		m.rids = append(m.rids, rid)
		m.scales = append(m.scales, scale)
		for _, x := range b {
			m.q = append(m.q, int8(x))
		}
		added++
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	m.gen = gen
	return added, nil
}

// readTx runs fn on one connection inside a read transaction: every query
// fn makes sees the same snapshot of the database.
func (s *SQLiteStore) readTx(ctx context.Context, fn func(conn *sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin read transaction: %w", err)
	}
	ferr := fn(conn)
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil && ferr == nil {
		ferr = fmt.Errorf("end read transaction: %w", err)
	}
	return ferr
}

// sqliteCacheMinRows is the number of rows a query must have read from the
// database into its matrix for it to try to save the vector cache file.
const sqliteCacheMinRows = 4096

// Retrieve returns the k chunks most similar to query by cosine
// similarity, most similar first; k must be positive.
//
// Deprecated: Use SearchVector with a nil Filter (the read every store
// shares), or the Retriever field for a query document of your own.
func (s *SQLiteStore) Retrieve(ctx context.Context, query *ai.Document, k int) ([]*ai.Document, error) {
	return s.retrieveDoc(ctx, query, k)
}

// retrieveDoc returns the k chunks most similar to query by cosine
// similarity, most similar first. It embeds the query, brings the matrix up
// to date with the database, scans the int8 matrix for the best k x Rescore
// candidates and ranks those by their exact float32 cosine similarity, all
// within one read snapshot of the database. k must be positive.
func (s *SQLiteStore) retrieveDoc(ctx context.Context, query *ai.Document, k int) ([]*ai.Document, error) {
	if err := s.checkOpen("retrieve"); err != nil {
		return nil, err
	}
	if query == nil {
		return nil, errors.New("sqlite retrieve: nil query")
	}
	if k < 1 {
		return nil, fmt.Errorf("sqlite retrieve: k must be positive, got %d", k)
	}
	vecs, err := embedChecked(ctx, s.emb, []*ai.Document{query}, 0)
	if err != nil {
		return nil, fmt.Errorf("sqlite retrieve: query: %w", err)
	}
	var docs []*ai.Document
	added := 0
	err = s.readTx(ctx, func(conn *sql.Conn) error {
		s.mu.Lock()
		added, err = s.refresh(ctx, conn)
		s.mu.Unlock()
		if err != nil {
			return err
		}
		docs, err = s.rank(ctx, conn, vecs[0], k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite retrieve: %w", err)
	}
	if added >= sqliteCacheMinRows {
		s.trySaveVectorCache(ctx)
	}
	return docs, nil
}

// rank scans the matrix for candidates and re-scores them exactly.
func (s *SQLiteStore) rank(ctx context.Context, conn *sql.Conn, q []float32, k int) ([]*ai.Document, error) {
	return s.rankAllowed(ctx, conn, q, k, nil)
}

// rankAllowed is rank over the chunks whose rids are in allowed (ascending;
// nil means every chunk).
func (s *SQLiteStore) rankAllowed(ctx context.Context, conn *sql.Conn, q []float32, k int, allowed []int64) ([]*ai.Document, error) {
	s.mu.RLock()
	if len(s.mat.rids) == 0 {
		s.mu.RUnlock()
		return nil, nil
	}
	if len(q) != s.mat.dim {
		s.mu.RUnlock()
		return nil, fmt.Errorf("%w: query vector has %d dimensions, the store has %d", ErrDimensionMismatch, len(q), s.mat.dim)
	}
	qb := make([]byte, len(q))
	quantizeUnit(q, qb)
	qq := make([]int8, len(q))
	for i, b := range qb {
		qq[i] = int8(b)
	}
	var hits []localvecHit
	if allowed == nil {
		hits = s.mat.candidates(qq, max(k*s.rescore, 64))
	} else {
		hits = s.mat.candidatesAllowed(qq, max(k*s.rescore, 64), allowed)
	}
	if len(hits) == 0 {
		s.mu.RUnlock()
		return nil, nil
	}
	rids := make([]any, len(hits))
	for i, h := range hits {
		rids[i] = s.mat.rids[h.row]
	}
	s.mu.RUnlock()

	// The exact scores first (the vectors only), then the documents of
	// the best k: a document is larger than its vector and costs a decode.
	rows, err := conn.QueryContext(ctx, `SELECT rid, vec FROM chunks WHERE rid IN (`+sqlitePlaceholders(len(rids))+`)`, rids...)
	if err != nil {
		return nil, fmt.Errorf("read candidates: %w", err)
	}
	defer rows.Close()
	qinv := localvecInvNorm(q)
	type scored struct {
		score float32
		rid   int64
	}
	var all []scored
	v := make([]float32, len(q))
	for rows.Next() {
		var sc scored
		var vec sql.RawBytes
		if err := rows.Scan(&sc.rid, &vec); err != nil {
			return nil, err
		}
		if sc.score, err = sqliteCosine(vec, q, qinv, v); err != nil {
			return nil, fmt.Errorf("vector of row %d: %w", sc.rid, err)
		}
		all = append(all, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	slices.SortStableFunc(all, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	all = all[:min(k, len(all))]
	top := make([]int64, len(all))
	for i, sc := range all {
		top[i] = sc.rid
	}
	return sqliteReadDocs(ctx, conn, top)
}

// sqliteReadDocs returns the documents of the chunks rids, in that order
// (a missing row is an error).
func sqliteReadDocs(ctx context.Context, q sqliteQuerier, rids []int64) ([]*ai.Document, error) {
	if len(rids) == 0 {
		return nil, nil
	}
	args := make([]any, len(rids))
	at := make(map[int64]int, len(rids))
	for i, rid := range rids {
		args[i] = rid
		at[rid] = i
	}
	rows, err := q.QueryContext(ctx, `SELECT rid, url, source, text, doc, cut FROM chunks WHERE rid IN (`+sqlitePlaceholders(len(rids))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read documents: %w", err)
	}
	defer rows.Close()
	out := make([]*ai.Document, len(rids))
	for rows.Next() {
		var rid int64
		var url, src, text string
		var doc sql.RawBytes
		var cut sql.NullInt64
		if err := rows.Scan(&rid, &url, &src, &text, &doc, &cut); err != nil {
			return nil, err
		}
		d, err := sqliteDecodeChunk(doc, url, src, text, cut)
		if err != nil {
			return nil, err
		}
		out[at[rid]] = d
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i, d := range out {
		if d == nil {
			return nil, fmt.Errorf("read documents: chunk row %d is gone", rids[i])
		}
	}
	return out, nil
}

// retrieve implements the Retriever.
func (s *SQLiteStore) retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	if req == nil || req.Query == nil {
		return nil, errors.New("sqlite retriever: request has no query document")
	}
	k, err := localvecRetrieverK(req.Options)
	if err != nil {
		return nil, fmt.Errorf("sqlite retriever: %w", err)
	}
	docs, err := s.retrieveDoc(ctx, req.Query, k)
	if err != nil {
		return nil, err
	}
	return &ai.RetrieverResponse{Documents: docs}, nil
}
