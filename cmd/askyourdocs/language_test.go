package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIKeywordLanguageAndDetectedLanguage indexes a German and an
// English page: search --json names each hit's detected language; with
// the default English stems "sort" finds "sorts", and after index
// --keyword-language simple (the index re-analysed, no stemming) only
// "sorts" does; an unknown language and --keyword-language with a
// PostgreSQL store are refused before anything is written.
func TestCLIKeywordLanguageAndDetectedLanguage(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	os.MkdirAll(docs, 0o755)
	writeHTML(t, filepath.Join(docs, "de.html"), "Verzeichnisse",
		"Der Befehl listet den Inhalt eines Verzeichnisses auf. Ohne Argument zeigt er das aktuelle Verzeichnis und sortiert die Einträge alphabetisch.")
	writeHTML(t, filepath.Join(docs, "en.html"), "Listing",
		"The command lists the contents of a directory. Without an argument it shows the current directory and sorts the entries alphabetically.")
	data := filepath.Join(work, "data")

	search := func(q string) []citation {
		t.Helper()
		r := runCLI(t, work, nil, "search", "--data", data, "--json", "--mode", "keyword", q)
		if r.code != 0 {
			t.Fatalf("search %q:\n%s", q, r)
		}
		var out struct{ Results []citation }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, r.stdout)
		}
		return out.Results
	}
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	langs := map[string]string{}
	for _, h := range search("directory Verzeichnisses") {
		langs[filepath.Base(h.URL)] = h.Language
	}
	if langs["de.html"] != "de" || langs["en.html"] != "en" {
		t.Errorf("detected languages %v, want de.html de and en.html en", langs)
	}
	// English stems: "sorts" and "sort" meet; as written they do not.
	if hits := search("sort"); len(hits) == 0 || filepath.Base(hits[0].URL) != "en.html" {
		t.Errorf("english stems: search sort: %v", hits)
	}
	if r := runCLI(t, work, nil, "index", "--data", data, "--keyword-language", "simple", "docs"); r.code != 0 {
		t.Fatalf("index --keyword-language simple:\n%s", r)
	}
	for _, h := range search("sort") {
		if filepath.Base(h.URL) == "en.html" {
			t.Errorf("simple: search sort found %s, whose text says only sorts", h.URL)
		}
	}
	if hits := search("sorts"); len(hits) == 0 || filepath.Base(hits[0].URL) != "en.html" {
		t.Errorf("simple: search sorts: %v", hits)
	}

	r := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "other"), "--keyword-language", "klingon", "docs")
	if r.code == 0 || !strings.Contains(r.stderr, "klingon") {
		t.Errorf("unknown language:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "other", "askyourdocs.db")); err == nil {
		t.Error("an unknown language created an index")
	}
	r = runCLI(t, work, nil, "index", "--pg", "postgres://nowhere.invalid/db", "--keyword-language", "german", "docs")
	if r.code == 0 || !strings.Contains(r.stderr, "embedded store") {
		t.Errorf("--keyword-language with --pg:\n%s", r)
	}
}

// TestProgressLineFitsWideNames draws the progress bar with file names of
// Chinese and Japanese characters, which take two terminal columns each:
// the line stays within the terminal's width (a longer one wraps and
// leaves a trail of bars), keeping the name's end.
func TestProgressLineFitsWideNames(t *testing.T) {
	for _, width := range []int{40, 60, 80} {
		var b strings.Builder
		p := newProgress(&b, 10, true)
		p.tty, p.width = true, func() int { return width }
		name := "/srv/文書/マニュアル/設定ファイルの書き方と起動時の読み込みについて.pdf"
		p.begin(name)
		line := b.String()[strings.LastIndex(b.String(), "\r\033[K")+len("\r\033[K"):]
		if w := textWidth(line); w > width-1 {
			t.Errorf("width %d: the line takes %d columns: %q", width, w, line)
		}
		if width >= 80 && !strings.HasSuffix(line, "について.pdf") {
			t.Errorf("width %d: the name's end is lost: %q", width, line)
		}
	}
	if got := shortenMiddle("設定ファイル.pdf", 9); textWidth(got) > 9 || !strings.HasSuffix(got, ".pdf") {
		t.Errorf("shortenMiddle = %q (%d columns)", got, textWidth(got))
	}
	if got := fitWidth("設定ab", 3); got != "設" {
		t.Errorf("fitWidth = %q", got)
	}
}

// TestTopicHeading: the front page suggests headings that read as topics,
// Japanese and Chinese ones included (no spaces, so no "words"), and not
// a document's apparatus, capitals or a list of names.
func TestTopicHeading(t *testing.T) {
	for text, want := range map[string]bool{
		"Cancelling a booking":                    true,
		"How refunds are paid":                    true,
		"試験問題用紙の印刷":                               true,
		"配置文件的位置":                                 true,
		"REVISION HISTORY":                        false,
		"Revision History":                        false,
		"Table of Contents":                       false,
		"Authors":                                 false,
		"Guido van Rossum, Fred L. Drake, et al.": false,
		"Overview":                                false, // one word
		"目次":                                      false, // two characters
		"A very long heading that goes on and on with many more words than anyone would ask": false,
	} {
		if got := topicHeading(text); got != want {
			t.Errorf("topicHeading(%q) = %v, want %v", text, got, want)
		}
	}
}
