package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// ExtractOptions configures ExtractParagraphsWithOptions. The zero value
// reads without OCR.
type ExtractOptions struct {
	// OCR, when set, reads the pages of a PDF that have no text layer (all
	// of them for a scan, some for a mixed PDF) and image files (.png,
	// .jpg, .jpeg, .tif, .tiff) through OCR. Nil keeps ErrNoText for
	// scans and refuses images.
	OCR *OCR
}

// ExtractParagraphsWith is ExtractParagraphsWithOptions with the options by
// value.
//
// Deprecated: Use ExtractParagraphsWithOptions(ctx, path, &opts).
func ExtractParagraphsWith(ctx context.Context, path string, opts ExtractOptions) ([]Paragraph, error) {
	return ExtractParagraphsWithOptions(ctx, path, &opts)
}

// ExtractParagraphsWithOptions returns the paragraphs of the document at path, in
// reading order. The extension decides the format, in any case: .pdf,
// .docx, .pptx (slides; PageNum is the slide number), .xlsx, .odt, .ods,
// .odp, .epub, Markdown (.md, .markdown) and plain text (.txt, .text, and a
// file without extension, read as text unless it holds NUL bytes, as
// binary files do). Each format's structure is kept: headings become Heading
// paragraphs and every paragraph's Breadcrumb is its heading path; tables
// give one paragraph per row labelled with the header cells, as
// HTMLToStructuredText does.
//
// Any other extension gives an error wrapping ErrUnsupportedFormat; for
// .doc, .xls, .ppt and .rtf the message names the format and says to
// convert it. Files beyond the readers' limits give an error wrapping
// ErrDocumentTooLarge; unreadable files one wrapping ErrInvalidDocument.
// Every error is a *DocumentError (see there), also when the operating
// system refuses the file; a named pipe or directory is refused without
// being opened. Empty paragraphs are left out.
//
// With o.OCR (o may be nil) it also reads scanned PDFs, the scanned pages
// of mixed PDFs and image files (.png, .jpg, .jpeg, .tif, .tiff) through
// OCR, PageNum being the page (or TIFF page) the text was read on; errors
// are then also *DocumentError values wrapping ErrOCRUnavailable or
// ErrOCRFailed. An image file without o.OCR gives an error wrapping
// ErrUnsupportedFormat and ErrOCRUnavailable. ctx bounds the OCR programs
// it runs (cancelling it stops them); when it ends, its error is returned.
func ExtractParagraphsWithOptions(ctx context.Context, path string, o *ExtractOptions) ([]Paragraph, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var opts ExtractOptions
	if o != nil {
		opts = *o
	}
	ext := strings.ToLower(filepath.Ext(path))
	if !SupportedImageExt(ext) && (ext != ".pdf" || opts.OCR == nil) {
		return extractDocument(path)
	}
	if err := checkDocumentFile(path); err != nil {
		return nil, err
	}
	var paras []Paragraph
	var err error
	switch {
	case SupportedImageExt(ext) && opts.OCR == nil:
		err = &ocrUnsetError{ext: ext}
	case SupportedImageExt(ext):
		paras, err = opts.OCR.readImage(ctx, path)
	default:
		paras, err = extractPDFWithOCR(ctx, path, opts.OCR)
	}
	if err != nil && ctx.Err() == nil {
		return nil, newDocumentError(path, err)
	}
	return paras, err
}

// extractPDFWithOCR is extractPDF reading the pages without a text layer
// through o.
func extractPDFWithOCR(ctx context.Context, path string, o *OCR) ([]Paragraph, error) {
	data, err := readPDFFile(path)
	if err != nil {
		return nil, fmt.Errorf("extract pdf: %w", err)
	}
	paras, err := extractPDFData(data, func(pages []ocrPDFPage, lang string) ([]Paragraph, error) {
		return o.readPDFPages(ctx, path, pages, lang)
	})
	if err != nil {
		return nil, fmt.Errorf("extract pdf %s: %w", path, err)
	}
	return paras, nil
}
