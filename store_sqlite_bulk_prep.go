package engine

import (
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A Bulk run commits its batches in a goroutine of its own while the run
// prepares the next sources, so what a row's insert computes in Go is
// done beforehand, when the source is held (sqliteEncodeRows): the
// document's JSON, the vector blob, the quantised vector and the keyword
// terms the chunk_terms trigger asks askyourdocs_terms for. The insert
// then only writes.

// sqliteEncoded is what insertRows writes for a row, computed ahead.
type sqliteEncoded struct {
	doc, vec, q []byte
	cut         sql.NullInt64
	scale       float32
	// termsKey is the row's key in sqliteTermsAhead ("" when its
	// metadata is not the plain strings the key is made of).
	termsKey, terms string
}

// sqliteEncodeRows computes the sqliteEncoded of every row (vectors set),
// the terms in language (the database's recorded one, as the trigger
// passes it).
func sqliteEncodeRows(rows []sqliteRow, language string) error {
	an, err := sharedAnalyzer(language)
	if err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		doc, cut, err := sqliteCompactDoc(r.doc, r.text)
		if err != nil {
			return fmt.Errorf("chunk %s: document is not JSON-encodable: %w", r.id, err)
		}
		e := &sqliteEncoded{doc: doc, cut: cut, vec: sqliteEncodeVec(r.vec), q: make([]byte, len(r.vec))}
		e.scale = quantizeUnit(r.vec, e.q)
		crumb, ok1 := sqliteMetaPlain(r.doc.Metadata, MetaBreadcrumb)
		heads, ok2 := sqliteMetaPlain(r.doc.Metadata, MetaHeadings)
		if ok1 && ok2 {
			e.termsKey = sqliteTermsKey(language, r.text, crumb, heads)
			e.terms = sqliteEncodeTerms(an, r.text, bm25JoinHeading(crumb, heads))
		}
		r.enc = e
	}
	return nil
}

// sqliteMetaPlain returns the metadata string at key as json_extract
// gives it to askyourdocs_terms: "" when missing; ok false when the value
// is not a string (json_extract would give its JSON) or a string JSON
// would change (invalid UTF-8).
func sqliteMetaPlain(meta map[string]any, key string) (string, bool) {
	v, found := meta[key]
	if !found || v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok && utf8.ValidString(s)
}

// sqliteTermsKey is the key of askyourdocs_terms's arguments.
func sqliteTermsKey(language, text, crumb, heads string) string {
	return language + "\x00" + crumb + "\x00" + heads + "\x00" + text
}

// sqliteTermsAhead holds terms computed ahead for the rows a batch is
// inserting, by sqliteTermsKey; askyourdocs_terms returns a held value
// instead of analysing the text again (the same value: both come from
// sqliteEncodeTerms). Entries are added before a batch's transaction and
// removed after it, committed or not.
var sqliteTermsAhead struct {
	mu sync.Mutex
	n  atomic.Int64 // entries held, so that other inserts skip the key
	m  map[string]string
	// hits counts the values returned (what a test checks was used).
	hits atomic.Int64
}

// sqliteHoldTerms adds the rows' terms to sqliteTermsAhead and returns the
// function that removes them.
func sqliteHoldTerms(rows []sqliteRow) (release func()) {
	t := &sqliteTermsAhead
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]string{}
	}
	var keys []string
	for i := range rows {
		if e := rows[i].enc; e != nil && e.termsKey != "" {
			if _, dup := t.m[e.termsKey]; !dup {
				t.m[e.termsKey] = e.terms
				keys = append(keys, e.termsKey)
			}
		}
	}
	t.n.Add(int64(len(keys)))
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		for _, k := range keys {
			delete(t.m, k)
		}
		t.n.Add(-int64(len(keys)))
		t.mu.Unlock()
	}
}

// sqliteHeldTerms returns the terms held for the arguments, if any.
func sqliteHeldTerms(language, text, crumb, heads string) (string, bool) {
	t := &sqliteTermsAhead
	if t.n.Load() == 0 {
		return "", false
	}
	k := sqliteTermsKey(language, text, crumb, heads)
	t.mu.Lock()
	defer t.mu.Unlock()
	terms, ok := t.m[k]
	if ok {
		t.hits.Add(1)
	}
	return terms, ok
}
