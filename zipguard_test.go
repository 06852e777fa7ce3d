package engine

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"io"
	"sort"
	"strings"
	"testing"
)

// zipOf returns a zip archive of files (name to content), in name order.
func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipReaders are the zip-based readers the shared guard protects.
var zipReaders = map[string]func(io.ReaderAt, int64) ([]Paragraph, error){
	"pptx": extractPptx, "xlsx": extractXlsx, "odf": extractODF, "epub": extractEpub,
	"docx": extractDocxReader,
}

// TestZipGuardEveryFormat checks that every zip-based reader refuses a zip
// bomb (200 MiB deflated to about 200 KiB in the first part it reads), and
// reports a file that is no zip, or an OLE file, as invalid. (A header
// that understates the size is caught by archive/zip itself, as an
// invalid file.)
func TestZipGuardEveryFormat(t *testing.T) {
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	crc := crc32.NewIEEE()
	content := bytes.Repeat([]byte("a"), 200<<20)
	fw.Write(content)
	crc.Write(content)
	fw.Close()
	bomb := func(name string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(content))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
		zw.Close()
		return buf.Bytes()
	}
	parts := map[string]string{"pptx": "_rels/.rels", "xlsx": "_rels/.rels", "odf": "styles.xml", "epub": "META-INF/container.xml", "docx": "_rels/.rels"}
	for kind, read := range zipReaders {
		t.Run(kind, func(t *testing.T) {
			data := bomb(parts[kind])
			if _, err := read(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrDocumentTooLarge) {
				t.Errorf("bomb: got %v, want ErrDocumentTooLarge", err)
			}
			for _, junk := range []string{"plain text, no zip", oleMagic + "rest of an OLE file"} {
				_, err := read(strings.NewReader(junk), int64(len(junk)))
				if !errors.Is(err, ErrInvalidDocument) && !errors.Is(err, ErrInvalidDocx) {
					t.Errorf("%q: got %v, want an invalid-document error", junk[:5], err)
				}
			}
		})
	}
	many := map[string]string{}
	for i := range 20 {
		many[strings.Repeat("x", i+1)] = ""
	}
	data := zipOf(t, many)
	if _, err := openZipArchive(bytes.NewReader(data), int64(len(data)), zipLimits{maxEntries: 10, maxDeclared: 1 << 20, maxPart: 1 << 20, maxTotal: 1 << 20}, ErrInvalidDocument, ".x"); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("too many entries: %v", err)
	}
	if !errors.Is(ErrDocxTooLarge, ErrDocumentTooLarge) {
		t.Error("ErrDocxTooLarge is not ErrDocumentTooLarge")
	}
}

func TestZipLimitedReaderCounts(t *testing.T) {
	var count int64
	lr := &zipLimitedReader{r: strings.NewReader("0123456789"), left: 5, part: "p", count: &count}
	_, err := io.ReadAll(lr)
	if !errors.Is(err, ErrDocumentTooLarge) || count != 5 {
		t.Fatalf("over the limit: err %v, counted %d", err, count)
	}
	count = 0
	lr = &zipLimitedReader{r: strings.NewReader("0123456789"), left: 10, part: "p", count: &count}
	if b, err := io.ReadAll(lr); err != nil || string(b) != "0123456789" || count != 10 {
		t.Fatalf("exactly at the limit: %q %v %d", b, err, count)
	}
}
