package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// etagSite serves a contents page and n topic pages with strong ETags,
// answering If-None-Match with 304, and counts its answers by status.
type etagSite struct {
	srv    *httptest.Server
	mu     sync.Mutex
	pages  map[string]string
	status map[int]int
}

func newETagSite(t *testing.T, n int) *etagSite {
	s := &etagSite{pages: map[string]string{}, status: map[int]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.setContents(n, -1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range n {
		s.pages[fmt.Sprintf("/manual/t%03d.html", i)] = etagTopic(i, "")
	}
	return s
}

// setContents lists the n topics except skip.
func (s *etagSite) setContents(n, skip int) {
	var b strings.Builder
	for i := range n {
		if i != skip {
			fmt.Fprintf(&b, `<li><a href="/manual/t%03d.html">Topic %d</a></li>`, i, i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages["/manual/"] = `<h1>Contents</h1><ul>` + b.String() + `</ul>`
}

func etagTopic(i int, extra string) string {
	return fmt.Sprintf(`<h1>Topic %d</h1><p>Topic %d explains how the harbour office books berth number %d for visiting boats.</p>%s`, i, i, i, extra)
}

func (s *etagSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, ok := s.pages[r.URL.Path]
	if !ok {
		s.status[http.StatusNotFound]++
		http.NotFound(w, r)
		return
	}
	body = `<!DOCTYPE html><html><head><title>Harbour</title></head><body><main>` + body + `</main></body></html>`
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		s.status[http.StatusNotModified]++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.status[http.StatusOK]++
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(body))
}

// counts returns and clears the answers counted so far.
func (s *etagSite) counts() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(s.status)
	s.status = map[int]int{}
	return out
}

// `index --crawl` keeps what each crawl learnt about its pages in the
// store: a re-crawl of the unchanged site gets 304 for every page and
// embeds nothing, an edited page is read and re-embedded alone, a page
// removed with its link leaves the index, and the index ends as a fresh
// crawl's. On the embedded store and on PostgreSQL.
func TestIndexCrawlRevalidates(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testIndexCrawlRevalidates(t, "") })
	t.Run("pgvector", func(t *testing.T) { testIndexCrawlRevalidates(t, cliTestFreshDB(t, cliTestDSN(t))) })
}

func testIndexCrawlRevalidates(t *testing.T, dsn string) {
	const n = 200
	site := newETagSite(t, n)
	work := t.TempDir()
	data := filepath.Join(work, "index")
	var pg []string
	if dsn != "" {
		pg = []string{"--pg", dsn}
	}
	crawl := func(data string) indexReport {
		t.Helper()
		r := runCLI(t, work, nil, append(pg, "index", "--data", data, "--allow-private", "--crawl", "--delay", "0",
			"--max-pages", "300", "--json", site.srv.URL+"/manual/")...)
		var rep indexReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
			t.Fatalf("crawl: %v\n%s", err, r)
		}
		return rep
	}
	first := crawl(data)
	if first.Sources != n+1 || first.Embedded != int64(first.Chunks) {
		t.Fatalf("first crawl: %d sources, %d chunks, %d embedded", first.Sources, first.Chunks, first.Embedded)
	}
	site.counts()

	rep := crawl(data)
	if got := site.counts(); got[http.StatusNotModified] != n+1 || got[http.StatusOK] != 0 {
		t.Fatalf("unchanged re-crawl: answers %v, want %d 304s only", got, n+1)
	}
	if rep.Embedded != 0 || rep.Unchanged != n+1 || rep.Sources != n+1 || rep.Chunks != first.Chunks {
		t.Fatalf("unchanged re-crawl: %d embedded, %d unchanged, %d sources, %d chunks", rep.Embedded, rep.Unchanged, rep.Sources, rep.Chunks)
	}

	site.mu.Lock()
	site.pages["/manual/t007.html"] = etagTopic(7, "<p>Since May the office also rents out electric outboard motors.</p>")
	site.mu.Unlock()
	rep = crawl(data)
	if got := site.counts(); got[http.StatusOK] != 1 || got[http.StatusNotModified] != n {
		t.Fatalf("re-crawl after one edit: answers %v", got)
	}
	if rep.Embedded != 1 || rep.Unchanged != n {
		t.Fatalf("re-crawl after one edit: %d embedded, %d unchanged", rep.Embedded, rep.Unchanged)
	}
	if r := runCLI(t, work, nil, append(pg, "search", "--data", data, "electric outboard motors")...); !strings.Contains(r.stdout, "t007.html") {
		t.Fatalf("the edit is not searchable:\n%s", r)
	}

	site.setContents(n, 42)
	site.mu.Lock()
	delete(site.pages, "/manual/t042.html")
	site.mu.Unlock()
	rep = crawl(data)
	if len(rep.Removed) != 1 || rep.Removed[0].URL != site.srv.URL+"/manual/t042.html" {
		t.Fatalf("removed = %+v, want t042.html", rep.Removed)
	}

	// Equal to a fresh crawl: the same sources with the same chunks.
	sources := func(data string, pg []string) map[string]int {
		t.Helper()
		r := runCLI(t, work, nil, append(pg, "sources", "--data", data, "--json")...)
		var out sourcesOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("sources: %v\n%s", err, r)
		}
		m := map[string]int{}
		for _, e := range out.Results {
			m[e.URL] = e.Chunks
		}
		return m
	}
	got := sources(data, pg)
	fresh := filepath.Join(work, "fresh")
	pg = nil // the fresh crawl on the embedded store
	crawl(fresh)
	if want := sources(fresh, nil); !maps.Equal(got, want) || len(got) != n {
		t.Fatalf("revalidated index: %d sources, fresh crawl: %d; equal %v", len(got), len(want), maps.Equal(got, want))
	}
}
