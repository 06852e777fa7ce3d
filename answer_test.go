package engine

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

// TestAnswerPassagesCollapseCopies: a page indexed twice, as HTML and as
// its Sphinx source text, is cited once, as the HTML page, in the copy's
// place; a table of contents goes last; two hits of one section whose
// heading is the question keep the passage that starts the section.
func TestAnswerPassagesCollapseCopies(t *testing.T) {
	body := "Install the package with pip and check the version afterwards. The installer needs network access " +
		"and writes into the user's site directory unless a virtual environment is active at the time."
	hit := func(url, section, passage string) SearchHit {
		return SearchHit{URL: url, Section: section, Passage: passage, Text: passage, Contents: looksLikeContents(passage)}
	}
	toc := hit("docs/index.html", "Contents", "Contents\nInstalling\nConfiguring\nRunning\nUpgrading\nTroubleshooting\nReference\nGlossary\nChangelog")
	hits := []SearchHit{
		hit("docs/_sources/install.rst.txt", "Installing", "Installing\n==========\n"+body),
		toc,
		hit("docs/running.html", "Running", "Running\nStart the server with the run command and stop it with Ctrl-C when the work is done for the day."),
		hit("docs/install.html", "Installing", "Installing\n"+body),
	}
	got := answerPassages(hits, 5, quoteTerms("How do I install it?"))
	var urls []string
	for _, h := range got {
		urls = append(urls, h.URL)
	}
	if want := "docs/install.html docs/running.html docs/index.html"; strings.Join(urls, " ") != want {
		t.Errorf("passages %q, want %q", urls, want)
	}

	mid := hit("faq.html", "FAQ > How do I reset my password?", "the link expires after one hour. Ask again when it did.")
	start := hit("faq.html", "FAQ > How do I reset my password?", "How do I reset my password?\nOpen the login page and choose Forgot password. The link expires after one hour.")
	got = answerPassages([]SearchHit{mid, start}, 5, quoteTerms("How do I reset my password?"))
	if len(got) != 1 || got[0].Passage != start.Passage {
		t.Errorf("section passages %+v, want the one starting the section", got)
	}
}

// TestAnswerExtractive: without a model the answer quotes the sentence
// that answers (the lead of the FAQ entry whose heading is the question),
// cites only that passage when it covers the question, adds a passage for
// a second part of the question, and says so when nothing matches.
func TestAnswerExtractive(t *testing.T) {
	ctx := context.Background()
	store, err := NewSQLiteStore(ctx, nil, NewLocalEmbedder(0), filepath.Join(t.TempDir(), "i.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	doc := func(url, section, text string) *ai.Document {
		return ai.DocumentFromText(text, map[string]any{MetaURL: url, MetaSource: "docs", MetaBreadcrumb: section})
	}
	err = store.Index(ctx, []*ai.Document{
		doc("faq.html", "FAQ > How do I reset my password?", "How do I reset my password?\nOpen the login page and choose Forgot password. "+
			"A link arrives by mail within a minute. Passwords are stored hashed with a per-user salt."),
		doc("faq.html", "FAQ > How do I delete my account?", "How do I delete my account?\nWrite to support from the address of the account. "+
			"Deleted accounts cannot be restored."),
		doc("guide.html", "Guide > Sessions", "Sessions end after thirty minutes without activity. A new login starts a new session."),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Answer(ctx, store, "How do I reset my password?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[1] Open the login page and choose Forgot password. A link arrives by mail within a minute."; !strings.HasPrefix(res.Text, want) {
		t.Errorf("answer %q, want it to start with %q", res.Text, want)
	}
	if len(res.Citations) != 1 || res.Generated || res.NoMatch || res.Citations[0].Excerpt != strings.TrimPrefix(res.Text, "[1] ") {
		t.Errorf("citations %+v", res.Citations)
	}
	res, err = Answer(ctx, store, "How do I reset my password, and when do sessions end?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Citations) != 2 || !strings.Contains(res.Text, "Forgot password") || !strings.Contains(res.Text, "thirty minutes") {
		t.Errorf("two-part question: %q", res.Text)
	}
	res, err = Answer(ctx, store, "Which hypervisor virtualises the appliance?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NoMatch || res.Level != ConfidenceLow || !strings.HasPrefix(res.Text, "Nothing in the index matches") {
		t.Errorf("no-match answer: %+v", res)
	}
	if _, err := Answer(ctx, store, "  ", nil); err == nil {
		t.Error("blank question: no error")
	}
}

// TestAnswerCitesTheQuotedSection: a quote from a small section merged into
// a chunk (MetaHeadings) is labelled with that section's heading, not the
// heading the chunk starts with: in place of the breadcrumb's last part
// when the chunk starts with that sibling section, after it when the
// breadcrumb names the merged sections' parent.
func TestAnswerCitesTheQuotedSection(t *testing.T) {
	passage := "Running raw SQL\nUse the connection's cursor to run raw SQL queries directly against the database.\n" +
		"Pre-existing databases\nYes, you can use a pre-existing database: run inspectdb to generate models for its tables."
	parent := "Databases\n" + passage
	for _, tc := range []struct{ section, passage, want string }{
		// The small section joined its sibling, which the chunk starts with.
		{"FAQ > Databases > Running raw SQL", passage, "FAQ > Databases > Pre-existing databases"},
		// The breadcrumb names the merged sections' parent, whose heading
		// is not in the passage, or is followed at once by a child's.
		{"FAQ > Databases", passage, "FAQ > Databases > Pre-existing databases"},
		{"FAQ > Databases", parent, "FAQ > Databases > Pre-existing databases"},
	} {
		passage := tc.passage
		doc := ai.DocumentFromText(passage, map[string]any{MetaURL: "faq.html", MetaBreadcrumb: tc.section, MetaHeadings: "Running raw SQL\nPre-existing databases"})
		r := &AnswerResult{Citations: []SearchHit{{Doc: doc, URL: "faq.html", Section: tc.section, Passage: passage, Text: passage}}}
		r.extractive("Can I use a pre-existing database?", AnswerOptions{QuoteCols: 120})
		if len(r.Citations) != 1 || !strings.Contains(r.Citations[0].Excerpt, "inspectdb") {
			t.Fatalf("%s: citations %+v, want the pre-existing database sentence quoted", tc.section, r.Citations)
		}
		if got := r.Citations[0].Section; got != tc.want {
			t.Errorf("breadcrumb %q: the quote is labelled %q, want %q", tc.section, got, tc.want)
		}
	}
	// A quote from the section the breadcrumb names keeps it.
	doc := ai.DocumentFromText(passage, map[string]any{MetaURL: "faq.html", MetaBreadcrumb: "FAQ > Databases > Running raw SQL", MetaHeadings: "Pre-existing databases"})
	r := &AnswerResult{Citations: []SearchHit{{Doc: doc, URL: "faq.html", Section: "FAQ > Databases > Running raw SQL", Passage: passage, Text: passage}}}
	r.extractive("How do I run raw SQL queries?", AnswerOptions{QuoteCols: 120})
	if len(r.Citations) != 1 || r.Citations[0].Section != "FAQ > Databases > Running raw SQL" {
		t.Errorf("a quote of the chunk's own section: %+v", r.Citations)
	}
}
