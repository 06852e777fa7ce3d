package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Paragraph is one block of text extracted from a document or web page, in
// reading order.
type Paragraph struct {
	// Text is the paragraph's text with whitespace normalised.
	Text string
	// PageNum is the 1-based page the paragraph starts on (0 when the source
	// has no pages, such as a web page).
	PageNum int
	// Heading reports whether the paragraph is a section heading.
	Heading bool
	// Breadcrumb is the path of headings above (and including, for a
	// heading) this paragraph, joined with " > ".
	Breadcrumb string
}

// Chunk is a piece of a document sized for embedding, built by BuildChunks.
type Chunk struct {
	Text, ParentText, Pages, Section, Top, Breadcrumb, URL string
}

// ErrUnsupportedFormat is returned by ExtractParagraphs for a file whose
// extension is neither .pdf nor .docx.
var ErrUnsupportedFormat = errors.New("unsupported document format")

// SupportedDocumentExt reports whether ExtractParagraphs handles files with
// the extension ext (".pdf" or ".docx", with the dot, in any case).
func SupportedDocumentExt(ext string) bool {
	switch strings.ToLower(ext) {
	case ".pdf", ".docx":
		return true
	}
	return false
}

// ExtractParagraphs returns the paragraphs of the PDF or .docx file at path,
// in reading order. The extension decides the format, in any case; any other
// extension gives an error wrapping ErrUnsupportedFormat.
func ExtractParagraphs(path string) ([]Paragraph, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pdf":
		return extractPDF(path)
	case ".docx":
		return extractDocx(path)
	}
	return nil, fmt.Errorf("extract paragraphs from %s: %w (want .pdf or .docx)", path, ErrUnsupportedFormat)
}
