package engine

import (
	"regexp"
	"sync"
	"testing"
)

func TestNewRandomHexIDFormat(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]*$`)
	for _, tc := range []struct{ nBytes, wantLen int }{
		{16, 32}, {8, 16}, {4, 8}, {1, 2}, {32, 64},
		{0, randomHexIDLen}, {-3, randomHexIDLen}, // <= 0: defaultIDBytes, never empty
	} {
		for range 50 {
			id := NewRandomHexID(tc.nBytes)
			if len(id) != tc.wantLen || !re.MatchString(id) {
				t.Fatalf("NewRandomHexID(%d) = %q, want %d lower-case hex characters", tc.nBytes, id, tc.wantLen)
			}
		}
	}
}

func TestNewRandomHexIDUnique(t *testing.T) {
	const goroutines, perGoroutine = 8, 5000
	var (
		mu   sync.Mutex
		seen = make(map[string]bool, goroutines*perGoroutine)
		wg   sync.WaitGroup
	)
	for range goroutines {
		wg.Go(func() {
			ids := make([]string, perGoroutine)
			for i := range ids {
				ids[i] = NewRandomHexID(16)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if seen[id] {
					t.Errorf("duplicate ID %q", id)
				}
				seen[id] = true
			}
		})
	}
	wg.Wait()
	if len(seen) != goroutines*perGoroutine {
		t.Fatalf("got %d distinct IDs, want %d", len(seen), goroutines*perGoroutine)
	}
	// Every hex digit appears at every position eventually: a crude check
	// that the IDs are not, say, a counter padded with zeros.
	for pos := range randomHexIDLen {
		digits := make(map[byte]bool)
		for id := range seen {
			digits[id[pos]] = true
		}
		if len(digits) != 16 {
			t.Errorf("position %d uses only %d distinct hex digits over %d IDs", pos, len(digits), len(seen))
		}
	}
}
