package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocumentErrorEveryReader reads a broken file of every format (made
// here) and an operating-system failure of each kind, and checks that the
// error is one *DocumentError: errors.As finds it, its sentinel matches,
// and its message is one line naming the path once, without the readers'
// internal wrapping.
func TestDocumentErrorEveryReader(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notZip := []byte("this is plain text, not a zip archive")
	emptyZip := func(name string) []byte { return zipOf(t, map[string]string{name: "x"}) }
	cases := []struct {
		name, path string
		want       error
		reason     string // a substring of Reason
	}{
		{"pdf truncated", write("cut.pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n")), ErrInvalidDocument, "unreadable PDF"},
		{"pdf not a pdf", write("fake.pdf", []byte("<html>a web page saved as .pdf</html>")), ErrInvalidDocument, "not a PDF file"},
		{"pdf encrypted", pdfFixture("encrypted"), ErrPDFEncrypted, "encrypted PDF: a password is needed"},
		{"pdf without text", pdfFixture("image-only"), ErrNoText, "PDF without a text layer"},
		{"markdown too large", sparseFile(t, filepath.Join(dir, "huge.md"), maxTextFileBytes+1), ErrDocumentTooLarge, "Markdown file too large"},
		{"docx not zip", write("a.docx", notZip), ErrInvalidDocument, "unreadable .docx file: not a zip archive"},
		{"docx no body", write("b.docx", emptyZip("[Content_Types].xml")), ErrInvalidDocument, "unreadable .docx file"},
		{"xlsx not zip", write("a.xlsx", notZip), ErrInvalidDocument, "unreadable .xlsx file"},
		{"xlsx no workbook", write("b.xlsx", emptyZip("docProps/app.xml")), ErrInvalidDocument, "unreadable .xlsx file"},
		{"pptx not zip", write("a.pptx", notZip), ErrInvalidDocument, "unreadable .pptx file"},
		{"pptx no presentation", write("b.pptx", emptyZip("docProps/app.xml")), ErrInvalidDocument, "unreadable .pptx file"},
		{"odt not zip", write("a.odt", notZip), ErrInvalidDocument, "unreadable .odt file"},
		{"ods no content", write("a.ods", emptyZip("mimetype")), ErrInvalidDocument, "unreadable .ods file"},
		{"odp not zip", write("a.odp", notZip), ErrInvalidDocument, "unreadable .odp file"},
		{"epub not zip", write("a.epub", notZip), ErrInvalidDocument, "unreadable .epub file"},
		{"epub no container", write("b.epub", emptyZip("mimetype")), ErrInvalidDocument, "unreadable .epub file"},
		{"legacy doc", write("old.doc", notZip), ErrUnsupportedFormat, "convert it to .docx"},
		{"unknown extension", write("x.xyz", notZip), ErrUnsupportedFormat, "unsupported format"},
		{"binary without extension", write("blob", []byte("\x7fELF\x00\x00\x01")), ErrUnsupportedFormat, "binary file"},
		{"markdown is a directory", filepath.Join(dir, "notes.md"), ErrUnsupportedFormat, "not a regular file (a directory)"},
		{"text missing", filepath.Join(dir, "gone.txt"), fs.ErrNotExist, "no such file"},
	}
	if err := os.Mkdir(filepath.Join(dir, "notes.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fifo := range []string{"pipe.txt", "pipe.html"} {
		p := filepath.Join(dir, fifo)
		if err := makeFIFO(p); err != nil {
			t.Logf("no named pipe on this system: %v", err)
			continue
		}
		cases = append(cases, struct {
			name, path string
			want       error
			reason     string
		}{"named pipe " + fifo, p, ErrUnsupportedFormat, "not a regular file (a named pipe)"})
	}
	if os.Geteuid() != 0 { // root reads any file
		p := write("secret.md", []byte("# hidden"))
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name, path string
			want       error
			reason     string
		}{"markdown unreadable", p, fs.ErrPermission, "permission denied"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ExtractParagraphs(c.path)
			if strings.HasSuffix(c.path, ".html") {
				_, err = (&FileSource{Path: c.path}).Fetch(context.Background())
			}
			checkDocumentError(t, err, c.path, c.want, c.reason)
			// Through the ingest pipeline the error is still found.
			if _, _, ierr := IndexSource(context.Background(), &ingestMemStore{}, &FileSource{Path: c.path}, 500, 50, nil); !errors.Is(ierr, c.want) {
				t.Errorf("IndexSource error %v does not wrap %v", ierr, c.want)
			} else {
				var de *DocumentError
				if !errors.As(ierr, &de) || de.Path != c.path {
					t.Errorf("IndexSource error %v: no *DocumentError for %s", ierr, c.path)
				}
			}
		})
	}
}

// checkDocumentError checks err is the one-line *DocumentError for path.
func checkDocumentError(t *testing.T, err error, path string, want error, reason string) {
	t.Helper()
	var de *DocumentError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DocumentError", err, err)
	}
	if !errors.Is(err, want) {
		t.Errorf("error %v does not wrap %v", err, want)
	}
	if de.Path != path || de.Format == "" {
		t.Errorf("Path %q Format %q, want path %q and a format", de.Path, de.Format, path)
	}
	t.Logf("%s", de.Error())
	if !strings.Contains(de.Reason, reason) {
		t.Errorf("Reason %q does not contain %q", de.Reason, reason)
	}
	if de.Error() != path+": "+de.Reason {
		t.Errorf("Error() = %q, want the path and the reason", de.Error())
	}
	for _, bad := range []string{"\n", "%%", "extract ", path} {
		if strings.Contains(de.Reason, bad) {
			t.Errorf("Reason %q contains %q", de.Reason, bad)
		}
	}
}

// TestDocumentErrorDeprecatedAliases checks the old sentinel names are the
// new values, so errors.Is in apps built on them keeps working.
func TestDocumentErrorDeprecatedAliases(t *testing.T) {
	for _, c := range []struct{ old, now error }{
		{ErrPDFMalformed, ErrInvalidDocument},
		{ErrInvalidDocx, ErrInvalidDocument},
		{ErrDocxTooLarge, ErrDocumentTooLarge},
		{ErrPDFNoText, ErrNoText},
	} {
		if c.old != c.now {
			t.Errorf("%v is not the same value as %v", c.old, c.now)
		}
	}
	_, err := ExtractParagraphs(filepath.Join("testdata", "does-not-exist.pdf"))
	if errors.Is(err, ErrPDFMalformed) {
		t.Errorf("a missing file is reported as a malformed PDF: %v", err)
	}
}

// TestNewFileSourceDocumentError checks NewFileSource refuses with the same
// error type.
func TestNewFileSourceDocumentError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "slides.ppt")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewFileSource(p)
	checkDocumentError(t, err, p, ErrUnsupportedFormat, "convert it to .pptx")
	_, err = NewFileSource(dir)
	checkDocumentError(t, err, dir, ErrUnsupportedFormat, "a directory")
}

// sparseFile creates a file of size zero bytes at path without writing them.
func sparseFile(t *testing.T, path string, size int64) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}
