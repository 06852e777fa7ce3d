package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// maxIndexRSS is the peak resident memory `askyourdocs index` may reach on
// one hostile file within the readers' guards.
const maxIndexRSS = 300 << 20

// TestIndexBoundedMemory indexes three hostile files through the CLI
// binary and measures its peak RSS (wait4's ru_maxrss): soft .docx and .odt
// bombs (120 MiB of tiny paragraphs in one part, under the zip guard's 128
// MiB per part; 11 MB and 1.1 MB compressed) and a 50 MB text file of one
// line. Each is refused naming the limit it hits, and the process stays
// under 300 MB (before the limits: 1.43 GB, 1.20 GB and 660 MB; after:
// 120-145 MB, 98 MB and 186-195 MB; docs/indexing.md).
func TestIndexBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 170 MB of input")
	}
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.docx")
	writeSoftBomb(t, bomb, 120<<20)
	odt := filepath.Join(dir, "bomb.odt")
	writeSoftBombODT(t, odt, 120<<20)
	line := filepath.Join(dir, "line.txt")
	writeOneLine(t, line, 50<<20)
	for _, c := range []struct{ file, want string }{
		{bomb, "more than 250000 paragraphs"},
		{odt, "more than 250000 paragraphs"},
		{line, "more than the limit of 20000 per document"},
	} {
		st, _ := os.Stat(c.file)
		out, rss := runCLIRSS(t, dir, "index", "--data", filepath.Join(dir, "index"), c.file)
		t.Logf("%s (%d bytes): peak RSS %d MB", filepath.Base(c.file), st.Size(), rss>>20)
		if !strings.Contains(out, c.want) || strings.Contains(out, "Indexed 1 source") {
			t.Errorf("%s: output lacks %q:\n%s", filepath.Base(c.file), c.want, out)
		}
		if rss > maxIndexRSS {
			t.Errorf("%s: peak RSS %d MB, want <= %d MB", filepath.Base(c.file), rss>>20, maxIndexRSS>>20)
		}
	}
}

// runCLIRSS runs the CLI binary and returns its combined output and peak
// resident set size in bytes.
func runCLIRSS(t *testing.T, dir string, args ...string) (string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildCLI(t), args...)
	cmd.Dir = dir
	cmd.Env = cliEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run %v: %v", args, err)
		}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return out.String(), ru.Maxrss << 10 // kilobytes on Linux
}

// writeSoftBomb writes a .docx whose document part holds size bytes of
// one-word paragraphs.
func writeSoftBomb(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
	}
	for _, p := range parts {
		w, err := z.Create(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			t.Fatal(err)
		}
	}
	w, err := z.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n, _ := bw.WriteString(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`)
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	for i := 0; n < size-64; i++ {
		k, _ := fmt.Fprintf(bw, "<w:p><w:r><w:t>%s %d</w:t></w:r></w:p>", words[i%len(words)], i%211)
		n += k
	}
	bw.WriteString(`</w:body></w:document>`)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeSoftBombODT writes an .odt whose content.xml holds size bytes of
// one-word paragraphs.
func writeSoftBombODT(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	w, err := z.Create("mimetype")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("application/vnd.oasis.opendocument.text"))
	if w, err = z.Create("content.xml"); err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n, _ := bw.WriteString(`<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>`)
	for i := 0; n < size-64; i++ {
		k, _ := fmt.Fprintf(bw, "<text:p>alpha %d</text:p>", i%211)
		n += k
	}
	bw.WriteString(`</office:text></office:body></office:document-content>`)
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeOneLine writes size bytes of words without a line break.
func writeOneLine(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	for i, n := 0, 0; n < size; i++ {
		k, _ := fmt.Fprintf(bw, "word%d ", i%100000)
		n += k
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}
