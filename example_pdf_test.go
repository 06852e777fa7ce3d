package engine_test

import (
	"context"
	"errors"
	"fmt"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// ExtractParagraphs on a PDF gives paragraphs in reading order with
// headings marked and their breadcrumb trail; running headers, footers and
// page numbers are gone.
func ExampleExtractParagraphs_pdf() {
	paras, err := askyourdocs.ExtractParagraphsWithOptions(context.Background(), "testdata/pdf/table.pdf", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range paras[4:7] {
		fmt.Printf("p.%d heading=%v [%s]\n  %s\n", p.PageNum, p.Heading, p.Breadcrumb, p.Text)
	}
	// Output:
	// p.1 heading=true [Library Loans Report > Summary > Loans by branch]
	//   Loans by branch
	// p.1 heading=false [Library Loans Report > Summary > Loans by branch]
	//   Branch Loans Readers Online renewals
	// p.1 heading=false [Library Loans Report > Summary > Loans by branch]
	//   Central Library 48,210 9,874 61 percent
}

// A caller can tell encrypted, scanned and broken PDFs apart with errors.Is,
// and show the reason with errors.As.
func ExampleErrNoText() {
	for _, name := range []string{"encrypted", "image-only", "truncated"} {
		_, err := askyourdocs.ExtractParagraphsWithOptions(context.Background(), "testdata/pdf/"+name+".pdf", nil)
		switch {
		case errors.Is(err, askyourdocs.ErrPDFEncrypted):
			fmt.Println(name, "-> ask the user for an unprotected copy")
		case errors.Is(err, askyourdocs.ErrNoText):
			fmt.Println(name, "-> run OCR first")
		case errors.Is(err, askyourdocs.ErrInvalidDocument):
			fmt.Println(name, "-> upload the file again")
		}
	}
	// Output:
	// encrypted -> ask the user for an unprotected copy
	// image-only -> run OCR first
	// truncated -> upload the file again
}
