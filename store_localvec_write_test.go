package engine

import (
	"bytes"
	"errors"
	"testing"
)

// localvecFailWriter accepts n bytes, then fails every write.
type localvecFailWriter struct {
	bytes.Buffer
	n int
}

var errLocalvecTestWrite = errors.New("disk full")

func (w *localvecFailWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.n {
		return 0, errLocalvecTestWrite
	}
	return w.Buffer.Write(p)
}

func TestLocalvecAsyncWriter(t *testing.T) {
	// Everything arrives, in order, across many buffer hand-overs.
	var want bytes.Buffer
	var got bytes.Buffer
	w := newLocalvecAsyncWriter(&got)
	for i := range 1_000_000 {
		s := []byte{byte('a' + i%26), byte('0' + i%10), ','}
		want.Write(s)
		w.buf = append(w.buf, s...)
		w.flushIfFull()
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("wrote %d bytes, want %d (or different bytes)", got.Len(), want.Len())
	}
	if err := w.close(); err != nil {
		t.Errorf("second close: %v", err)
	}

	// A failed write is reported by close (and again by a second close),
	// and the writer keeps accepting buffers without writing them.
	fw := &localvecFailWriter{n: localvecWriteChunk + 10}
	w = newLocalvecAsyncWriter(fw)
	for range 5 {
		w.buf = append(w.buf, make([]byte, localvecWriteChunk)...)
		w.flushIfFull()
	}
	if err := w.close(); !errors.Is(err, errLocalvecTestWrite) {
		t.Fatalf("close after a failed write: %v", err)
	}
	if err := w.close(); !errors.Is(err, errLocalvecTestWrite) {
		t.Errorf("second close: %v", err)
	}
	if fw.Len() != localvecWriteChunk {
		t.Errorf("%d bytes written before the failure, want %d", fw.Len(), localvecWriteChunk)
	}
}
