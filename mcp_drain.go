package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainingTransport is newline-delimited JSON-RPC over a reader and a
// writer, like mcp.StdioTransport, except at the end of the input: the
// read side reports EOF only once every request read so far has been
// answered (or cancelled by the client, or ctx ended). A client that
// writes its requests and closes stdin ("echo ... | app --mcp") thus gets
// every answer before the server stops.
type drainingTransport struct {
	r io.Reader
	w io.Writer
}

// Connect implements mcp.Transport.
func (t *drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p := &pendingRequests{ids: map[string]bool{}, ctx: ctx}
	p.cond = sync.NewCond(&p.mu)
	go func() {
		<-ctx.Done()
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	io := &mcp.IOTransport{Reader: &drainReader{r: t.r, p: p}, Writer: &answerWriter{w: t.w, p: p}}
	return io.Connect(ctx)
}

// pendingRequests are the ids of requests read and not yet answered.
type pendingRequests struct {
	mu   sync.Mutex
	cond *sync.Cond
	ids  map[string]bool
	ctx  context.Context
}

func (p *pendingRequests) set(id string, pending bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pending {
		p.ids[id] = true
	} else {
		delete(p.ids, id)
	}
	p.cond.Broadcast()
}

// wait blocks until no request is pending or ctx ends.
func (p *pendingRequests) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ids) > 0 && p.ctx.Err() == nil {
		p.cond.Wait()
	}
}

// rpcMessage is what the tracking needs of a JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// rpcMessages decodes one line: a message or a batch.
func rpcMessages(line []byte) []rpcMessage {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []rpcMessage
		json.Unmarshal(line, &batch)
		return batch
	}
	var m rpcMessage
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []rpcMessage{m}
}

// rpcID is the key of an id: numbers by value, strings quoted.
func rpcID(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	}
	return ""
}

// drainReader notes the requests it passes on and holds back EOF while
// any is unanswered.
type drainReader struct {
	r   io.Reader
	p   *pendingRequests
	buf []byte // an incomplete last line
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	if n > 0 {
		d.buf = append(d.buf, b[:n]...)
		for {
			i := bytes.IndexByte(d.buf, '\n')
			if i < 0 {
				break
			}
			d.note(d.buf[:i])
			d.buf = d.buf[i+1:]
		}
		if len(d.buf) > 1<<20 && bytes.IndexByte(d.buf, '\n') < 0 {
			d.buf = d.buf[:0] // a huge line: the SDK rejects it anyway
		}
	}
	if err == io.EOF {
		d.note(d.buf)
		d.buf = nil
		if n > 0 {
			// Hand over the data first; the next Read waits and ends.
			return n, nil
		}
		d.p.wait()
	}
	return n, err
}

// note records the requests of one line and the client's cancellations.
func (d *drainReader) note(line []byte) {
	for _, m := range rpcMessages(line) {
		switch {
		case m.Method == "notifications/cancelled":
			if id := rpcID(m.Params.RequestID); id != "" {
				d.p.set(id, false)
			}
		case m.Method != "":
			if id := rpcID(m.ID); id != "" {
				d.p.set(id, true)
			}
		}
	}
}

// Close implements io.Closer (stdin is not closed).
func (d *drainReader) Close() error { return nil }

// answerWriter passes the server's messages on and clears the requests
// they answer.
type answerWriter struct {
	w io.Writer
	p *pendingRequests
}

func (a *answerWriter) Write(b []byte) (int, error) {
	n, err := a.w.Write(b)
	for _, m := range rpcMessages(b) {
		if m.Method == "" {
			if id := rpcID(m.ID); id != "" {
				a.p.set(id, false)
			}
		}
	}
	return n, err
}

// Close implements io.Closer (stdout is not closed).
func (a *answerWriter) Close() error { return nil }
