package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Every reader's failure is a *DocumentError: branch on its sentinel with
// errors.Is, show its one-line Reason with errors.As.
func ExampleDocumentError() {
	dir, _ := os.MkdirTemp("", "docs")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "budget.xlsx"), []byte("not a workbook"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.doc"), []byte("an old Word file"), 0o644)

	for _, name := range []string{"budget.xlsx", "missing.pdf", "notes.doc"} {
		_, err := askyourdocs.ExtractParagraphsWithOptions(context.Background(), filepath.Join(dir, name), nil)
		var de *askyourdocs.DocumentError
		if !errors.As(err, &de) {
			continue
		}
		switch {
		case errors.Is(err, askyourdocs.ErrInvalidDocument):
			fmt.Println(name, "(broken):", de.Reason)
		case errors.Is(err, askyourdocs.ErrUnsupportedFormat):
			fmt.Println(name, "(not read):", de.Reason)
		default:
			fmt.Println(name, "("+de.Format+"):", de.Reason)
		}
	}
	// Output:
	// budget.xlsx (broken): unreadable .xlsx file: not a zip archive (zip: not a valid zip file)
	// missing.pdf (pdf): no such file
	// notes.doc (not read): unsupported format: legacy binary Word document (.doc): convert it to .docx or .odt, e.g. with LibreOffice: soffice --headless --convert-to docx
}
