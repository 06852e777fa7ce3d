package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskCitesTheQuotedSection: a FAQ entry too small for a chunk of its
// own is merged into the entry before it; asked its question, the answer
// quotes it and its citation names its section, not the entry the chunk
// starts with (in the printed sources, --json and the link's text
// fragment).
func TestAskCitesTheQuotedSection(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "faq")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Grease the winch every spring with marine grease and check its cable for broken strands before the season. ", 6)
	page := "<html><body><div role=\"main\"><h1>FAQ: Boats and moorings</h1>" +
		"<h2>How do I service the winch?</h2><p>" + long + "</p>" +
		"<h2>Can I store a kayak over winter?</h2><p>Yes. See the winter storage rules.</p></div></body></html>"
	if err := os.WriteFile(filepath.Join(docs, "boats.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, docs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	r := runCLI(t, work, nil, "ask", "--data", data, "--json", "Can I store a kayak over winter?")
	var ans answerResult
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if !strings.Contains(ans.Answer, "Yes. See the winter storage rules.") || len(ans.Citations) == 0 {
		t.Fatalf("answer %q, citations %+v", ans.Answer, ans.Citations)
	}
	c := ans.Citations[0]
	if want := "FAQ: Boats and moorings > Can I store a kayak over winter?"; c.Breadcrumb != want {
		t.Errorf("citation breadcrumb %q, want %q", c.Breadcrumb, want)
	}
	if !strings.Contains(c.Link, "kayak") {
		t.Errorf("citation link %q does not point at the quoted section", c.Link)
	}
	r = runCLI(t, work, nil, "ask", "--data", data, "Can I store a kayak over winter?")
	if !strings.Contains(r.stdout, "(FAQ: Boats and moorings > Can I store a kayak over winter?)") {
		t.Errorf("printed sources do not name the quoted section:\n%s", r.stdout)
	}
}
