package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewFileSourceRefusals(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "old.doc")
	if err := os.WriteFile(legacy, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileSource(legacy); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("a .doc file: got %v, want ErrUnsupportedFormat", err)
	}
	if _, err := NewFileSource(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a folder: got %v", err)
	}
	if _, err := NewFileSource(filepath.Join(dir, "missing.pdf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: got %v, want os.ErrNotExist", err)
	}
}

func TestFileSourceIndexesAndReplaces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	page := filepath.Join(dir, "guide.html")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(page, []byte("<html><body><h1>Guide</h1>"+body+"</body></html>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("<h2>Setup</h2><p>Install the package first.</p>")
	rel, err := filepath.Rel(mustGetwd(t), page)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewFileSource(rel)
	if err != nil {
		t.Fatal(err)
	}
	if src.Path != page || src.Name() != page {
		t.Fatalf("Path %q, Name %q: want the absolute path %q", src.Path, src.Name(), page)
	}
	src.Source = dir
	store := &ingestMemStore{}
	if _, _, err := IndexSource(ctx, store, src, 1200, 150, nil); err != nil {
		t.Fatal(err)
	}
	if len(store.docs) == 0 {
		t.Fatal("no chunks indexed")
	}
	d := store.docs[0]
	for key, want := range map[string]string{MetaURL: page, MetaSource: dir, MetaBreadcrumb: "Guide > Setup"} {
		if got := metaString(d.Metadata, key); got != want {
			t.Errorf("metadata %s = %q, want %q", key, got, want)
		}
	}
	if !strings.Contains(metaString(d.Metadata, MetaParentText), "Install the package first.") {
		t.Errorf("parent text %q lacks the paragraph", metaString(d.Metadata, MetaParentText))
	}

	// The new version replaces the old one: no chunk of it is left.
	write("<h2>Setup</h2><p>Download the installer instead.</p>")
	if _, _, err := IndexSource(ctx, store, src, 1200, 150, nil); err != nil {
		t.Fatal(err)
	}
	for _, d := range store.docs {
		if strings.Contains(DocText(d), "Install the package") {
			t.Errorf("old chunk still indexed: %q", DocText(d))
		}
	}
	if store.count(page) == 0 {
		t.Error("new version not indexed")
	}
}

// TestFileSourceMergedHeadings indexes a reference page whose options are
// a heading and a sentence each: they merge into one chunk under the
// page's breadcrumb, and the chunk's metadata names their headings
// (MetaHeadings), which keyword ranking weighs like the breadcrumb. A
// chunk without merged headings has no such key.
func TestFileSourceMergedHeadings(t *testing.T) {
	page := filepath.Join(t.TempDir(), "ref.html")
	body := "<html><body><h1>tool(1)</h1><h2>Description</h2><p>" + strings.Repeat("The tool reads its input and writes a report. ", 30) + "</p><h2>Options</h2>"
	for _, o := range []string{"Verbose Output", "Dry Run", "Config File"} {
		body += "<h3>" + o + "</h3><p>Sets the " + strings.ToLower(o) + " of a run, for this run only, whatever the defaults say.</p>"
	}
	if err := os.WriteFile(page, []byte(body+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := NewFileSource(page)
	if err != nil {
		t.Fatal(err)
	}
	store := &ingestMemStore{}
	if _, _, err := IndexSource(context.Background(), store, src, 1200, 150, nil); err != nil {
		t.Fatal(err)
	}
	var merged, plain int
	for _, d := range store.docs {
		heads, ok := d.Metadata[MetaHeadings].(string)
		switch {
		case strings.Contains(DocText(d), "Dry Run"):
			merged++
			if heads != "Verbose Output\nDry Run\nConfig File" || metaString(d.Metadata, MetaBreadcrumb) != "tool(1) > Options" {
				t.Errorf("merged options chunk: breadcrumb %q, headings %q", metaString(d.Metadata, MetaBreadcrumb), heads)
			}
		case ok:
			t.Errorf("chunk %q has headings %q", DocText(d), heads)
		default:
			plain++
		}
	}
	if merged != 1 || plain == 0 {
		t.Fatalf("%d merged and %d other chunks", merged, plain)
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestFileSourceHTMLRefusedBySize checks that an HTML file over 64 MiB is
// refused by its size, unread (as a text file is): the file here is
// sparse, 65 MiB of NUL bytes, which reading would refuse for another
// reason (one text node past 16 MiB).
func TestFileSourceHTMLRefusedBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(htmlMaxInputBytes + 1<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	src, err := NewFileSource(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Fetch(context.Background())
	var de *DocumentError
	if !errors.Is(err, ErrDocumentTooLarge) || !errors.As(err, &de) || !strings.Contains(err.Error(), "bytes of HTML") {
		t.Errorf("err = %v, want a *DocumentError wrapping ErrDocumentTooLarge for the file's size", err)
	}
}
