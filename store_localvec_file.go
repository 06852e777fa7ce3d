package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// loadLocalvecFile reads a localvec database file into rows (sorted by ID).
// A missing file is an empty database.
func loadLocalvecFile(path string) (localvecRows, error) {
	rows := localvecRows{byID: make(map[string]int)}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rows, nil
	}
	if err != nil {
		return rows, fmt.Errorf("open database: %w", err)
	}
	defer f.Close()
	var data map[string]localvec.DbValue
	if err := json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&data); err != nil {
		return rows, fmt.Errorf("parse %s: %w", path, err)
	}
	ids := make([]string, 0, len(data))
	for id := range data {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	add := make([]localvecNewRow, 0, len(ids))
	dim := 0
	if len(ids) > 0 {
		dim = len(data[ids[0]].Embedding)
	}
	for _, id := range ids {
		v := data[id]
		switch {
		case v.Doc == nil:
			return rows, fmt.Errorf("parse %s: entry %q has no document", path, id)
		case len(v.Embedding) == 0:
			return rows, fmt.Errorf("parse %s: entry %q has no embedding", path, id)
		case len(v.Embedding) != dim:
			return rows, fmt.Errorf("parse %s: entry %q: %w: %d dimensions, entry %q has %d", path, id, ErrDimensionMismatch, len(v.Embedding), ids[0], dim)
		}
		add = append(add, localvecNewRow{id: id, doc: v.Doc, vec: v.Embedding})
		delete(data, id) // let the decoded vector go once copied
	}
	rows.append(add)
	return rows, nil
}

// append adds rows at the end. Called with the store's mu held exclusively.
func (r *localvecRows) append(add []localvecNewRow) {
	if len(add) == 0 {
		return
	}
	if r.byID == nil {
		r.byID = make(map[string]int)
	}
	if len(r.ids) == 0 {
		r.dim = len(add[0].vec)
	}
	if n := len(add) * r.dim; len(r.vecs)+n > cap(r.vecs) {
		// At least double: append's growth of large slices (1.25x) would
		// copy the matrix many times over as a run adds batch after batch.
		r.vecs = slices.Grow(r.vecs, max(n, cap(r.vecs)))
	}
	if r.langs == nil {
		r.langs = make(map[string]int)
	}
	for _, a := range add {
		r.langs[documentLanguage(a.doc)]++
		r.byID[a.id] = len(r.ids)
		r.ids = append(r.ids, a.id)
		r.docs = append(r.docs, a.doc)
		r.js = append(r.js, a.js)
		r.vecs = append(r.vecs, a.vec...)
		r.inv = append(r.inv, localvecInvNorm(a.vec))
	}
}

// localvecInvNorm returns 1/|v|, or 0 for a zero vector (which then scores 0
// against every query).
func localvecInvNorm(v []float32) float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return 0
	}
	return float32(1 / math.Sqrt(sum))
}

// remove deletes the rows whose IDs are in del, keeping the order of the
// others, in one pass. Called with the store's mu held exclusively.
func (r *localvecRows) remove(del map[string]bool) {
	if len(del) == 0 {
		return
	}
	// The keyword index covers the first kn rows; the kept ones of them
	// stay the first (order is kept), kw's rows 0..kw.live()-1.
	kn := 0
	if r.kw != nil {
		kn = r.kw.live()
	}
	w, kw := 0, 0
	for i, id := range r.ids {
		if del[id] {
			delete(r.byID, id)
			r.langs[documentLanguage(r.docs[i])]--
			if i < kn {
				r.kw.drop(i)
			}
			continue
		}
		if w != i {
			r.ids[w], r.docs[w], r.js[w], r.inv[w] = id, r.docs[i], r.js[i], r.inv[i]
			if i < kn {
				r.kw.move(i, w)
			}
			copy(r.vecs[w*r.dim:(w+1)*r.dim], r.vecs[i*r.dim:(i+1)*r.dim])
			r.byID[id] = w
		}
		if i < kn {
			kw++
		}
		w++
	}
	clear(r.docs[w:])
	clear(r.js[w:])
	r.kw.truncate(kw)
	r.ids, r.docs, r.js, r.inv, r.vecs = r.ids[:w], r.docs[:w], r.js[:w], r.inv[:w], r.vecs[:w*r.dim]
	if w == 0 {
		r.dim = 0
	}
}

// vec returns row i's vector.
func (r *localvecRows) vec(i int) []float32 { return r.vecs[i*r.dim : (i+1)*r.dim : (i+1)*r.dim] }

// writeFile atomically replaces the file at path with the database made of
// rows without those in del, plus add, in localvec's format with the IDs in
// sorted order: it writes a temporary file in the same directory, syncs it,
// renames it over path and syncs the directory, so that a crash at any
// point leaves either the old or the new file. Called with the store's mu
// held (shared is enough).
func (r *localvecRows) writeFile(path string, add []localvecNewRow, del map[string]bool) (err error) {
	type entry struct {
		id  string
		doc *ai.Document
		vec []float32
		js  []byte
	}
	entries := make([]entry, 0, len(r.ids)+len(add))
	for i, id := range r.ids {
		if !del[id] {
			entries = append(entries, entry{id, r.docs[i], r.vec(i), r.js[i]})
		}
	}
	for _, a := range add {
		entries = append(entries, entry{a.id, a.doc, a.vec, a.js})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.id, b.id) })

	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	w := newLocalvecAsyncWriter(tmp)
	defer w.close() // on the error returns; a second close is a no-op
	w.buf = append(w.buf, '{')
	for i, e := range entries {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		doc := e.js
		if doc == nil {
			if doc, err = json.Marshal(e.doc); err != nil {
				return fmt.Errorf("write database: document %s: %w", e.id, err)
			}
		}
		b := strconv.AppendQuote(w.buf, e.id) // IDs are hex: quoting is JSON-safe
		b = append(b, `:{"doc":`...)
		b = append(b, doc...)
		b = append(b, `,"embedding":[`...)
		for j, x := range e.vec {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONFloat32(b, x)
		}
		w.buf = append(b, "]}"...)
		w.flushIfFull()
	}
	w.buf = append(w.buf, "}\n"...)
	if err := w.close(); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write database: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write database: %w", err)
	}
	syncLocalvecDir(filepath.Dir(path))
	return nil
}

// syncLocalvecDir fsyncs dir so that a rename in it is durable. Errors are
// ignored: some platforms and file systems cannot sync a directory, and the
// rename itself has already succeeded.
func syncLocalvecDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// globEscape escapes the filepath.Match metacharacters in s.
func globEscape(s string) string {
	if filepath.Separator == '\\' {
		return s // backslash is the separator; names with * ? [ are rare there
	}
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(s)
}

// appendJSONFloat32 appends x the way encoding/json encodes a float32 (so
// files match localvec's byte for byte in their numbers). x must be finite.
func appendJSONFloat32(b []byte, x float32) []byte {
	if x == 0 && !math.Signbit(float64(x)) {
		return append(b, '0') // common in sparse vectors
	}
	f := float64(x)
	format := byte('f')
	if a := float32(math.Abs(f)); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 32)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
