package engine

import "fmt"

// extractPDF is replaced by document_pdf.go (the PDF engineer deletes this file).
func extractPDF(path string) ([]Paragraph, error) {
	return nil, fmt.Errorf("extract %s: PDF reader not merged yet", path)
}
