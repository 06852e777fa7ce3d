package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// /healthz and /readyz answer without credentials; /metrics needs them
// when a password is set and shows asks, latency, jobs and index size.
func TestServeHealthReadyMetrics(t *testing.T) {
	const password = "pw"
	ts := newTestServe(t, nil, password, 0)
	basic := map[string]string{}
	{
		r, _ := http.NewRequest("GET", "/", nil)
		r.SetBasicAuth("admin", password)
		basic["Authorization"] = r.Header.Get("Authorization")
	}
	for path, want := range map[string]string{"/healthz": `"ok"`, "/readyz": `"ready"`} {
		if resp, out := ts.request(t, nil, "GET", path, "", nil, nil); resp.StatusCode != 200 || !strings.Contains(out, want) {
			t.Errorf("GET %s = %s %s", path, resp.Status, out)
		}
	}
	if resp, _ := ts.request(t, nil, "GET", "/metrics", "", nil, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without credentials: %s", resp.Status)
	}
	ts.uploadAndWait(t, basic, map[string][]byte{"handbook.pdf": readFixture(t, "handbook.pdf")})
	ts.askJSON(t, askInput{Question: "What is the minimum age for paddling a single kayak?"})
	resp, out := ts.request(t, nil, "GET", "/metrics", "", nil, basic)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s %s", resp.Status, out)
	}
	for _, want := range []string{
		`askyourdocs_asks_total{outcome="answered"} 1`,
		`askyourdocs_asks_total{outcome="rejected"} 0`,
		`askyourdocs_ask_duration_seconds_count 1`,
		`askyourdocs_jobs{state="done"} 1`,
		`askyourdocs_jobs{state="running"} 0`,
		`askyourdocs_feedback_entries 1`,
		"askyourdocs_index_chunks ",
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(out, "askyourdocs_index_chunks 0\n") {
		t.Error("/metrics reports an empty index after an upload")
	}

	// A closed database makes /readyz fail, /healthz not.
	ts.s.b.store.Close()
	if resp, out := ts.request(t, nil, "GET", "/readyz", "", nil, nil); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(out, "not ready") {
		t.Errorf("/readyz with the database closed = %s %s", resp.Status, out)
	}
	if resp, _ := ts.request(t, nil, "GET", "/healthz", "", nil, nil); resp.StatusCode != 200 {
		t.Errorf("/healthz with the database closed = %s", resp.Status)
	}
}

// With every ask slot taken, an ask gets 503 and Retry-After at once; a
// page view without a question still works, and the ask goes through
// once a slot is free.
func TestServeAskLimit(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	ts.uploadAndWait(t, nil, map[string][]byte{"handbook.pdf": readFixture(t, "handbook.pdf")})
	for range cap(ts.s.askSlots) {
		ts.s.askSlots <- struct{}{}
	}
	body, _ := json.Marshal(askInput{Question: "What is the minimum age for paddling a single kayak?"})
	resp, out := ts.request(t, nil, "POST", "/api/ask", "application/json", body, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(out, "try again") {
		t.Fatalf("ask over the limit = %s (Retry-After %q) %s", resp.Status, resp.Header.Get("Retry-After"), out)
	}
	if resp, _ := ts.request(t, nil, "GET", "/ask?q=kayak", "", nil, map[string]string{"Accept": "text/html"}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ask page with a question over the limit = %s", resp.Status)
	}
	if resp, _ := ts.request(t, nil, "GET", "/ask", "", nil, nil); resp.StatusCode != 200 {
		t.Errorf("ask page without a question over the limit = %s", resp.Status)
	}
	<-ts.s.askSlots
	if resp, out := ts.request(t, nil, "POST", "/api/ask", "application/json", body, nil); resp.StatusCode != 200 {
		t.Fatalf("ask with a free slot = %s %s", resp.Status, out)
	}
	// An oversized body is refused before a slot is wanted.
	big := []byte(`{"question": "` + strings.Repeat("x", 1<<20) + `"}`)
	if resp, _ := ts.request(t, nil, "POST", "/api/ask", "application/json", big, nil); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized ask = %s", resp.Status)
	}
}

// An old feedback.json in the data directory is imported into the
// database once, ratings included, and renamed; a second start imports
// nothing.
func TestServeImportsOldFeedbackFile(t *testing.T) {
	data := t.TempDir()
	old := askyourdocs.NewFeedbackStore(filepath.Join(data, legacyFeedbackFile), feedbackID, setFeedbackRating)
	for _, id := range []string{"old1", "old2", "old3"} {
		if err := old.Append(feedbackEntry{ID: id, Question: "q " + id, Answer: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.Rate("old2", ratingDown); err != nil {
		t.Fatal(err)
	}
	ts := newTestServeIn(t, data, "", storeName, nil, "", 0)
	logged := readFeedbackLog(t, ts)
	if len(logged) != 3 || logged["old2"].Rating != ratingDown || logged["old3"].Question != "q old3" {
		t.Fatalf("imported log = %+v", logged)
	}
	if _, err := os.Stat(filepath.Join(data, legacyFeedbackFile)); !os.IsNotExist(err) {
		t.Errorf("feedback.json still there after the import: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, legacyFeedbackFile+importedSuffix)); err != nil {
		t.Errorf("the imported file was not kept: %v", err)
	}
	ts.uploadAndWait(t, nil, map[string][]byte{"handbook.pdf": readFixture(t, "handbook.pdf")})
	ts.askJSON(t, askInput{Question: "What is the minimum age for paddling a single kayak?"})
	ts.Close()
	ts.s.Close()
	ts.s.b.Close()
	again := newTestServeIn(t, data, "", storeName, nil, "", 0)
	if n := len(readFeedbackLog(t, again)); n != 4 {
		t.Fatalf("after a restart the log has %d entries, want 4", n)
	}
}
