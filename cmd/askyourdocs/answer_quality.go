package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// keywordPrefix is how a keyword is matched: words of more than 5 letters
// by their first 5 (inflections), as BestExcerpt does.
func keywordPrefix(k string) string {
	if r := []rune(k); len(r) > 5 {
		return string(r[:5])
	}
	return k
}

// isHeadingLine guesses whether a line of a passage is a heading: short,
// without sentence punctuation at its end (a question, as in an FAQ, is
// a heading), followed by more text. (The engine's ExcerptWithHeading
// uses the same rule.)
func isHeadingLine(l string) bool {
	l = strings.TrimSpace(l)
	if l == "" || utf8.RuneCountInString(l) > 80 || strings.HasPrefix(l, "- ") || strings.Contains(l, "|") {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(".!:;,)\"'…", last)
}

// spinner shows that a command is working on a terminal's stderr.
type spinner struct {
	once sync.Once
	done chan struct{}
	wg   sync.WaitGroup
}

// startSpinner starts a spinner with msg on stderr when it is a terminal
// and --quiet is not set; stop it with stop.
func (a *cliApp) startSpinner(msg string) *spinner {
	s := &spinner{done: make(chan struct{})}
	if !isTerminal(a.stderr) || a.quiet {
		return s
	}
	st := newStyle(a.stderr, a)
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(a.stderr, "\r\033[K%s %s", st.cyan(frames[i%len(frames)]), msg)
			select {
			case <-s.done:
				fmt.Fprint(a.stderr, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop clears the spinner; it may be called more than once.
func (s *spinner) stop() {
	s.once.Do(func() { close(s.done) })
	s.wg.Wait()
}
