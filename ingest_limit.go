package engine

import (
	"fmt"
	"unicode"
)

// defaultMaxChunks is the number of chunks IndexSource accepts from one
// source when the source does not set its own limit: about 24 MB of text
// at the CLI's chunk size of 1,200 characters, far more than a long book.
const defaultMaxChunks = 20_000

// ChunkLimiter is implemented by an IngestSource that sets its own limit on
// the chunks IndexSource takes from it. MaxChunks returns the limit: 0
// means the default of 20,000, negative no limit.
type ChunkLimiter interface {
	MaxChunks() int
}

// sourceChunkLimit returns the chunk limit of src (-1: none).
func sourceChunkLimit(src IngestSource) int {
	limit := defaultMaxChunks
	if l, ok := src.(ChunkLimiter); ok {
		switch n := l.MaxChunks(); {
		case n < 0:
			return -1
		case n > 0:
			limit = n
		}
	}
	return limit
}

// minChunks returns a lower bound of the chunks BuildChunks makes of
// paras at maxSize: a chunk holds at most maxSize runes, and every rune
// that is not whitespace (or dropped as zero-width) lands in one. It costs
// one pass over the text and no allocation, so an oversized source is
// refused before chunking it.
func minChunks(paras []Paragraph, maxSize int) int {
	if maxSize <= 0 {
		return 0
	}
	n := 0
	for _, p := range paras {
		for _, r := range p.Text {
			if !unicode.IsSpace(r) && !zeroWidthNorm(r) {
				n++
			}
		}
	}
	return (n + maxSize - 1) / maxSize
}

// tooManyChunksError is the error for a source over its chunk limit.
func tooManyChunksError(chunks, limit, chunkSize int, atLeast bool) error {
	some := ""
	if atLeast {
		some = "at least "
	}
	return fmt.Errorf("%w: %s%d chunks of up to %d characters, more than the limit of %d per document",
		ErrTooManyChunks, some, chunks, chunkSize, limit)
}
