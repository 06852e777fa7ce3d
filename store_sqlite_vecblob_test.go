package engine

import (
	"context"
	"math"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLiteVectorBlobRoundTrip checks that every vector decodes to
// exactly its bits, sparse vectors take less room than dense ones, and
// the two forms are told apart.
func TestSQLiteVectorBlobRoundTrip(t *testing.T) {
	sparse := make([]float32, 1024)
	for i := 0; i < len(sparse); i += 5 {
		sparse[i] = float32(i) * 0.001
	}
	sparse[1] = float32(math.Copysign(0, -1)) // -0 is not a zero bit pattern
	dense := make([]float32, 64)
	for i := range dense {
		dense[i] = float32(i+1) / 7
	}
	magicFirst := append([]float32{math.Float32frombits(sqliteSparseMagic)}, dense[1:]...)
	for name, v := range map[string][]float32{
		"sparse": sparse, "dense": dense, "magic-first": magicFirst,
		"zero": make([]float32, 16), "empty": {}, "one": {3},
	} {
		b := sqliteEncodeVec(v)
		got := sqliteDecodeVec(b)
		if len(got) != len(v) {
			t.Fatalf("%s: decoded %d dimensions, want %d", name, len(got), len(v))
		}
		for i := range v {
			if math.Float32bits(got[i]) != math.Float32bits(v[i]) {
				t.Fatalf("%s: element %d is %v, want %v", name, i, got[i], v[i])
			}
		}
		into := make([]float32, len(v))
		if err := sqliteDecodeVecInto(b, into); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sqliteDecodeVecInto(b, make([]float32, len(v)+1)); err == nil {
			t.Errorf("%s: decoded into a vector of another dimension", name)
		}
	}
	if b := sqliteEncodeVec(sparse); len(b) >= 4*len(sparse)*3/4 {
		t.Errorf("sparse vector: %d bytes, want under %d", len(b), 4*len(sparse)*3/4)
	}
	if b := sqliteEncodeVec(dense); len(b) != 4*len(dense) {
		t.Errorf("dense vector: %d bytes, want %d", len(b), 4*len(dense))
	}
	bad := sqliteEncodeVec(sparse)
	if sqliteDecodeVec(bad[:len(bad)-2]) != nil || sqliteDecodeVec(append(bad, 0, 0, 0, 0)) != nil {
		t.Error("a truncated or padded sparse vector decoded")
	}
}

// TestSQLiteOpensDenseVectors checks that a store reads vectors written
// dense (as schema 5 wrote every vector) beside sparse ones: an index
// written before sparse vectors keeps working, and its schema is moved
// to the current version.
func TestSQLiteOpensDenseVectors(t *testing.T) {
	ctx := context.Background()
	emb := newTestEmbedder(64)
	path := t.TempDir() + "/old.db"
	s := sqliteTestStore(t, path, emb)
	var docs []*ai.Document
	for _, text := range []string{"alpha beta", "gamma delta", "epsilon zeta"} {
		docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaURL: "u", MetaSource: "u"}))
	}
	if err := s.Index(ctx, docs); err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rid, vec FROM chunks`)
	if err != nil {
		t.Fatal(err)
	}
	dense := map[int64][]byte{}
	for rows.Next() {
		var rid int64
		var b []byte
		if err := rows.Scan(&rid, &b); err != nil {
			t.Fatal(err)
		}
		v := sqliteDecodeVec(b)
		d := make([]byte, 0, 4*len(v))
		for _, x := range v {
			d = append(d, byte(math.Float32bits(x)), byte(math.Float32bits(x)>>8), byte(math.Float32bits(x)>>16), byte(math.Float32bits(x)>>24))
		}
		dense[rid] = d
	}
	rows.Close()
	for rid, d := range dense {
		if _, err := s.db.ExecContext(ctx, `UPDATE chunks SET vec = ? WHERE rid = ?`, d, rid); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE meta SET value = 5 WHERE key = 'schema'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = sqliteTestStore(t, path, emb)
	var version int
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Fatalf("schema %d (%v), want %d", version, err, sqliteSchemaVersion)
	}
	for _, d := range docs {
		got, err := s.retrieveDoc(ctx, d, 1)
		if err != nil || len(got) != 1 || DocText(got[0]) != DocText(d) {
			t.Fatalf("retrieve %q: %v, %v", DocText(d), got, err)
		}
	}
	// A vector reused by text (fillVectors) decodes from the dense form.
	if _, _, err := IndexSource(ctx, s, &ingestTestSource{url: "other", texts: []string{"alpha beta"}}, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
}
