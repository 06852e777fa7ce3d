package engine

import "io"

// localvecWriteChunk is the size from which localvecAsyncWriter hands a
// buffer to its writing goroutine; buffers have room for one more entry of
// up to 64 KB beyond it before append must grow them.
const localvecWriteChunk = 1 << 20

// localvecWriteBufCap is the capacity of localvecAsyncWriter's buffers.
const localvecWriteBufCap = localvecWriteChunk + 1<<16

// localvecAsyncWriter writes buffers to w on a goroutine of its own, so
// that encoding the next buffer overlaps the system call writing the last
// one (the database file is encoded on one CPU while the kernel copies the
// previous megabyte on another). Two buffers circulate: the caller fills
// buf (append to it, then call flushIfFull), the goroutine writes the
// other. close must be called once on every path; it waits for the
// goroutine and returns the first write error. Not safe for concurrent use.
type localvecAsyncWriter struct {
	buf  []byte
	todo chan []byte // filled buffers, to be written
	free chan []byte // written buffers, to be filled again
	errc chan error  // the goroutine's first write error, sent when it ends
	err  error       // a write error already received (sticky)
}

// newLocalvecAsyncWriter starts the goroutine writing to w.
func newLocalvecAsyncWriter(w io.Writer) *localvecAsyncWriter {
	a := &localvecAsyncWriter{
		buf:  make([]byte, 0, localvecWriteBufCap),
		todo: make(chan []byte, 1),
		free: make(chan []byte, 2), // room for both: close takes none back
		errc: make(chan error, 1),
	}
	a.free <- make([]byte, 0, localvecWriteBufCap)
	go func() {
		var err error
		for b := range a.todo {
			if err == nil {
				_, err = w.Write(b)
			}
			a.free <- b[:0]
		}
		a.errc <- err
	}()
	return a
}

// flushIfFull hands buf to the goroutine once it holds a chunk, and
// continues in the other buffer once that one is written.
func (a *localvecAsyncWriter) flushIfFull() {
	if len(a.buf) < localvecWriteChunk {
		return
	}
	a.todo <- a.buf
	a.buf = <-a.free
}

// close writes what is left in buf, stops the goroutine and returns the
// first write error; later calls return the same error.
func (a *localvecAsyncWriter) close() error {
	if a.todo == nil {
		return a.err
	}
	if len(a.buf) > 0 {
		a.todo <- a.buf
	}
	close(a.todo)
	a.err = <-a.errc
	a.todo, a.buf = nil, nil
	return a.err
}
