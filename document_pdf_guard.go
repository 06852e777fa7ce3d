package engine

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/ledongthuc/pdf"
)

// ledongthuc/pdf recovers most malformed input into errors, but a few
// shapes of hostile input make it loop forever, recurse until the Go stack
// overflows or allocate without bound. Those are fatal (recover cannot
// catch them), so they are rejected here before and right after opening:
//
//   - a cycle or very long chain of /Prev cross-reference sections;
//   - cross-reference sizes or indexes far beyond what the file can hold;
//   - /W field widths or /Columns predictor widths that ask for huge buffers;
//   - object nesting deeper than any real document uses;
//   - object streams stored inside object streams, or /Extends cycles.

// pdfMaxNestingInFile bounds the nesting of arrays and dictionaries in the
// file's objects.
const pdfMaxNestingInFile = 1000

// pdfPreflight checks data for the structures that would hang or crash the
// PDF parser. The error wraps ErrInvalidDocument.
func pdfPreflight(data []byte) error {
	if err := pdfCheckNesting(data); err != nil {
		return err
	}
	for rest := data; ; {
		i := bytes.Index(rest, []byte("/Columns"))
		if i < 0 {
			break
		}
		rest = rest[i+len("/Columns"):]
		lx := pdfLexer{buf: rest}
		if v, _, _ := lx.token(0); v.kind == pdfOpNumber && (v.num > 1<<16 || v.num < 0) {
			return fmt.Errorf("%w: predictor /Columns %g out of range", ErrInvalidDocument, v.num)
		}
	}
	return pdfCheckXrefChain(data)
}

// pdfCheckNesting rejects objects nested deeper than pdfMaxNestingInFile,
// skipping stream data.
func pdfCheckNesting(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '[':
			depth++
		case '<':
			if i+1 < len(data) && data[i+1] == '<' {
				depth++
				i++
			}
		case ']':
			depth = max(depth-1, 0)
		case '>':
			if i+1 < len(data) && data[i+1] == '>' {
				depth = max(depth-1, 0)
				i++
			}
		case 's':
			if bytes.HasPrefix(data[i:], []byte("stream")) && (i == 0 || data[i-1] != 'd') {
				end := bytes.Index(data[i:], []byte("endstream"))
				if end < 0 {
					return nil
				}
				i += end + len("endstream") - 1
				depth = 0
			}
		case 'e':
			if bytes.HasPrefix(data[i:], []byte("endobj")) {
				depth = 0
			}
		}
		if depth > pdfMaxNestingInFile {
			return fmt.Errorf("%w: objects nested more than %d deep", ErrInvalidDocument, pdfMaxNestingInFile)
		}
	}
	return nil
}

// pdfMaxObjects returns the largest object count a file of n bytes can
// plausibly hold (cross-reference tables are allocated to this size).
func pdfMaxObjects(n int) int64 { return int64(n)/4 + 1<<16 }

// pdfCheckXrefChain walks the cross-reference sections from startxref
// through their /Prev links, checking sizes and rejecting cycles.
func pdfCheckXrefChain(data []byte) error {
	i := bytes.LastIndex(data, []byte("startxref"))
	if i < 0 {
		return nil // the reader reports the missing startxref itself
	}
	lx := pdfLexer{buf: data, pos: i + len("startxref")}
	v, _, _ := lx.token(0)
	if v.kind != pdfOpNumber {
		return nil
	}
	limit := pdfMaxObjects(len(data))
	seen := map[int64]bool{}
	off := int64(v.num)
	for hops := 0; ; hops++ {
		if off < 0 || off >= int64(len(data)) {
			return nil // the reader rejects a bad offset itself
		}
		if seen[off] || hops > 64 {
			return fmt.Errorf("%w: cross-reference /Prev chain loops", ErrInvalidDocument)
		}
		seen[off] = true
		dict, err := pdfXrefSection(data, int(off), limit)
		if err != nil || dict == nil {
			return err
		}
		if size, ok := dict["Size"]; ok && (size.kind != pdfOpNumber || size.num > float64(limit) || size.num < 0) {
			return fmt.Errorf("%w: cross-reference /Size out of range", ErrInvalidDocument)
		}
		prev, ok := dict["Prev"]
		if !ok || prev.kind != pdfOpNumber {
			return nil
		}
		off = int64(prev.num)
	}
}

// pdfXrefSection checks the cross-reference section at off (a table with
// its trailer, or an xref stream's dictionary) and returns its trailer
// dictionary; nil when the section is not recognisable (the reader
// reports that itself).
func pdfXrefSection(data []byte, off int, limit int64) (map[string]pdfOperand, error) {
	lx := pdfLexer{buf: data, pos: off}
	_, kw, _ := lx.token(0)
	if string(kw) == "xref" {
		for {
			v, kw, more := lx.token(0)
			if !more {
				return nil, nil
			}
			if string(kw) == "trailer" {
				break
			}
			n, _, _ := lx.token(0)
			if v.kind != pdfOpNumber || n.kind != pdfOpNumber {
				return nil, nil
			}
			if v.num < 0 || n.num < 0 || v.num+n.num > float64(limit) {
				return nil, fmt.Errorf("%w: cross-reference subsection %g+%g out of range", ErrInvalidDocument, v.num, n.num)
			}
			for k := 0; k < 3*int(n.num); k++ {
				if _, _, more := lx.token(0); !more {
					return nil, nil
				}
			}
		}
		return pdfReadDictAt(&lx), nil
	}
	// An xref stream: "N G obj << ... >> stream".
	lx.pos = off
	for k := 0; k < 3; k++ {
		if _, _, more := lx.token(0); !more {
			return nil, nil
		}
	}
	dict := pdfReadDictAt(&lx)
	if dict == nil {
		return nil, nil
	}
	if w, ok := dict["W"]; ok {
		total := 0.0
		for _, e := range w.arr {
			if e.num < 0 || e.num > 8 {
				return nil, fmt.Errorf("%w: xref stream /W field width %g", ErrInvalidDocument, e.num)
			}
			total += e.num
		}
		if total == 0 && len(w.arr) > 0 {
			return nil, fmt.Errorf("%w: xref stream /W widths are all zero", ErrInvalidDocument)
		}
	}
	if idx, ok := dict["Index"]; ok {
		for k := 0; k+1 < len(idx.arr); k += 2 {
			s, n := idx.arr[k].num, idx.arr[k+1].num
			if s < 0 || n < 0 || s+n > float64(limit) {
				return nil, fmt.Errorf("%w: xref stream /Index %g+%g out of range", ErrInvalidDocument, s, n)
			}
		}
	}
	return dict, nil
}

// pdfReadDictAt reads the dictionary starting at the lexer's position
// (whitespace, then "<<") and returns each key's first value token; nested
// dictionaries are skipped. nil when no dictionary starts there.
func pdfReadDictAt(lx *pdfLexer) map[string]pdfOperand {
	for lx.pos < len(lx.buf) && pdfIsWhite(lx.buf[lx.pos]) {
		lx.pos++
	}
	if !bytes.HasPrefix(lx.buf[lx.pos:], []byte("<<")) {
		return nil
	}
	lx.pos += 2
	dict := map[string]pdfOperand{}
	key := ""
	for {
		v, kw, more := lx.token(1)
		if !more || string(kw) == ">>" {
			return dict
		}
		if kw != nil {
			key = ""
			continue
		}
		if v.kind == pdfOpName {
			if key != "" {
				dict[key] = v
				key = ""
				continue
			}
			key = string(v.s)
			continue
		}
		if key != "" {
			if v.kind == pdfOpArray {
				v.arr = append([]pdfOperand(nil), v.arr...)
			}
			dict[key] = v
			key = ""
		}
	}
}

// pdfCheckObjectStreams inspects the reader's parsed cross-reference table
// (through reflection, read-only: the reader exposes no API for it) and
// rejects objects whose containing object stream is itself stored in an
// object stream (the reader would recurse without bound) and /Extends
// cycles between object streams (it would loop forever). When the
// reader's internals are not as expected, the check is skipped.
func pdfCheckObjectStreams(r *pdf.Reader, data []byte) (err error) {
	defer func() {
		if recover() != nil {
			err = nil // unexpected internals: skip the check
		}
	}()
	xrefs := reflect.ValueOf(r).Elem().FieldByName("xref")
	if !xrefs.IsValid() || xrefs.Kind() != reflect.Slice {
		return nil
	}
	type entry struct {
		inStream bool
		stream   int
		offset   int64
	}
	n := xrefs.Len()
	get := func(i int) entry {
		x := xrefs.Index(i)
		return entry{
			inStream: x.FieldByName("inStream").Bool(),
			stream:   int(x.FieldByName("stream").FieldByName("id").Uint()),
			offset:   x.FieldByName("offset").Int(),
		}
	}
	extends := map[int]int{} // object stream -> the stream it extends, -1 for none
	extOf := func(s int) int {
		if ext, ok := extends[s]; ok {
			return ext
		}
		extends[s] = -1
		if s < 0 || s >= n {
			return -1
		}
		e := get(s)
		if e.inStream || e.offset <= 0 || e.offset >= int64(len(data)) {
			return -1
		}
		lx := pdfLexer{buf: data, pos: int(e.offset)}
		for k := 0; k < 3; k++ {
			lx.token(0)
		}
		if d := pdfReadDictAt(&lx); d != nil {
			if ext, ok := d["Extends"]; ok && ext.kind == pdfOpNumber {
				extends[s] = int(ext.num)
			}
		}
		return extends[s]
	}
	for i := 0; i < n; i++ {
		e := get(i)
		if !e.inStream {
			continue
		}
		if e.stream == i || e.stream < 0 || e.stream >= n {
			return fmt.Errorf("%w: object %d refers to a bad object stream", ErrInvalidDocument, i)
		}
		if get(e.stream).inStream {
			return fmt.Errorf("%w: object stream %d is stored in another object stream", ErrInvalidDocument, e.stream)
		}
		if _, done := extends[e.stream]; done {
			continue
		}
		seen := map[int]bool{}
		for s := e.stream; s >= 0; s = extOf(s) {
			if seen[s] {
				return fmt.Errorf("%w: object stream /Extends chain loops at %d", ErrInvalidDocument, s)
			}
			seen[s] = true
		}
	}
	return nil
}

// pdfTrimAfterEOF cuts whatever follows the last %%EOF marker: a trailer
// dictionary, an unfinished incremental update or garbage some producers
// append. The reader wants the file to end with %%EOF (and looks for it in
// the last 100 bytes only), so such files were reported as missing %%EOF
// although they have one.
func pdfTrimAfterEOF(data []byte) []byte {
	i := bytes.LastIndex(data, []byte("%%EOF"))
	if i < 0 || len(bytes.TrimSpace(data[i+5:])) == 0 {
		return data
	}
	return data[:i+5]
}
