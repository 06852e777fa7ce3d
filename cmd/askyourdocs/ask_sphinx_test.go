package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskSphinxBuild: a Sphinx build indexed as a folder holds every page
// twice (the HTML and its _sources/*.rst.txt) and a contents page. The
// answer quotes the HTML page once, not its reST copy, and the contents
// page, which names every topic, is not quoted even where search ranks it
// first.
func TestAskSphinxBuild(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "html")
	write := func(rel, text string) {
		p := filepath.Join(docs, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	topics := []string{"Installing the harbour crane", "Servicing the winch", "Mooring fees", "Slipway hours",
		"Storing kayaks", "Renting a berth", "Safety at the quay", "Fuel station", "Winter storage"}
	var toc strings.Builder
	toc.WriteString("<html><body><div role=\"main\"><h1>Harbour manual</h1><div class=\"toctree-wrapper\"><ul>")
	for _, tp := range topics {
		toc.WriteString("<li><a href=\"x.html\">" + tp + "</a></li>")
	}
	toc.WriteString("</ul></div></div></body></html>")
	write("index.html", toc.String())
	body := "The winch is greased every spring with marine grease, and its cable is checked for broken strands before the season starts."
	write("winch.html", "<html><body><div role=\"main\"><h1>Servicing the winch</h1><p>"+body+"</p></div></body></html>")
	write("_sources/winch.rst.txt", "Servicing the winch\n===================\n\n"+body+"\n")
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, docs); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	r := runCLI(t, work, nil, "ask", "--data", data, "--json", "How is the winch serviced?")
	var ans answerResult
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(ans.Citations) == 0 || !strings.HasSuffix(ans.Citations[0].URL, "winch.html") {
		t.Fatalf("first citation %+v, want winch.html", ans.Citations)
	}
	for _, c := range ans.Citations {
		if strings.Contains(c.URL, "_sources") {
			t.Errorf("the reST copy is cited beside its HTML page: %+v", ans.Citations)
		}
	}
	if !strings.HasPrefix(ans.Answer, "[1] The winch is greased every spring") {
		t.Errorf("answer %q", ans.Answer)
	}
	// Asked in the contents page's own words (search ranks it first), the
	// answer still quotes the page that answers.
	r = runCLI(t, work, nil, "ask", "--data", data, "--json", "harbour manual servicing the winch")
	ans = answerResult{}
	if err := json.Unmarshal([]byte(r.stdout), &ans); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	if len(ans.Citations) == 0 || !strings.HasSuffix(ans.Citations[0].URL, "winch.html") || !strings.HasPrefix(ans.Answer, "[1] The winch is greased") {
		t.Errorf("the contents page is quoted first: %s %+v", ans.Answer, ans.Citations)
	}
}
