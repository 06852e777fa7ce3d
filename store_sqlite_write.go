package engine

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// sqliteRow is a chunk ready to be inserted.
type sqliteRow struct {
	id, url, source, textHash, text string
	doc                             *ai.Document
	vec                             []float32
	// enc, when set, is what to write, computed ahead (Bulk).
	enc *sqliteEncoded
}

// sqlitePrepare computes the rows (without vectors) for docs.
func sqlitePrepare(docs []*ai.Document) ([]sqliteRow, error) {
	for i, d := range docs {
		if d == nil || strings.TrimSpace(DocText(d)) == "" {
			return nil, fmt.Errorf("document %d: %w", i, ErrEmptyDocument)
		}
	}
	ids, err := documentIdentities(docs)
	if err != nil {
		return nil, err
	}
	rows := make([]sqliteRow, len(docs))
	for i, d := range docs {
		rows[i] = sqliteRow{
			id:       ids[i].id,
			url:      metaString(d.Metadata, MetaURL),
			source:   metaString(d.Metadata, MetaSource),
			textHash: ids[i].textHash,
			text:     DocText(d),
			doc:      d,
		}
	}
	return rows, nil
}

// insertRows inserts rows (skipping IDs already present) inside a write
// transaction and records the dimension; it returns how many it inserted.
func (s *SQLiteStore) insertRows(ctx context.Context, conn *sql.Conn, rows []sqliteRow) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	dim, err := s.storedDim(ctx, conn)
	if err != nil {
		return 0, err
	}
	if dim == 0 {
		dim = len(rows[0].vec)
		if _, err := conn.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'dim'`, dim); err != nil {
			return 0, fmt.Errorf("record dimension: %w", err)
		}
	}
	for i := range rows {
		if r := &rows[i]; len(r.vec) != dim {
			return 0, fmt.Errorf("chunk %s: %w: vector has %d dimensions, the store has %d", r.id, ErrDimensionMismatch, len(r.vec), dim)
		}
	}
	if err := s.settleLanguage(ctx, conn, rows); err != nil {
		return 0, err
	}
	// Many rows per INSERT statement: each statement that fires the
	// chunk_terms trigger opens a statement savepoint, at which FTS5
	// writes its pending terms out as a new segment (to be merged later),
	// so one statement per row cost a segment per chunk.
	n := 0
	q := make([]byte, dim)
	for start := 0; start < len(rows); start += sqliteInsertBatch {
		part := rows[start:min(start+sqliteInsertBatch, len(rows))]
		args := make([]any, 0, 8*len(part))
		for i := range part {
			r := &part[i]
			if r.enc != nil {
				args = append(args, r.id, r.url, r.source, r.textHash, r.text, r.enc.doc, r.enc.cut, r.enc.vec)
				continue
			}
			doc, cut, err := sqliteCompactDoc(r.doc, r.text)
			if err != nil {
				return 0, fmt.Errorf("chunk %s: document is not JSON-encodable: %w", r.id, err)
			}
			args = append(args, r.id, r.url, r.source, r.textHash, r.text, doc, cut, sqliteEncodeVec(r.vec))
		}
		rs, err := conn.QueryContext(ctx, `INSERT OR IGNORE INTO chunks (id, url, source, text_hash, text, doc, cut, vec) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", len(part)), ", ")+` RETURNING rid, id`, args...)
		if err != nil {
			return 0, fmt.Errorf("insert chunks %s...: %w", part[0].id, err)
		}
		rids := make(map[string]int64, len(part))
		for rs.Next() {
			var rid int64
			var id string
			if err := rs.Scan(&rid, &id); err != nil {
				rs.Close()
				return 0, fmt.Errorf("insert chunks %s...: %w", part[0].id, err)
			}
			rids[id] = rid
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return 0, fmt.Errorf("insert chunks %s...: %w", part[0].id, err)
		}
		if len(rids) == 0 {
			continue
		}
		qargs := make([]any, 0, 3*len(rids))
		for i := range part {
			r := &part[i]
			rid, ok := rids[r.id]
			if !ok {
				continue // already stored (or repeated in rows)
			}
			delete(rids, r.id)
			if r.enc != nil {
				qargs = append(qargs, rid, r.enc.scale, r.enc.q)
				continue
			}
			scale := quantizeUnit(r.vec, q)
			qargs = append(qargs, rid, scale, slices.Clone(q))
		}
		k := len(qargs) / 3
		if _, err := conn.ExecContext(ctx, `INSERT INTO qvecs (rid, scale, q) VALUES `+
			strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", k), ", "), qargs...); err != nil {
			return 0, fmt.Errorf("insert vectors of chunks %s...: %w", part[0].id, err)
		}
		n += k
	}
	return n, nil
}

// sqliteInsertBatch is the most chunks insertRows writes with one
// statement (8 parameters each, well under SQLite's 32,766).
const sqliteInsertBatch = 256

// A vector blob is dense or sparse. Dense: the float32 elements, little
// endian (4 bytes each). Sparse, for vectors whose zeros make it at most
// three quarters of that (the built-in embedder's hashed features fill a
// quarter of their dimensions): sqliteSparseMagic, the dimension
// (uint32), a bitmap of the non-zero elements (bit i%8 of byte i/8) and
// those elements' float32 values in order, little endian. Both are exact:
// an element is left out only when all its bits are zero. The magic is a
// NaN, which no stored vector begins with (a dense vector that would is
// written sparse).
const sqliteSparseMagic uint32 = 0x7fc0ffee

// sqliteEncodeVec returns the blob of v: sparse when that is at most
// three quarters of the dense form, else dense.
func sqliteEncodeVec(v []float32) []byte {
	nz := 0
	for _, x := range v {
		if math.Float32bits(x) != 0 {
			nz++
		}
	}
	dense := 4 * len(v)
	sparse := 8 + (len(v)+7)/8 + 4*nz
	if sparse > dense*3/4 && (len(v) == 0 || math.Float32bits(v[0]) != sqliteSparseMagic) {
		b := make([]byte, dense)
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	b := make([]byte, sparse)
	binary.LittleEndian.PutUint32(b, sqliteSparseMagic)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(v)))
	mask, vals := b[8:8+(len(v)+7)/8], b[8+(len(v)+7)/8:]
	for i, x := range v {
		if u := math.Float32bits(x); u != 0 {
			mask[i/8] |= 1 << (i % 8)
			binary.LittleEndian.PutUint32(vals, u)
			vals = vals[4:]
		}
	}
	return b
}

// sqliteVecDim returns the dimension of the vector blob b and whether b
// is sparse.
func sqliteVecDim(b []byte) (dim int, sparse bool) {
	if len(b) >= 8 && binary.LittleEndian.Uint32(b) == sqliteSparseMagic {
		return int(binary.LittleEndian.Uint32(b[4:])), true
	}
	return len(b) / 4, false
}

// sqliteDecodeVec decodes a vector blob (nil when it is malformed).
func sqliteDecodeVec(b []byte) []float32 {
	dim, _ := sqliteVecDim(b)
	if dim > 8*len(b) { // a sparse blob holds at least one bit per element
		return nil
	}
	v := make([]float32, dim)
	if sqliteDecodeVecInto(b, v) != nil {
		return nil
	}
	return v
}

// sqliteDecodeVecInto decodes the vector blob b into v, which must have
// its dimension.
func sqliteDecodeVecInto(b []byte, v []float32) error {
	dim, sparse := sqliteVecDim(b)
	if dim != len(v) {
		return fmt.Errorf("vector has %d dimensions, want %d", dim, len(v))
	}
	if !sparse {
		if len(b) != 4*len(v) {
			return fmt.Errorf("vector of %d bytes, want %d", len(b), 4*len(v))
		}
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return nil
	}
	nb := (dim + 7) / 8
	if len(b) < 8+nb {
		return fmt.Errorf("sparse vector of %d bytes is truncated", len(b))
	}
	mask, vals := b[8:8+nb], b[8+nb:]
	clear(v)
	for j, m := range mask {
		for m != 0 {
			i := j*8 + bits.TrailingZeros8(m)
			m &= m - 1
			if i >= dim || len(vals) < 4 {
				return fmt.Errorf("sparse vector of %d bytes is malformed", len(b))
			}
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(vals))
			vals = vals[4:]
		}
	}
	if len(vals) != 0 {
		return fmt.Errorf("sparse vector of %d bytes has %d bytes left over", len(b), len(vals))
	}
	return nil
}

// existingIDs returns which of ids are stored.
func (s *SQLiteStore) existingIDs(ctx context.Context, q sqliteQuerier, ids []string) (map[string]bool, error) {
	out := make(map[string]bool)
	const batch = 500
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := q.QueryContext(ctx, `SELECT id FROM chunks WHERE id IN (`+sqlitePlaceholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up chunk IDs: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sqlitePlaceholders returns "?, ?, ..." with n placeholders.
func sqlitePlaceholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Index embeds the documents that are not stored yet (same chunk ID: same
// source, url, text and metadata) and inserts them in one transaction (the
// write path of every store, writeDocs): a text already stored reuses its
// vector, the rest are embedded 100 per Embed call. Every document must
// have text (else an error wrapping ErrEmptyDocument); vectors must have
// the store's dimension (else ErrDimensionMismatch). On any error nothing
// is added. In a Bulk run the held sources commit first.
func (s *SQLiteStore) Index(ctx context.Context, docs []*ai.Document) error {
	if err := s.checkOpen("index"); err != nil {
		return err
	}
	if err := s.flushBulkFor(ctx, replaceScope{}, true); err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	if _, _, err := writeDocs(ctx, s, writeNow, replaceScope{}, docs, nil); err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	return nil
}

// DeleteByURL removes the chunks whose "url" metadata value is url (byte
// for byte) and returns how many it removed.
func (s *SQLiteStore) DeleteByURL(ctx context.Context, url string) (int, error) {
	n, err := s.deleteWhere(ctx, "url", url)
	if err != nil {
		return 0, fmt.Errorf("sqlite delete url %q: %w", url, err)
	}
	return n, nil
}

// DeleteBySource removes the chunks whose "source" metadata value is
// sourceName and returns how many it removed.
func (s *SQLiteStore) DeleteBySource(ctx context.Context, sourceName string) (int, error) {
	n, err := s.deleteWhere(ctx, "source", sourceName)
	if err != nil {
		return 0, fmt.Errorf("sqlite delete source %q: %w", sourceName, err)
	}
	return n, nil
}

// deleteWhere deletes the chunks whose column (a constant: url or source)
// equals value, in one transaction.
func (s *SQLiteStore) deleteWhere(ctx context.Context, column, value string) (int, error) {
	if err := s.checkOpen("delete"); err != nil {
		return 0, err
	}
	if err := s.flushBulkFor(ctx, replaceScope{}, true); err != nil {
		return 0, err
	}
	var n int64
	err := s.write(ctx, func(conn *sql.Conn) error {
		res, err := conn.ExecContext(ctx, `DELETE FROM chunks WHERE `+column+` = ?`, value)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		return bumpGeneration(ctx, conn)
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.wrote.Store(true)
	}
	return int(n), nil
}
