package engine

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkExtractFormats measures each reader's throughput (MB/s of file
// bytes, from memory, so disk speed does not count) on the fixtures of
// testdata/formats, next to the .docx reader on testdata/docx/birds.docx:
//
//	go test -run '^$' -bench BenchmarkExtractFormats -benchtime 2s .
func BenchmarkExtractFormats(b *testing.B) {
	zipped := func(read func(io.ReaderAt, int64) ([]Paragraph, error)) func([]byte) ([]Paragraph, error) {
		return func(data []byte) ([]Paragraph, error) { return read(bytes.NewReader(data), int64(len(data))) }
	}
	for _, c := range []struct {
		name, file string
		read       func([]byte) ([]Paragraph, error)
	}{
		{"docx", "../docx/birds.docx", zipped(extractDocxReader)},
		{"md", "guide.md", extractMarkdown},
		{"txt", "notes.txt", extractText},
		{"pptx", "slides.pptx", zipped(extractPptx)},
		{"xlsx", "budget.xlsx", zipped(extractXlsx)},
		{"odt", "report.odt", zipped(extractODF)},
		{"ods", "budget.ods", zipped(extractODF)},
		{"odp", "slides.odp", zipped(extractODF)},
		{"epub", "book.epub", zipped(extractEpub)},
	} {
		b.Run(c.name, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join("testdata", "formats", c.file))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				paras, err := c.read(data)
				if err != nil {
					b.Fatal(err)
				}
				n = len(paras)
			}
			b.ReportMetric(float64(n), "paragraphs")
		})
	}
}
