package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// errorTableRow is one row of the table in docs/indexing.md: the file that
// shows a cause and the line the CLI lists for it.
type errorTableRow struct{ cause, file, line string }

// readErrorTable returns the rows of the "What askyourdocs index lists"
// table of docs/indexing.md.
func readErrorTable(t *testing.T) []errorTableRow {
	t.Helper()
	data, err := os.ReadFile("../../docs/indexing.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []errorTableRow
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "| Cause | File | The CLI lists |"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "| "):
			cells := strings.Split(strings.Trim(l, "| "), " | ")
			if len(cells) != 3 {
				t.Fatalf("bad table row %q", l)
			}
			unquote := func(s string) string { s, _, _ = strings.Cut(strings.Trim(s, "`"), "` ("); return strings.Trim(s, "`") }
			rows = append(rows, errorTableRow{cells[0], unquote(cells[1]), unquote(cells[2])})
		case in:
			return rows
		}
	}
	return rows
}

// errorTableZip returns a zip archive holding the named parts.
func errorTableZip(t *testing.T, names ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestIndexErrorTable makes one file per row of the error table in
// docs/indexing.md, indexes the folder with the CLI and checks that the
// output holds every row's line: the table is what the CLI prints.
func TestIndexErrorTable(t *testing.T) {
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	notZip := []byte("plain text, not a zip archive")
	files := map[string]func(path string) error{
		"cut.pdf": func(p string) error {
			return os.WriteFile(p, []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n"), 0o644)
		},
		"fake.pdf":    func(p string) error { return os.WriteFile(p, []byte("<html>a page saved as .pdf</html>"), 0o644) },
		"locked.pdf":  func(p string) error { copyFixture(t, "../../testdata/pdf/encrypted.pdf", p); return nil },
		"letter.docx": func(p string) error { return os.WriteFile(p, notZip, 0o644) },
		"empty.docx":  func(p string) error { return os.WriteFile(p, errorTableZip(t, "[Content_Types].xml"), 0o644) },
		"sheet.xlsx":  func(p string) error { return os.WriteFile(p, errorTableZip(t, "docProps/app.xml"), 0o644) },
		"deck.pptx":   func(p string) error { return os.WriteFile(p, notZip, 0o644) },
		"text.odt":    func(p string) error { return os.WriteFile(p, notZip, 0o644) },
		"calc.ods":    func(p string) error { return os.WriteFile(p, errorTableZip(t, "mimetype"), 0o644) },
		"book.epub":   func(p string) error { return os.WriteFile(p, errorTableZip(t, "mimetype"), 0o644) },
		"huge.md": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(64<<20 + 1) // sparse: nothing is written
		},
		"secret.txt": func(p string) error { return os.WriteFile(p, []byte("hidden"), 0) },
		"blank.txt":  func(p string) error { return os.WriteFile(p, []byte("  \n\n "), 0o644) },
		"pipe.txt":   func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"old.doc":    func(p string) error { return os.WriteFile(p, []byte("\xd0\xcf\x11\xe0 legacy"), 0o644) },
	}
	rows := readErrorTable(t)
	if len(rows) < 10 {
		t.Fatalf("only %d rows read from the table", len(rows))
	}
	root := os.Geteuid() == 0
	var want []errorTableRow
	for _, r := range rows {
		make, ok := files[r.file]
		if !ok {
			t.Errorf("row %q: no fixture for %s", r.cause, r.file)
			continue
		}
		if r.file == "secret.txt" && root {
			continue // root reads any file
		}
		if err := make(filepath.Join(docs, r.file)); err != nil {
			t.Fatalf("%s: %v", r.file, err)
		}
		want = append(want, r)
	}
	res := runCLI(t, work, nil, "index", "--data", filepath.Join(work, "index"), "docs")
	if res.code != exitError {
		t.Errorf("exit %d, want %d", res.code, exitError)
	}
	for _, r := range want {
		if !strings.Contains(res.stdout, r.line) {
			t.Errorf("%s (%s): output lacks %q", r.cause, r.file, r.line)
		}
	}
	// One line each, nothing of the readers' internal wrapping.
	for _, bad := range []string{"index source", "extract ", "fetch:", "%%EOF", "roll back"} {
		if strings.Contains(res.stdout, bad) {
			t.Errorf("output contains %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("%s", res)
	}
}

// TestExplainIndexErrorDiskFull: a full disk is said as such, whichever
// store reports it.
func TestExplainIndexErrorDiskFull(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("index source %q: write: %w", "/a", &os.PathError{Op: "write", Path: "/idx/x", Err: syscall.ENOSPC}),
		fmt.Errorf("pgvector replace source: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"}),
	} {
		if got := explainIndexError(err); !strings.HasPrefix(got, "the index's disk is full") {
			t.Errorf("%v: %q", err, got)
		}
	}
	de := &askyourdocs.DocumentError{Path: "a.pdf", Format: "pdf", Reason: "PDF without text: 1 page(s) without text", Err: askyourdocs.ErrNoText}
	want := de.Reason
	if hint := ocrHint(); hint != "" {
		want += "; " + hint
	}
	if got := explainIndexError(fmt.Errorf("index source: %w", de)); got != want {
		t.Errorf("no text: %q", got)
	}
	if got := explainIndexError(errors.New("embedder down")); got != "embedder down" {
		t.Errorf("other error: %q", got)
	}
}
