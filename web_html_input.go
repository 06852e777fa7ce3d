package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Bounds on the input of one HTMLToStructuredText call, so that its memory
// is bounded by them rather than by the input: the tokenizer buffers one
// token whole, and the builder one paragraph.
const (
	// htmlMaxInputBytes is the most HTML read, as much as a text file may
	// hold; one byte more fails with ErrDocumentTooLarge.
	htmlMaxInputBytes = maxTextFileBytes
	// htmlMaxToken bounds one token: a text node, a tag with its
	// attributes, a comment or a script; the tokenizer's buffer grows by
	// doubling to hold it. Real pages stay far below (an embedded image of
	// a notebook export is a few MiB).
	htmlMaxToken = 16 << 20
)

// htmlLimitReader reads at most left bytes of r; past them it fails with
// an error wrapping ErrDocumentTooLarge (after checking with one byte
// that r really has more).
type htmlLimitReader struct {
	r    io.Reader
	left int64
}

func (l *htmlLimitReader) Read(b []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		if n, err := l.r.Read(probe[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w: more than %d bytes of HTML", ErrDocumentTooLarge, htmlMaxInputBytes)
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	return n, err
}

// htmlDecodeReader returns r read as UTF-8, streaming, with the encoding
// chosen as webDecode chooses it for a whole body: a byte-order mark
// decides; else the bytes are passed through while they are ASCII, and at
// the first other byte the next 64 KiB decide: valid UTF-8 is read as UTF-8
// (invalid sequences later on become U+FFFD), anything else in the
// encoding the page's <meta> declares in its first 1,024 bytes
// (windows-1252 when it declares none).
// size, when > 0, is the input's length if known: a smaller input gets a
// buffer of its size.
func htmlDecodeReader(r io.Reader, size int) io.Reader {
	bufSize := 64 << 10
	if size > 0 {
		bufSize = min(bufSize, max(size+1, 1024))
	}
	br := bufio.NewReaderSize(r, bufSize)
	head, _ := br.Peek(1024) // a read error shows on the next Read
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		br.Discard(3)
		return transform.NewReader(br, unicode.UTF8.NewDecoder())
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		enc, _, _ := charset.DetermineEncoding(head, "")
		return transform.NewReader(br, enc.NewDecoder())
	}
	enc, name, _ := charset.DetermineEncoding(head, "")
	if name == "utf-8" {
		enc = unicode.UTF8
	}
	return &htmlSniffReader{br: br, enc: enc}
}

// htmlSniffReader passes ASCII through until the first other byte, where
// it decides the encoding (see htmlDecodeReader).
type htmlSniffReader struct {
	br  *bufio.Reader
	enc encoding.Encoding // declared (or default) encoding
	dec io.Reader         // the decided decoder, nil before
}

func (s *htmlSniffReader) Read(p []byte) (int, error) {
	if s.dec != nil {
		return s.dec.Read(p)
	}
	if s.br.Buffered() == 0 {
		if _, err := s.br.Peek(1); err != nil {
			return 0, err
		}
	}
	buf, _ := s.br.Peek(s.br.Buffered())
	i := 0
	for i < len(buf) && buf[i] < utf8.RuneSelf {
		i++
	}
	if i > 0 {
		n := copy(p, buf[:i])
		s.br.Discard(n)
		return n, nil
	}
	win, err := s.br.Peek(s.br.Size())
	if err != nil && !errors.Is(err, bufio.ErrBufferFull) && err != io.EOF {
		return 0, err
	}
	if err != io.EOF {
		win = htmlTrimPartialRune(win)
	}
	if utf8.Valid(win) {
		s.dec = transform.NewReader(s.br, unicode.UTF8.NewDecoder())
	} else {
		s.dec = transform.NewReader(s.br, s.enc.NewDecoder())
	}
	return s.dec.Read(p)
}

// htmlTrimPartialRune returns b without a UTF-8 sequence cut off at its end.
func htmlTrimPartialRune(b []byte) []byte {
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			return b
		}
	}
	return b
}
