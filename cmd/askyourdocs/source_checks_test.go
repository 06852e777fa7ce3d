package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSourcesLastCheckedChanged: `sources --json` gives each source when
// an index run last read it and last found it changed: a second run over
// an unchanged folder moves lastChecked only, an edit moves lastChanged,
// and the web app's /index page shows the dates.
func TestSourcesLastCheckedChanged(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testSourcesChecks(t, "") })
	t.Run("pgvector", func(t *testing.T) { testSourcesChecks(t, cliTestFreshDB(t, cliTestDSN(t))) })
}

// testSourcesChecks is TestSourcesLastCheckedChanged on the embedded
// store, or on PostgreSQL when dsn is set.
func testSourcesChecks(t *testing.T, dsn string) {
	work := t.TempDir()
	docs, data := filepath.Join(work, "docs"), filepath.Join(work, "index")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	var pg []string
	if dsn != "" {
		pg = []string{"--pg", dsn}
	}
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(docs, "tides.md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() sourceEntry {
		t.Helper()
		r := runCLI(t, work, nil, append(pg, "sources", "--data", data, "--json")...)
		var out sourcesOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Results) != 1 {
			t.Fatalf("sources --json: %v\n%s", err, r)
		}
		e := out.Results[0]
		if e.LastChecked == nil || e.LastChanged == nil {
			t.Fatalf("no dates: %+v\n%s", e, r.stdout)
		}
		return e
	}
	index := func() {
		t.Helper()
		if r := runCLI(t, work, nil, append(pg, "index", "--data", data, docs)...); r.code != 0 {
			t.Fatalf("index: %s", r)
		}
	}
	write("# Tides\n\nHigh tide is at noon.\n")
	index()
	first := read()
	if !first.LastChecked.Equal(*first.LastChanged) {
		t.Errorf("first index: checked %v, changed %v, want equal", first.LastChecked, first.LastChanged)
	}
	index()
	again := read()
	if !again.LastChanged.Equal(*first.LastChanged) || !again.LastChecked.After(*first.LastChecked) {
		t.Errorf("unchanged re-index: %+v after %+v, want only lastChecked moved", again, first)
	}
	write("# Tides\n\nHigh tide is at one o'clock today.\n")
	index()
	if edited := read(); !edited.LastChanged.After(*first.LastChanged) {
		t.Errorf("after an edit: lastChanged %v, was %v", edited.LastChanged, first.LastChanged)
	}

	ts := newTestServeIn(t, data, dsn, storeName, nil, "", 0)
	resp, body := ts.request(t, ts.Client(), "GET", "/api/sources", "", nil, nil)
	var views []sourceView
	if err := json.Unmarshal([]byte(body), &views); err != nil || resp.StatusCode != 200 || len(views) != 1 || views[0].LastChanged == nil {
		t.Fatalf("/api/sources: %d %s", resp.StatusCode, body)
	}
	_, page := ts.request(t, ts.Client(), "GET", "/index", "", nil, nil)
	if want := views[0].LastChecked.Format("2006-01-02 15:04"); !strings.Contains(page, `<time datetime="`+views[0].LastChanged.Format(time.RFC3339)) ||
		!strings.Contains(page, `title="checked `+want) {
		t.Errorf("the index page does not show when the source changed (%s)", want)
	}
}
