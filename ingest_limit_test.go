package engine

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexSourceChunkLimit checks the per-document chunk limit: a file
// over it is refused naming the limit, before anything is embedded or
// written, both by the early estimate and by the exact count; a raised or
// removed limit indexes it.
func TestIndexSourceChunkLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.txt")
	// 2,000 words of 9 characters: about 20,000 characters, 40+ chunks of 500.
	var b strings.Builder
	for i := range 2000 {
		b.WriteString("word")
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 5))
		b.WriteByte(' ')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		limit   int
		atLeast bool // refused by the estimate, before chunking
	}{{5, true}, {40, false}} {
		m := &ingestMemStore{}
		src := &FileSource{Path: path, ChunkLimit: c.limit}
		_, _, err := IndexSource(ctx, m, src, 500, 50, nil)
		if !errors.Is(err, ErrTooManyChunks) || !strings.Contains(err.Error(), "more than the limit of") {
			t.Fatalf("limit %d: %v, want ErrTooManyChunks naming the limit", c.limit, err)
		}
		if strings.Contains(err.Error(), "at least") != c.atLeast {
			t.Errorf("limit %d: %v (estimate expected: %v)", c.limit, err, c.atLeast)
		}
		if m.calls != 0 || len(m.docs) != 0 {
			t.Errorf("limit %d: the store was written (%d calls)", c.limit, m.calls)
		}
	}
	for _, limit := range []int{100, -1, 0} {
		m := &ingestMemStore{}
		n, _, err := IndexSource(ctx, m, &FileSource{Path: path, ChunkLimit: limit}, 500, 50, nil)
		if err != nil || n < 40 {
			t.Errorf("limit %d: %d chunks, %v", limit, n, err)
		}
	}
}

// TestMinChunksIsALowerBound checks that the early estimate never exceeds
// what BuildChunks makes, on random text with odd whitespace, so a source
// within its limit is never refused by it.
func TestMinChunksIsALowerBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	pieces := []string{"a", "word", "longerword", " ", "  ", "\t", "\u00a0", "\u200b", "ü", "漢字", "\n", "x."}
	for i := range 300 {
		var paras []Paragraph
		for range rng.IntN(20) + 1 {
			var b strings.Builder
			for range rng.IntN(400) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			paras = append(paras, Paragraph{Text: b.String(), Heading: rng.IntN(5) == 0})
		}
		size := 20 + rng.IntN(300)
		if got, want := minChunks(paras, size), len(BuildChunks(paras, size, rng.IntN(size/2+1))); got > want {
			t.Fatalf("case %d: estimate %d > %d chunks at size %d", i, got, want, size)
		}
	}
}

// TestDocxParagraphLimit checks that the .docx reader stops at its
// paragraph limit instead of reading on.
func TestDocxParagraphLimit(t *testing.T) {
	var body strings.Builder
	for range 50 {
		body.WriteString(docxPara("", docxRun("tiny")))
	}
	data := docxBytes(t, body.String())
	lim := docxDefaultLimits
	lim.maxBlocks = 20
	_, err := readDocx(bytes.NewReader(data), int64(len(data)), lim)
	if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "more than 20 paragraphs") {
		t.Fatalf("got %v, want ErrDocumentTooLarge naming 20 paragraphs", err)
	}
	lim.maxBlocks = 50
	if paras, err := readDocx(bytes.NewReader(data), int64(len(data)), lim); err != nil || len(paras) != 50 {
		t.Fatalf("at the limit: %d paragraphs, %v", len(paras), err)
	}
}
