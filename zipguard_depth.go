package engine

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// xmlMaxDepth bounds the element nesting of an XML part, as
// encoding/xml's Unmarshal does (its Token does not): the decoder keeps a
// stack entry per open element, so 25 million nested elements, 128 MiB
// inflated from a 130 KB part, would take gigabytes. Real documents nest
// a few dozen deep.
const xmlMaxDepth = 10000

// xmlMaxToken bounds one token of an XML part: a text node, a tag with its
// attributes, a comment, a CDATA section. The decoder materialises a
// token whole, growing its buffer by doubling, so a 127 MiB <w:t> run
// inflated from 130 KB took 550 MB. Real runs, cells and strings are a
// few KiB.
const xmlMaxToken = 16 << 20

// xmlMaxText bounds the text one paragraph, cell or string of an XML part
// gathers from its runs, each within xmlMaxToken: a builder grown by
// doubling to hold 60 MiB of one .docx paragraph took index to 330 MB.
const xmlMaxText = 16 << 20

// xmlWriteText appends t to sb; when sb would pass xmlMaxText it appends
// nothing and returns an error wrapping ErrDocumentTooLarge.
func xmlWriteText(sb *strings.Builder, t []byte) error {
	if sb.Len()+len(t) > xmlMaxText {
		return xmlTextError()
	}
	sb.Write(t)
	return nil
}

func xmlTextError() error {
	return fmt.Errorf("%w: a paragraph or cell of more than %d bytes of text", ErrDocumentTooLarge, xmlMaxText)
}

// xmlDepthReader passes an XML part through, counting the nesting of its
// elements from the markup (start, end and empty-element tags; comments,
// CDATA sections, processing instructions, declarations and quoted
// attribute values are skipped), and fails with an error wrapping invalid
// once it passes max. The count is an upper bound of the decoder's: an
// element left open (invalid XML) counts as open. It also counts the bytes
// of the current token (from a '<' to its construct's end, or of the text
// between two such): past maxToken (when > 0) it fails with an error
// wrapping ErrDocumentTooLarge, before the decoder has buffered the token.
type xmlDepthReader struct {
	r        io.Reader
	max      int
	maxToken int64
	part     string
	invalid  error
	token    int64 // bytes of the current token so far

	depth  int
	state  uint8
	quote  byte    // the open attribute value's quote, 0 outside one
	last   [2]byte // the two bytes before the current one in this state
	bang   int     // bytes read of a "<!" construct while telling which it is
	subset bool    // inside a DOCTYPE's internal subset ([...])
}

const (
	xmlScanText    = iota
	xmlScanLT      // after '<'
	xmlScanStart   // in a start tag
	xmlScanEnd     // in an end tag
	xmlScanPI      // in <?...?>
	xmlScanBang    // after "<!"
	xmlScanComment // in <!--...-->
	xmlScanCDATA   // in <![CDATA[...]]>
	xmlScanDecl    // in <!DOCTYPE ...> and the like
)

func (x *xmlDepthReader) Read(b []byte) (int, error) {
	n, err := x.r.Read(b)
	for i := 0; i < n; i++ {
		if x.state == xmlScanText {
			// Text is most of a part: jump to the next tag (step looks
			// back at no byte of it).
			k := bytes.IndexByte(b[i:n], '<')
			if k < 0 {
				x.token += int64(n - i)
				break
			}
			x.token += int64(k)
			i += k
		}
		if x.maxToken > 0 && x.token > x.maxToken {
			return 0, x.tokenError()
		}
		if x.step(b[i]) {
			return 0, fmt.Errorf("%w: part %s: elements nested more than %d deep", x.invalid, x.part, x.max)
		}
	}
	if x.maxToken > 0 && x.token > x.maxToken {
		return 0, x.tokenError()
	}
	return n, err
}

func (x *xmlDepthReader) tokenError() error {
	return fmt.Errorf("%w: part %s: a text node or tag of more than %d bytes", ErrDocumentTooLarge, x.part, x.maxToken)
}

// step advances the scanner by one byte; true means the depth passed max.
func (x *xmlDepthReader) step(c byte) bool {
	prev := x.last
	x.last = [2]byte{prev[1], c}
	x.token++
	switch x.state {
	case xmlScanText:
		if c == '<' {
			x.state, x.token = xmlScanLT, 1
		}
	case xmlScanLT:
		switch c {
		case '/':
			x.state = xmlScanEnd
			x.depth = max(x.depth-1, 0)
		case '?':
			x.state = xmlScanPI
		case '!':
			x.state, x.bang = xmlScanBang, 0
		default:
			x.state, x.quote = xmlScanStart, 0
			x.depth++
			return x.depth > x.max
		}
	case xmlScanStart:
		switch {
		case x.quote != 0:
			if c == x.quote {
				x.quote = 0
			}
		case c == '"' || c == '\'':
			x.quote = c
		case c == '>':
			if prev[1] == '/' {
				x.depth = max(x.depth-1, 0)
			}
			x.state, x.token = xmlScanText, 0
		}
	case xmlScanEnd:
		if c == '>' {
			x.state, x.token = xmlScanText, 0
		}
	case xmlScanPI:
		if c == '>' && prev[1] == '?' {
			x.state, x.token = xmlScanText, 0
		}
	case xmlScanBang:
		x.bang++
		switch {
		case x.bang == 1 && c == '-':
		case x.bang == 2 && c == '-' && prev[1] == '-':
			x.state, x.last = xmlScanComment, [2]byte{}
		case x.bang == 1 && c == '[':
			x.state, x.last = xmlScanCDATA, [2]byte{}
		case c == '>':
			x.state, x.token = xmlScanText, 0
		default:
			x.state, x.subset = xmlScanDecl, false
		}
	case xmlScanComment:
		if c == '>' && prev == [2]byte{'-', '-'} {
			x.state, x.token = xmlScanText, 0
		}
	case xmlScanCDATA:
		if c == '>' && prev == [2]byte{']', ']'} {
			x.state, x.token = xmlScanText, 0
		}
	case xmlScanDecl:
		// A DOCTYPE's internal subset holds '>' inside brackets; quotes are
		// rare enough there to ignore.
		switch c {
		case '[':
			x.subset = true
		case ']':
			x.subset = false
		case '>':
			if !x.subset {
				x.state, x.token = xmlScanText, 0
			}
		}
	}
	return false
}
