package main

import (
	"fmt"
	"sync"
	"time"
)

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
