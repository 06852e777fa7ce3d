package engine

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestSQLiteCompactDocRoundTrip: a document stored without its text
// (sqliteCompactDoc) decodes as its whole JSON does, for every shape: a
// parent text that contains the text (at its start, middle or end, or
// twice), one that does not, none, several parts, text that is not valid
// UTF-8, and a part with metadata.
func TestSQLiteCompactDocRoundTrip(t *testing.T) {
	text := "The cmake_minimum_required command sets the policy version."
	meta := func(kv ...any) map[string]any {
		m := map[string]any{MetaURL: "file:///a.html", MetaSource: "a.html", "n": 3.0}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	withPartMeta := ai.DocumentFromText(text, meta(MetaParentText, "Intro. "+text))
	withPartMeta.Content[0].Metadata = map[string]any{"k": "v"}
	cases := map[string]struct {
		doc *ai.Document
		cut int64 // -2: stored whole
	}{
		"parent middle":       {ai.DocumentFromText(text, meta(MetaParentText, "Heading\n"+text+" More after.", MetaBreadcrumb, "A > B")), 8},
		"parent start":        {ai.DocumentFromText(text, meta(MetaParentText, text+" More.")), 0},
		"parent end":          {ai.DocumentFromText(text, meta(MetaParentText, "Before. "+text)), 8},
		"parent is text":      {ai.DocumentFromText(text, meta(MetaParentText, text)), 0},
		"parent twice":        {ai.DocumentFromText(text, meta(MetaParentText, text+" "+text)), 0},
		"parent other":        {ai.DocumentFromText(text, meta(MetaParentText, "something else")), -1},
		"parent not a string": {ai.DocumentFromText(text, meta(MetaParentText, 7.0)), -1},
		"no parent":           {ai.DocumentFromText(text, meta()), -1},
		"part metadata":       {withPartMeta, 7},
		"two parts":           {&ai.Document{Content: []*ai.Part{ai.NewTextPart("one "), ai.NewTextPart("two")}, Metadata: meta()}, -2},
		"invalid utf8":        {ai.DocumentFromText("bad \xff byte", meta(MetaParentText, "x bad \xff byte")), -2},
	}
	for name, c := range cases {
		whole, err := json.Marshal(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		url, src := metaString(c.doc.Metadata, MetaURL), metaString(c.doc.Metadata, MetaSource)
		want, err := sqliteDecodeDoc(whole, url, src)
		if err != nil {
			t.Fatal(err)
		}
		b, cut, err := sqliteCompactDoc(c.doc, DocText(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.cut == -2 && cut.Valid, c.cut != -2 && (!cut.Valid || cut.Int64 != c.cut):
			t.Errorf("%s: cut %v, want %d (-2: stored whole)", name, cut, c.cut)
		}
		if cut.Valid && len(b) >= len(whole)-len(text) {
			t.Errorf("%s: compact JSON is %d bytes, the whole one %d: the text is still in it", name, len(b), len(whole))
		}
		got, err := sqliteDecodeChunk(b, url, src, DocText(c.doc), cut)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded\n%#v\nwant\n%#v", name, got, want)
		}
	}
	// A cut past the parent text is an error, not a panic.
	b, _, _ := sqliteCompactDoc(cases["parent middle"].doc, text)
	if _, err := sqliteDecodeChunk(b, "", "", text, sql.NullInt64{Int64: 1 << 20, Valid: true}); err == nil {
		t.Error("a cut outside the parent text decoded")
	}
}

// TestSQLiteSchema6Migrates opens a schema 6 database (documents stored
// whole, no cut column): it becomes schema 7, its chunks read back as
// before, and chunks added afterwards are stored without their text and
// read back alike.
func TestSQLiteSchema6Migrates(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v6.db")
	docs := keywordParityDocs(60)
	for i, d := range docs {
		d.Metadata[MetaParentText] = "Before the chunk. " + DocText(d) + " After it."
		if i%7 == 0 {
			delete(d.Metadata, MetaParentText)
		}
	}
	old, added := docs[:40], docs[40:]
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Index(ctx, old); err != nil {
		t.Fatal(err)
	}
	// Turn the database into what schema 6 wrote: whole documents, no
	// cut column.
	rows, err := s.db.QueryContext(ctx, `SELECT rid, url, source, text, doc, cut FROM chunks`)
	if err != nil {
		t.Fatal(err)
	}
	whole := map[int64][]byte{}
	for rows.Next() {
		var rid int64
		var url, src, text string
		var doc []byte
		var cut sql.NullInt64
		if err := rows.Scan(&rid, &url, &src, &text, &doc, &cut); err != nil {
			t.Fatal(err)
		}
		if !cut.Valid {
			t.Fatalf("row %d stored whole by schema 7", rid)
		}
		d, err := sqliteDecodeChunk(doc, url, src, text, cut)
		if err != nil {
			t.Fatal(err)
		}
		if whole[rid], err = json.Marshal(d); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	for rid, b := range whole {
		if _, err := s.db.ExecContext(ctx, `UPDATE chunks SET doc = ? WHERE rid = ?`, b, rid); err != nil {
			t.Fatal(err)
		}
	}
	for _, stmt := range []string{`ALTER TABLE chunks DROP COLUMN cut`, `UPDATE meta SET value = 6 WHERE key = 'schema'`} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	s, err = NewSQLiteStore(ctx, nil, newTestEmbedder(8), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version, compact int
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&version); err != nil || version != sqliteSchemaVersion {
		t.Fatalf("schema %d (%v) after opening a schema 6 database, want %d", version, err, sqliteSchemaVersion)
	}
	if err := s.Index(ctx, added); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE cut IS NOT NULL`).Scan(&compact); err != nil || compact != len(added) {
		t.Fatalf("%d compact rows (%v), want the %d added after the migration", compact, err, len(added))
	}
	// Every chunk, old or new, reads back as the document indexed.
	dir := t.TempDir()
	p, n, err := s.ExportLocalvec(ctx, dir, "x")
	if err != nil || n != len(docs) {
		t.Fatalf("export: %d documents (%v), want %d", n, err, len(docs))
	}
	exported, err := loadLocalvecFile(p)
	if err != nil {
		t.Fatal(err)
	}
	byN := map[float64]*ai.Document{}
	for _, d := range docs {
		byN[float64(d.Metadata["n"].(int))] = d
	}
	for _, d := range exported.docs {
		n, _ := d.Metadata["n"].(float64)
		if want := byN[n]; want == nil || !reflect.DeepEqual(sqliteJSONRoundTrip(t, d), sqliteJSONRoundTrip(t, want)) {
			t.Fatalf("chunk %v reads back as\n%#v\nwant\n%#v", n, d, want)
		}
	}
	// A chunk of the old rows and one of the new whose text no other has.
	count := map[string]int{}
	for _, d := range docs {
		count[DocText(d)]++
	}
	var probe []*ai.Document
	for _, part := range [][]*ai.Document{old, added} {
		for _, d := range part {
			if count[DocText(d)] == 1 {
				probe = append(probe, d)
				break
			}
		}
	}
	for _, d := range probe {
		got, err := s.keywordSearch(ctx, DocText(d), 1, nil, nil)
		if err != nil || len(got) != 1 {
			t.Fatalf("keyword search: %d results (%v)", len(got), err)
		}
		if !reflect.DeepEqual(sqliteJSONRoundTrip(t, got[0]), sqliteJSONRoundTrip(t, d)) {
			t.Errorf("keyword search returns\n%#v\nwant\n%#v", got[0], d)
		}
		vec, err := s.retrieveDoc(ctx, d, 1)
		if err != nil || len(vec) != 1 || DocText(vec[0]) != DocText(d) {
			t.Fatalf("vector search: %v (%v)", vec, err)
		}
		if !reflect.DeepEqual(sqliteJSONRoundTrip(t, vec[0]), sqliteJSONRoundTrip(t, d)) {
			t.Errorf("vector search returns\n%#v\nwant\n%#v", vec[0], d)
		}
	}
}

// sqliteJSONRoundTrip returns d as its JSON decodes (numbers as float64,
// what every store returns).
func sqliteJSONRoundTrip(t *testing.T, d *ai.Document) *ai.Document {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sqliteDecodeDoc(b, metaString(d.Metadata, MetaURL), metaString(d.Metadata, MetaSource))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
