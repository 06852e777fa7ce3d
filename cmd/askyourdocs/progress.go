package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress reports an index run on stderr: a bar redrawn in place that
// fits the terminal's width when stderr is a terminal, one plain line per
// source otherwise. Problems are always printed as lines of their own.
// During a crawl it first counts the pages fetched, then shows the bar
// over the pages being indexed.
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
	// unit and units name what is counted ("file"/"files", "page"/"pages").
	unit, units string
	// fetching is set while a crawl fetches pages (fetched so far, at most
	// maxPages).
	fetching          bool
	fetched, maxPages int
	// width returns the terminal's width (a test sets it).
	width func() int
}

// newProgress returns a reporter for total sources; enabled false prints
// only problems (for --json and --quiet runs).
func newProgress(w io.Writer, total int, enabled bool) *progress {
	return &progress{w: w, tty: isTerminal(w), enabled: enabled, total: total, start: time.Now(),
		unit: "file", units: "files", width: func() int { return terminalWidth(w) }}
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
	fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", p.finished, max(p.total, p.finished), printable(name), printable(note))
}

func (p *progress) fail(name, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	p.line(fmt.Sprintf("[%d/%d] %s: FAILED: %s", p.finished, max(p.total, p.finished), printable(name), printable(reason)))
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

// crawlStarted switches to counting fetched pages (at most maxPages).
func (p *progress) crawlStarted(maxPages int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fetching, p.fetched, p.maxPages = true, 0, maxPages
}

// crawlMessage takes RunCrawl's progress messages: "page i/N: URL" while
// fetching, "indexing page i/N: URL" once the pages are indexed.
func (p *progress) crawlMessage(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var i, n int
	switch {
	case strings.HasPrefix(msg, "indexing page "):
		if _, err := fmt.Sscanf(msg, "indexing page %d/%d", &i, &n); err == nil && p.fetching {
			// Fetching is over: the bar counts the pages being indexed.
			p.fetching = false
			p.total = p.finished + n
		}
		if strings.HasSuffix(msg, ", skipped") {
			p.finished++ // a page with nothing to index counts as done
		}
	case strings.HasPrefix(msg, "page "):
		if _, err := fmt.Sscanf(msg, "page %d/%d", &i, &n); err == nil {
			p.fetched = i
			if _, u, ok := strings.Cut(msg, ": "); ok {
				p.current = u
			}
			if p.tty && p.enabled {
				p.draw(false)
			}
		}
	}
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

// draw redraws the bar, at most 10 times a second unless forced. The line
// never exceeds the terminal's width (a longer one would wrap and leave a
// trail of bars): the name is shortened first, then left out.
func (p *progress) draw(force bool) {
	now := time.Now()
	if !force && now.Sub(p.lastDraw) < 100*time.Millisecond {
		return
	}
	p.lastDraw = now
	width := p.width() - 1 // the cursor's column
	var head string
	if p.fetching {
		head = fmt.Sprintf("fetching: %d %s (at most %d)", p.fetched, plural(p.fetched, p.unit, p.units), p.maxPages)
	} else {
		total := max(p.total, p.finished, 1)
		barWidth := min(24, max(width/6, 8))
		filled := barWidth * p.finished / total
		bar := strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled)
		eta := "--:--"
		if p.finished > 0 {
			left := time.Duration(float64(now.Sub(p.start)) / float64(p.finished) * float64(total-p.finished))
			eta = fmtClock(left)
		}
		head = fmt.Sprintf("[%s] %d/%d %s  %s  ETA %s", bar, p.finished, total, p.units, count(p.chunks, "chunk", "chunks"), eta)
	}
	head = fitWidth(head, max(width, 0))
	line := head
	if room := width - textWidth(head) - 2; room >= 12 && p.current != "" {
		line += "  " + shortenMiddle(printable(p.current), room)
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// shortenMiddle fits s into n terminal columns (a Chinese or Japanese
// character takes two, textWidth), keeping its start and its end (the
// file name) around an ellipsis.
func shortenMiddle(s string, n int) string {
	if textWidth(s) <= n {
		return s
	}
	r := []rune(s)
	tail := (n - 1) * 2 / 3
	head := n - 1 - tail
	i, w := 0, 0 // the head: as many runes as fit in head columns
	for i < len(r) && w+runeWidth(r[i]) <= head {
		w += runeWidth(r[i])
		i++
	}
	j, w := len(r), 0 // the tail, from the end
	for j > i && w+runeWidth(r[j-1]) <= tail {
		w += runeWidth(r[j-1])
		j--
	}
	return string(r[:i]) + "…" + string(r[j:])
}

// fitWidth cuts s to at most n terminal columns.
func fitWidth(s string, n int) string {
	w := 0
	for i, c := range s {
		if w += runeWidth(c); w > n {
			return s[:i]
		}
	}
	return s
}

func fmtClock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
