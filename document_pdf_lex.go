package engine

import "bytes"

// This file holds the tokenizer shared by the PDF content-stream interpreter
// and the ToUnicode CMap parser. It works on the decoded stream bytes,
// allocates only for arrays and escaped strings, and never panics: malformed
// input yields odd tokens, not crashes.

// pdfOperandKind says what a pdfOperand holds.
type pdfOperandKind uint8

const (
	pdfOpNumber pdfOperandKind = iota + 1
	pdfOpString
	pdfOpName
	pdfOpArray
	pdfOpDict // a dictionary; its contents are skipped
	pdfOpOther
)

// pdfOperand is one operand of a content-stream operator.
type pdfOperand struct {
	kind pdfOperandKind
	num  float64
	s    []byte       // string bytes or name (valid until the next operator)
	arr  []pdfOperand // array elements
}

// pdfMaxArgs bounds the operand stack of the tokenizer; operands beyond it
// are dropped (no operator takes more than a handful).
const pdfMaxArgs = 1 << 14

// pdfMaxNesting bounds array and dictionary nesting.
const pdfMaxNesting = 32

// pdfLexer splits a content stream into operators and their operands.
type pdfLexer struct {
	buf     []byte
	pos     int
	args    []pdfOperand
	scratch []byte       // decoded strings of the current operator
	arena   []pdfOperand // elements of the current operator's arrays
}

func pdfIsWhite(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func pdfIsDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// next reads the operands up to the next operator and returns the operator;
// l.args holds its operands. ok is false at the end of the input.
func (l *pdfLexer) next() (op []byte, ok bool) {
	l.args = l.args[:0]
	l.scratch = l.scratch[:0]
	l.arena = l.arena[:0]
	for {
		v, kw, more := l.token(0)
		if !more {
			return nil, false
		}
		if kw != nil {
			switch string(kw) {
			case "]", ">>":
				continue // stray closer
			case "BI":
				l.skipInlineImage()
			}
			return kw, true
		}
		if len(l.args) < pdfMaxArgs {
			l.args = append(l.args, v)
		}
	}
}

// token returns the next operand, or the next keyword in kw. Arrays and
// dictionaries are read whole. more is false at the end of the input.
func (l *pdfLexer) token(depth int) (v pdfOperand, kw []byte, more bool) {
	buf := l.buf
	for l.pos < len(buf) {
		c := buf[l.pos]
		switch {
		case pdfIsWhite(c):
			l.pos++
		case c == '%':
			for l.pos < len(buf) && buf[l.pos] != '\n' && buf[l.pos] != '\r' {
				l.pos++
			}
		case c == '/':
			l.pos++
			return pdfOperand{kind: pdfOpName, s: l.name()}, nil, true
		case c == '(':
			return pdfOperand{kind: pdfOpString, s: l.literal()}, nil, true
		case c == '<':
			if l.pos+1 < len(buf) && buf[l.pos+1] == '<' {
				l.pos += 2
				if depth >= pdfMaxNesting {
					continue // too deep: ignore the structure, do not recurse
				}
				l.skipDict(depth + 1)
				return pdfOperand{kind: pdfOpDict}, nil, true
			}
			return pdfOperand{kind: pdfOpString, s: l.hex()}, nil, true
		case c == '>':
			if l.pos+1 < len(buf) && buf[l.pos+1] == '>' {
				l.pos += 2
				return v, buf[l.pos-2 : l.pos], true
			}
			l.pos++
		case c == '[':
			l.pos++
			if depth >= pdfMaxNesting {
				continue
			}
			return l.array(depth + 1), nil, true
		case c == ']':
			l.pos++
			return v, buf[l.pos-1 : l.pos], true
		case c == '{' || c == '}' || c == ')':
			l.pos++
		default:
			start := l.pos
			for l.pos < len(buf) && !pdfIsWhite(buf[l.pos]) && !pdfIsDelim(buf[l.pos]) {
				l.pos++
			}
			word := buf[start:l.pos]
			if n, isNum := pdfParseNumber(word); isNum {
				return pdfOperand{kind: pdfOpNumber, num: n}, nil, true
			}
			switch string(word) {
			case "true", "false", "null":
				return pdfOperand{kind: pdfOpOther}, nil, true
			}
			return v, word, true
		}
	}
	return v, nil, false
}

// array reads array elements up to the closing bracket. Top-level arrays
// live in the lexer's arena until the next operator.
func (l *pdfLexer) array(depth int) pdfOperand {
	var elems []pdfOperand
	from := 0
	if depth == 1 {
		elems, from = l.arena, len(l.arena)
	}
	for {
		v, kw, more := l.token(depth)
		if !more {
			break
		}
		if kw != nil {
			if string(kw) == "]" {
				break
			}
			continue // operators have no place in an array
		}
		if len(elems)-from < pdfMaxArgs {
			elems = append(elems, v)
		}
	}
	if depth == 1 {
		l.arena = elems
		return pdfOperand{kind: pdfOpArray, arr: elems[from:len(elems):len(elems)]}
	}
	return pdfOperand{kind: pdfOpArray, arr: elems[from:]}
}

// skipDict skips a dictionary's contents up to its closing ">>".
func (l *pdfLexer) skipDict(depth int) {
	for {
		_, kw, more := l.token(depth)
		if !more || string(kw) == ">>" {
			return
		}
	}
}

// name reads a name after its slash, decoding #xx escapes.
func (l *pdfLexer) name() []byte {
	buf := l.buf
	start := l.pos
	escaped := false
	for l.pos < len(buf) && !pdfIsWhite(buf[l.pos]) && !pdfIsDelim(buf[l.pos]) {
		if buf[l.pos] == '#' {
			escaped = true
		}
		l.pos++
	}
	raw := buf[start:l.pos]
	if !escaped {
		return raw
	}
	from := len(l.scratch)
	for i := 0; i < len(raw); i++ {
		if raw[i] == '#' && i+2 < len(raw) && pdfUnhex(raw[i+1]) >= 0 && pdfUnhex(raw[i+2]) >= 0 {
			l.scratch = append(l.scratch, byte(pdfUnhex(raw[i+1])<<4|pdfUnhex(raw[i+2])))
			i += 2
			continue
		}
		l.scratch = append(l.scratch, raw[i])
	}
	return l.scratch[from:len(l.scratch):len(l.scratch)]
}

func pdfUnhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// hex reads a hexadecimal string after its '<'.
func (l *pdfLexer) hex() []byte {
	buf := l.buf
	l.pos++
	from := len(l.scratch)
	hi := -1
	for l.pos < len(buf) {
		c := buf[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		d := pdfUnhex(c)
		if d < 0 {
			continue
		}
		if hi < 0 {
			hi = d
			continue
		}
		l.scratch = append(l.scratch, byte(hi<<4|d))
		hi = -1
	}
	if hi >= 0 {
		l.scratch = append(l.scratch, byte(hi<<4))
	}
	return l.scratch[from:len(l.scratch):len(l.scratch)]
}

// literal reads a literal string starting at its '('. Strings without
// escapes are returned as a slice of the input.
func (l *pdfLexer) literal() []byte {
	buf := l.buf
	l.pos++
	start := l.pos
	depth := 1
	for i := l.pos; i < len(buf); i++ {
		switch buf[i] {
		case '\\':
			return l.literalEscaped(start)
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.pos = i + 1
				return buf[start:i:i]
			}
		}
	}
	l.pos = len(buf)
	return buf[start:]
}

// literalEscaped decodes a literal string with escapes from start (just
// after the opening parenthesis).
func (l *pdfLexer) literalEscaped(start int) []byte {
	buf := l.buf
	from := len(l.scratch)
	depth := 1
	i := start
loop:
	for i < len(buf) {
		c := buf[i]
		i++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				break loop
			}
		case '\\':
			if i >= len(buf) {
				break loop
			}
			e := buf[i]
			i++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if i < len(buf) && buf[i] == '\n' {
					i++
				}
				continue
			case '\n':
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && i < len(buf) && buf[i] >= '0' && buf[i] <= '7'; k++ {
						v = v*8 + int(buf[i]-'0')
						i++
					}
					c = byte(v)
				} else {
					c = e
				}
			}
		}
		l.scratch = append(l.scratch, c)
	}
	l.pos = i
	return l.scratch[from:len(l.scratch):len(l.scratch)]
}

// skipInlineImage skips an inline image's dictionary (after BI) and its
// binary data (after ID) up to the EI operator.
func (l *pdfLexer) skipInlineImage() {
	for {
		_, kw, more := l.token(0)
		if !more {
			return
		}
		if string(kw) == "ID" {
			break
		}
	}
	buf := l.buf
	if l.pos < len(buf) && pdfIsWhite(buf[l.pos]) {
		l.pos++
	}
	for i := l.pos; ; {
		j := bytes.Index(buf[i:], []byte("EI"))
		if j < 0 {
			l.pos = len(buf)
			return
		}
		k := i + j
		if (k == 0 || pdfIsWhite(buf[k-1])) && (k+2 == len(buf) || pdfIsWhite(buf[k+2]) || pdfIsDelim(buf[k+2])) {
			l.pos = k + 2
			return
		}
		i = k + 2
	}
}

// pdfParseNumber parses a PDF number ("12", "-3.5", ".5", "+4."); isNum is
// false for anything else.
func pdfParseNumber(b []byte) (n float64, isNum bool) {
	if len(b) == 0 {
		return 0, false
	}
	i := 0
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
		// tolerate doubled signs such as "--5", seen in broken producers
		for i < len(b) && (b[i] == '-' || b[i] == '+') {
			i++
		}
	}
	digits := 0
	var v float64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + float64(b[i]-'0')
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		scale := 0.1
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			v += float64(b[i]-'0') * scale
			scale /= 10
			digits++
		}
	}
	if digits == 0 || i != len(b) {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
