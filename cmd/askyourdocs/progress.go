package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports an index run on stderr: a redrawn bar (files, chunks,
// ETA) when stderr is a terminal, one plain line per source otherwise.
// Problems are always printed as lines of their own.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	enabled  bool
	total    int
	finished int
	chunks   int
	start    time.Time
	current  string
	lastDraw time.Time
	drawn    bool
}

// newProgress returns a reporter for total sources; enabled false prints
// only problems (for --json runs).
func newProgress(w io.Writer, total int, enabled bool) *progress {
	return &progress{w: w, tty: isTerminal(w), enabled: enabled, total: total, start: time.Now()}
}

func (p *progress) begin(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = name
	if p.tty && p.enabled {
		p.draw(true)
	}
}

func (p *progress) done(name string, chunks int, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	p.chunks += chunks
	if !p.enabled {
		return
	}
	if p.tty {
		p.draw(false)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.finished, p.total, name, note)
}

func (p *progress) fail(name, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	p.line(fmt.Sprintf("[%d/%d] %s: FAILED: %s", p.finished, p.total, name, reason))
}

func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enabled {
		p.line(msg)
	}
}

// setTotal corrects the number of sources (a crawl ends before --max-pages).
func (p *progress) setTotal(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = n
}

// finish clears the bar.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// line prints a line of its own above the bar.
func (p *progress) line(s string) {
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, s)
	if p.tty && p.enabled {
		p.draw(true)
	}
}

// draw redraws the bar, at most 10 times a second unless forced.
func (p *progress) draw(force bool) {
	now := time.Now()
	if !force && now.Sub(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = now
	const width = 24
	total := max(p.total, p.finished, 1)
	filled := width * p.finished / total
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	eta := "--:--"
	if p.finished > 0 {
		left := time.Duration(float64(now.Sub(p.start)) / float64(p.finished) * float64(total-p.finished))
		eta = fmtClock(left)
	}
	name := p.current
	if r := []rune(name); len(r) > 40 {
		name = "..." + string(r[len(r)-37:])
	}
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d files  %d chunks  ETA %s  %s", bar, p.finished, total, p.chunks, eta, name)
	p.drawn = true
}

func fmtClock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
