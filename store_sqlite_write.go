package engine

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// sqliteRow is a chunk ready to be inserted.
type sqliteRow struct {
	id, url, source, textHash, text string
	doc                             *ai.Document
	vec                             []float32
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
	ins, err := conn.PrepareContext(ctx, `INSERT OR IGNORE INTO chunks (id, url, source, text_hash, text, doc, vec) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	insQ, err := conn.PrepareContext(ctx, `INSERT INTO qvecs (rid, scale, q) VALUES (?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer insQ.Close()
	n := 0
	q := make([]byte, dim)
	for i := range rows {
		r := &rows[i]
		if len(r.vec) != dim {
			return 0, fmt.Errorf("chunk %s: %w: vector has %d dimensions, the store has %d", r.id, ErrDimensionMismatch, len(r.vec), dim)
		}
		doc, err := json.Marshal(r.doc)
		if err != nil {
			return 0, fmt.Errorf("chunk %s: document is not JSON-encodable: %w", r.id, err)
		}
		res, err := ins.ExecContext(ctx, r.id, r.url, r.source, r.textHash, r.text, doc, sqliteEncodeVec(r.vec))
		if err != nil {
			return 0, fmt.Errorf("insert chunk %s: %w", r.id, err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			continue
		}
		rid, err := res.LastInsertId()
		if err != nil {
			return 0, err
		}
		scale := quantizeUnit(r.vec, q)
		if _, err := insQ.ExecContext(ctx, rid, scale, q); err != nil {
			return 0, fmt.Errorf("insert vector of chunk %s: %w", r.id, err)
		}
		n++
	}
	return n, nil
}

// sqliteEncodeVec returns v as little-endian float32 bytes.
func sqliteEncodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// sqliteDecodeVec decodes a little-endian float32 blob.
func sqliteDecodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// sqliteDecodeVecInto decodes the vector blob b into v, which must have
// its dimension.
func sqliteDecodeVecInto(b []byte, v []float32) error {
	if len(b) != 4*len(v) {
		return fmt.Errorf("vector of %d bytes, want %d dimensions", len(b), len(v))
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
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
// source, url, text and metadata) with one Embed call and inserts them in
// one transaction. Every document must have text (else an error wrapping
// ErrEmptyDocument); vectors must have the store's dimension (else
// ErrDimensionMismatch). On any error nothing is added.
func (s *SQLiteStore) Index(ctx context.Context, docs []*ai.Document) error {
	if err := s.checkOpen("index"); err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	rows, err := sqlitePrepare(docs)
	if err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].id
	}
	have, err := s.existingIDs(ctx, s.db, ids)
	if err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	var todo []sqliteRow
	var batch []*ai.Document
	for _, r := range rows {
		if !have[r.id] {
			have[r.id] = true
			todo = append(todo, r)
			batch = append(batch, r.doc)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	dim, err := s.storedDim(ctx, s.db)
	if err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	vecs, err := embedChecked(ctx, s.emb, batch, dim)
	if err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	for i := range todo {
		todo[i].vec = vecs[i]
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	err = s.write(ctx, func(conn *sql.Conn) error {
		n, err := s.insertRows(ctx, conn, todo)
		if err != nil || n == 0 {
			return err
		}
		return bumpGeneration(ctx, conn)
	})
	if err != nil {
		return fmt.Errorf("sqlite index: %w", err)
	}
	s.wrote.Store(true)
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
