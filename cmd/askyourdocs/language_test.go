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
// "sorts" does; an unknown language is refused before anything is
// written.
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
	// sources --json and doctor name each document's language.
	r := runCLI(t, work, nil, "sources", "--data", data, "--json")
	var srcs struct{ Results []sourceEntry }
	if err := json.Unmarshal([]byte(r.stdout), &srcs); r.code != 0 || err != nil {
		t.Fatalf("sources --json: %v\n%s", err, r)
	}
	for _, e := range srcs.Results {
		if want := strings.TrimSuffix(filepath.Base(e.URL), ".html"); e.Language != want {
			t.Errorf("sources --json: %s has language %q, want %q", e.URL, e.Language, want)
		}
	}
	if r := runCLI(t, work, nil, "doctor", "--data", data); !strings.Contains(r.stdout, "languages") ||
		!strings.Contains(r.stdout, "de 1 document, en 1") && !strings.Contains(r.stdout, "en 1 document, de 1") {
		t.Errorf("doctor does not name the languages:\n%s", r)
	}
	// One German and one English chunk: English stems (a tie keeps them).
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

	r = runCLI(t, work, nil, "index", "--data", filepath.Join(work, "other"), "--keyword-language", "klingon", "docs")
	if r.code == 0 || !strings.Contains(r.stderr, "klingon") {
		t.Errorf("unknown language:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(work, "other", "askyourdocs.db")); err == nil {
		t.Error("an unknown language created an index")
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

// TestCLIGermanIndexNotStemmedAsEnglish: a new index of German pages
// (default options) analyses them without stemming, as the language rule
// says: "Dienste" finds the page that says "Dienste" and not the one that
// says "Dienstes", which English stems ("dienst") would join.
func TestCLIGermanIndexNotStemmedAsEnglish(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	os.MkdirAll(docs, 0o755)
	writeHTML(t, filepath.Join(docs, "start.html"), "Start",
		"Die Konfigurationsdatei wird beim Start des Dienstes aus dem Verzeichnis gelesen und geprüft.")
	writeHTML(t, filepath.Join(docs, "protokoll.html"), "Protokolle",
		"Die Protokolldateien enthalten die Warnungen und Fehler der laufenden Dienste des Systems.")
	writeHTML(t, filepath.Join(docs, "netz.html"), "Netzwerk",
		"Netzwerkschnittstellen werden mit dem Befehl ip angezeigt und bei Bedarf von Hand geändert.")
	data := filepath.Join(work, "data")
	if r := runCLI(t, work, nil, "index", "--data", data, "docs"); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	for q, want := range map[string]string{"Dienste": "protokoll.html", "Dienstes": "start.html"} {
		r := runCLI(t, work, nil, "search", "--data", data, "--json", "--mode", "keyword", q)
		var out struct{ Results []citation }
		if err := json.Unmarshal([]byte(r.stdout), &out); r.code != 0 || err != nil {
			t.Fatalf("search %q: %v\n%s", q, err, r)
		}
		var got []string
		for _, h := range out.Results {
			got = append(got, filepath.Base(h.URL))
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("search %q finds %v, want only %s", q, got, want)
		}
	}
}
