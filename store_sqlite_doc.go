package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// sqliteDecodeDoc decodes a stored document and restores its "url" and
// "source" metadata strings byte for byte from their columns (JSON would
// have replaced invalid UTF-8). Documents of text parts only (every chunk
// the pipeline writes) take a direct path; others decode as ai.Document
// does.
func sqliteDecodeDoc(b []byte, url, source string) (*ai.Document, error) {
	d, ok := sqliteParseDoc(b)
	if !ok {
		d = new(ai.Document)
		if err := json.Unmarshal(b, d); err != nil {
			return nil, fmt.Errorf("decode stored document: %w", err)
		}
	}
	if _, ok := d.Metadata[MetaURL].(string); ok {
		d.Metadata[MetaURL] = url
	}
	if _, ok := d.Metadata[MetaSource].(string); ok {
		d.Metadata[MetaSource] = source
	}
	return d, nil
}

// sqliteParseDoc decodes the JSON of a document whose parts are plain
// text parts ({"content":[{"text":...,"metadata":{...}}],"metadata":{...}},
// the keys spelled so, as json.Marshal writes an ai.Document) as
// json.Unmarshal into ai.Document would, several times faster (no
// reflection, no second pass over each part). It reports false for
// anything else (other keys or part kinds, invalid UTF-8, malformed
// JSON): the caller decodes those with encoding/json.
func sqliteParseDoc(b []byte) (*ai.Document, bool) {
	p := sqliteJSON{b: b}
	d := new(ai.Document)
	content := false
	ok := p.object(func(key string) bool {
		switch key {
		case "content":
			if content {
				return false // json.Unmarshal would start the list again
			}
			content = true
			if p.next() == '[' {
				d.Content = []*ai.Part{} // [] decodes as empty, not nil
			}
			return p.array(func() bool {
				if p.next() != '{' {
					return false // a null part stays nil in json.Unmarshal
				}
				part := &ai.Part{Kind: ai.PartText}
				d.Content = append(d.Content, part)
				return p.object(func(key string) bool {
					switch key {
					case "text":
						var ok bool
						part.Text, ok = p.str()
						return ok
					case "metadata":
						m, ok := p.value()
						part.Metadata, _ = m.(map[string]any)
						return ok && (m == nil || part.Metadata != nil)
					}
					return false
				})
			})
		case "metadata":
			m, ok := p.value()
			d.Metadata, _ = m.(map[string]any)
			return ok && (m == nil || d.Metadata != nil)
		}
		return false
	})
	p.space()
	if !ok || p.i != len(b) {
		return nil, false
	}
	return d, true
}

// sqliteJSON is a JSON reader over b from offset i, for sqliteParseDoc:
// each method reads one construct and reports false where encoding/json
// could decode differently or fail.
type sqliteJSON struct {
	b []byte
	i int
}

func (p *sqliteJSON) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next skips white space and returns the next byte (0 at the end).
func (p *sqliteJSON) next() byte {
	p.space()
	if p.i == len(p.b) {
		return 0
	}
	return p.b[p.i]
}

// object reads {"key": value, ...}, calling member after each key with
// the reader at the value (member reads it). null is an empty object.
func (p *sqliteJSON) object(member func(key string) bool) bool {
	if p.literal("null") {
		return true
	}
	if p.next() != '{' {
		return false
	}
	p.i++
	if p.next() == '}' {
		p.i++
		return true
	}
	for {
		if p.next() != '"' {
			return false
		}
		key, ok := p.str()
		if !ok || p.next() != ':' {
			return false
		}
		p.i++
		if !member(key) {
			return false
		}
		switch p.next() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// array reads [elem, ...], calling elem with the reader at each element.
// null is an empty array.
func (p *sqliteJSON) array(elem func() bool) bool {
	if p.literal("null") {
		return true
	}
	if p.next() != '[' {
		return false
	}
	p.i++
	if p.next() == ']' {
		p.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch p.next() {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// literal reads word (null, true, false) if it comes next.
func (p *sqliteJSON) literal(word string) bool {
	p.space()
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

// value reads any JSON value as encoding/json decodes it into an any:
// map[string]any, []any, string, float64, bool or nil.
func (p *sqliteJSON) value() (any, bool) {
	switch c := p.next(); {
	case c == '"':
		return p.str()
	case c == '{':
		m := map[string]any{}
		ok := p.object(func(key string) bool {
			v, ok := p.value()
			m[key] = v
			return ok
		})
		return m, ok
	case c == '[':
		a := []any{}
		ok := p.array(func() bool {
			v, ok := p.value()
			a = append(a, v)
			return ok
		})
		return a, ok
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

// number reads a JSON number as a float64.
func (p *sqliteJSON) number() (any, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || n > 1 && p.b[intStart] == '0' {
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	return f, err == nil
}

// str reads a JSON string. Invalid UTF-8 (which encoding/json replaces)
// and control characters are refused.
func (p *sqliteJSON) str() (string, bool) {
	if p.next() != '"' {
		return "", false
	}
	p.i++
	var out strings.Builder
	// quote is the first '"' at or after p.i, found again only when an
	// escape consumed it (\"), not after every escape.
	quote := -1
	for {
		if quote < p.i {
			q := bytes.IndexByte(p.b[p.i:], '"')
			if q < 0 {
				return "", false
			}
			quote = p.i + q
		}
		rest := p.b[p.i:]
		end := quote - p.i
		seg := rest[:end]
		esc := bytes.IndexByte(seg, '\\')
		if esc >= 0 {
			seg = seg[:esc]
		}
		if !sqliteJSONPlain(seg) {
			return "", false
		}
		if esc < 0 {
			p.i += end + 1
			if out.Cap() == 0 {
				return string(seg), true
			}
			out.Write(seg)
			return out.String(), true
		}
		if out.Cap() == 0 {
			out.Grow(end + 64)
		}
		out.Write(seg)
		p.i += esc
		if !p.escape(&out) {
			return "", false
		}
	}
}

// sqliteJSONPlain reports whether seg is valid UTF-8 without control
// characters.
func sqliteJSONPlain(seg []byte) bool {
	ascii := true
	for _, c := range seg {
		if c < 0x20 {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return ascii || utf8.Valid(seg)
}

// escape reads the escape at p.i into out.
func (p *sqliteJSON) escape(out *strings.Builder) bool {
	if p.i+1 >= len(p.b) {
		return false
	}
	e := p.b[p.i+1]
	p.i += 2
	switch e {
	case '"', '\\', '/':
		out.WriteByte(e)
	case 'b':
		out.WriteByte('\b')
	case 'f':
		out.WriteByte('\f')
	case 'n':
		out.WriteByte('\n')
	case 'r':
		out.WriteByte('\r')
	case 't':
		out.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return false
		}
		if utf16.IsSurrogate(r) {
			// Only a valid pair; a lone half becomes U+FFFD in
			// encoding/json, which the fallback handles.
			if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
				return false
			}
			p.i += 2
			r2, ok := p.hex4()
			if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
				return false
			}
		}
		out.WriteRune(r)
	default:
		return false
	}
	return true
}

// hex4 reads the four hex digits of a \u escape.
func (p *sqliteJSON) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
