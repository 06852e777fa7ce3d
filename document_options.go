package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// ExtractOptions configures ExtractParagraphsWith. The zero value reads as
// ExtractParagraphs does.
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

// ExtractParagraphsWithOptions is ExtractParagraphs with options (nil: as
// ExtractParagraphs, with a context): with opts.OCR it also reads scanned PDFs, the scanned pages of mixed PDFs and
// image files through OCR, PageNum being the page (or TIFF page) the text
// was read on. ctx bounds the OCR programs it runs; cancelling it stops
// them. Errors are those of ExtractParagraphs (a *DocumentError) and, with
// OCR, *DocumentError values wrapping ErrOCRUnavailable or ErrOCRFailed;
// ctx's error when it ends. An image file without
// opts.OCR gives an error wrapping ErrUnsupportedFormat and
// ErrOCRUnavailable.
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
		return ExtractParagraphs(path)
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
