package engine_test

import (
	"context"
	"errors"
	"fmt"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// ExampleExtractParagraphsWithOptions reads a scanned PDF through OCR when
// tesseract is installed, and says how to install it otherwise. (Not run:
// its output depends on the machine; TestOCRFixturesF1 checks it.)
func ExampleExtractParagraphsWithOptions() {
	ocr, err := askyourdocs.NewOCR()
	if errors.Is(err, askyourdocs.ErrOCRUnavailable) {
		fmt.Println(err) // names the packages to install
		return
	}
	paras, err := askyourdocs.ExtractParagraphsWithOptions(context.Background(), "testdata/ocr/scan.pdf",
		&askyourdocs.ExtractOptions{OCR: ocr})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range paras[:3] {
		fmt.Println(p.PageNum, p.Heading, p.Text)
	}
}
