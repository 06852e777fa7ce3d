package engine

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestDocxTableLabelBudget checks that header labels copied into the data
// rows count against the 64 MiB text limit: a 3.4 KB .docx whose 120 KB
// header cell labels 2,000 one-letter rows gave 228 MB of text without an
// error (20,000 rows, still a few KB zipped, would give 2.3 GB), as only
// the cells' own text was counted. It now fails with ErrDocumentTooLarge
// before those rows are built.
func TestDocxTableLabelBudget(t *testing.T) {
	long := strings.Repeat("label ", 20_000)
	body := `<w:tbl><w:tr><w:trPr><w:tblHeader/></w:trPr><w:tc><w:p><w:r><w:t>` + long + `</w:t></w:r></w:p></w:tc></w:tr>` +
		strings.Repeat(`<w:tr><w:tc><w:p><w:r><w:t>x</w:t></w:r></w:p></w:tc></w:tr>`, 2000) + `</w:tbl>`
	data := docxBytes(t, body)
	if _, err := extractDocxReader(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "bytes of text") {
		t.Errorf("err = %v, want ErrDocumentTooLarge for the text", err)
	}
}
