package engine

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// A chunk's text was stored three times: in the text column, as the text
// of the document's one part and inside its MetaParentText (which
// contains it), so that the database was four times the HTML it was made
// from. Since schema 7 the document JSON leaves the text to the text
// column: its part's text is "" and, when the parent text contains the
// text, the parent text is stored without it, the column cut (a byte
// offset) saying where it goes back in. cut -1: only the part's text was
// left out; NULL: the document is stored whole (rows written before
// schema 7, and documents of another shape).

// sqliteCompactDoc returns the JSON of d to store beside its text (the
// text column, DocText(d)) and the cut column's value.
func sqliteCompactDoc(d *ai.Document, text string) ([]byte, sql.NullInt64, error) {
	if len(d.Content) != 1 || d.Content[0] == nil || !d.Content[0].IsText() || d.Content[0].Text != text || !utf8.ValidString(text) {
		b, err := json.Marshal(d)
		return b, sql.NullInt64{}, err
	}
	part := *d.Content[0]
	part.Text = ""
	c := *d
	c.Content = []*ai.Part{&part}
	cut := int64(-1)
	if pt, ok := d.Metadata[MetaParentText].(string); ok && utf8.ValidString(pt) {
		if i := strings.Index(pt, text); i >= 0 {
			c.Metadata = maps.Clone(d.Metadata)
			c.Metadata[MetaParentText] = pt[:i] + pt[i+len(text):]
			cut = int64(i)
		}
	}
	b, err := json.Marshal(&c)
	return b, sql.NullInt64{Int64: cut, Valid: true}, err
}

// sqliteDecodeChunk decodes a stored chunk: its document JSON b, its "url"
// and "source" values, its text and its cut (sqliteCompactDoc).
func sqliteDecodeChunk(b []byte, url, source, text string, cut sql.NullInt64) (*ai.Document, error) {
	d, err := sqliteDecodeDoc(b, url, source)
	if err != nil || !cut.Valid {
		return d, err
	}
	if len(d.Content) != 1 || d.Content[0] == nil || !d.Content[0].IsText() || d.Content[0].Text != "" {
		return nil, fmt.Errorf("decode stored document: a compact document (cut %d) must have one empty text part", cut.Int64)
	}
	d.Content[0].Text = text
	if cut.Int64 < 0 {
		return d, nil
	}
	pt, ok := d.Metadata[MetaParentText].(string)
	if !ok || cut.Int64 > int64(len(pt)) {
		return nil, fmt.Errorf("decode stored document: cut %d outside the parent text (%d bytes)", cut.Int64, len(pt))
	}
	d.Metadata[MetaParentText] = pt[:cut.Int64] + text + pt[cut.Int64:]
	return d, nil
}
