package engine

import "fmt"

// extractDocx is replaced by docx.go (the .docx engineer deletes this file).
func extractDocx(path string) ([]Paragraph, error) {
	return nil, fmt.Errorf("extract %s: .docx reader not merged yet", path)
}
