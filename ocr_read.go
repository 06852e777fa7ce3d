package engine

import (
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of .jpg scans
	_ "image/png"  // DecodeConfig of .png scans
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxImageFileBytes bounds an image file handed to OCR.
const maxImageFileBytes = 64 << 20

// imageExts are the image formats OCR reads.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".tif": true, ".tiff": true}

// SupportedImageExt reports whether ExtractParagraphsWithOptions reads files with
// the extension ext (with the dot, in any case) through OCR: .png, .jpg,
// .jpeg, .tif and .tiff. Without an OCR they give an error wrapping
// ErrUnsupportedFormat and ErrOCRUnavailable.
func SupportedImageExt(ext string) bool {
	return imageExts[strings.ToLower(ext)]
}

// readImage returns the paragraphs tesseract reads in the image file at
// path (.png, .jpg, .jpeg, .tif, .tiff; every page of a multi-page TIFF,
// PageNum counting them from 1). Headings are guessed from the text size.
// Errors wrap ErrOCRUnavailable, ErrOCRFailed, ErrDocumentTooLarge (over 64
// MiB, 120 megapixels per page, MaxPages or DocumentTimeout) or
// ErrInvalidDocument (not a readable image).
func (o *OCR) readImage(ctx context.Context, path string) ([]Paragraph, error) {
	pages, err := o.checkImage(path)
	if err != nil {
		return nil, fmt.Errorf("ocr %s: %w", path, err)
	}
	lang, err := o.languages(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("ocr %s: %w", path, err)
	}
	arg := path
	if strings.HasPrefix(arg, "-") {
		arg = "." + string(os.PathSeparator) + arg // not an option
	}
	// A multi-page TIFF takes a page's time per page, within the
	// document's budget.
	timeout := o.pageTimeout() * time.Duration(pages)
	if timeout <= 0 || timeout > o.documentTimeout() {
		timeout = o.documentTimeout() // also a product past Duration's range
	}
	dctx, cancel, budget := o.documentBudget(ctx)
	defer cancel()
	tsv, err := o.run(dctx, timeout, o.Tesseract, arg, "stdout", "-l", lang, "--psm", "3", "tsv")
	if err = budget(err); err != nil {
		return nil, fmt.Errorf("ocr %s: %w", path, err)
	}
	words := ocrParseTSV(tsv)
	if n := lastPage(words); n > o.maxPages() {
		return nil, fmt.Errorf("ocr %s: %w: %d pages, more than the OCR limit of %d", path, ErrDocumentTooLarge, n, o.maxPages())
	}
	return ocrParagraphs(ocrGroup(words, o.minConfidence()), &ocrHeadingStack{}, nil), nil
}

func lastPage(words []ocrWord) int {
	n := 0
	for _, w := range words {
		n = max(n, w.page)
	}
	return n
}

// checkImage bounds an image file before tesseract sees it: its size, its
// pixel count (a small file can declare a huge canvas) and, for a TIFF,
// its number of pages, each page's pixels counted. It returns the number
// of pages (1 but for a TIFF).
func (o *OCR) checkImage(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() > maxImageFileBytes {
		return 0, fmt.Errorf("%w: image of %d bytes, more than %d", ErrDocumentTooLarge, st.Size(), maxImageFileBytes)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg":
		cfg, _, err := image.DecodeConfig(f)
		if err != nil {
			return 0, fmt.Errorf("%w: not a readable image: %w", ErrInvalidDocument, err)
		}
		if px := int64(cfg.Width) * int64(cfg.Height); px > ocrMaxPixels {
			return 0, fmt.Errorf("%w: image of %dx%d pixels, more than %d", ErrDocumentTooLarge, cfg.Width, cfg.Height, ocrMaxPixels)
		}
	case ".tif", ".tiff":
		pages, err := tiffPageSizes(f, st.Size(), o.maxPages())
		if err != nil {
			return 0, fmt.Errorf("%w: not a readable image: %w", ErrInvalidDocument, err)
		}
		if len(pages) > o.maxPages() {
			return 0, fmt.Errorf("%w: more than the OCR limit of %d pages", ErrDocumentTooLarge, o.maxPages())
		}
		for i, p := range pages {
			if p.width > ocrMaxPixels || p.height > ocrMaxPixels || p.width*p.height > ocrMaxPixels {
				return 0, fmt.Errorf("%w: page %d of %dx%d pixels, more than %d", ErrDocumentTooLarge, i+1, p.width, p.height, ocrMaxPixels)
			}
		}
		return len(pages), nil
	}
	return 1, nil
}

// ocrMinDPI is the lowest resolution a PDF page is rendered at for OCR.
const ocrMinDPI = 36

// ocrRenderDPI returns the resolution to render a page of w x h points at:
// dpi, lowered in steps of a quarter while the bitmap would exceed
// ocrMaxPixels (a huge page box would render a huge bitmap). A page too
// large even at ocrMinDPI gives an error wrapping ErrDocumentTooLarge.
func ocrRenderDPI(dpi int, w, h float64) (int, error) {
	px := func(d int) float64 { return w * h * float64(d) * float64(d) / (72 * 72) }
	for dpi > ocrMinDPI && px(dpi) > ocrMaxPixels {
		dpi = max(ocrMinDPI, dpi*3/4)
	}
	if p := px(dpi); p > ocrMaxPixels || math.IsNaN(p) {
		return 0, fmt.Errorf("%w: a page of %.0f x %.0f points is over %d pixels even at %d dpi", ErrDocumentTooLarge, w, h, ocrMaxPixels, dpi)
	}
	return dpi, nil
}

// ocrPDFPage is a PDF page to OCR: its 1-based number and size in points.
type ocrPDFPage struct {
	num           int
	width, height float64
}

// readPDFPages renders each page of the PDF file at path with pdftoppm and
// reads it with tesseract, returning the paragraphs in page order. docLang
// is the PDF's /Lang ("" when absent). The rendered images live in a
// temporary directory removed before it returns.
func (o *OCR) readPDFPages(ctx context.Context, path string, pages []ocrPDFPage, docLang string) ([]Paragraph, error) {
	if o.Pdftoppm == "" {
		return nil, fmt.Errorf("%w: pdftoppm (poppler-utils) not found in PATH: %s", ErrOCRUnavailable, ocrInstallAdvice())
	}
	if len(pages) > o.maxPages() {
		return nil, fmt.Errorf("%w: %d pages without a text layer, more than the OCR limit of %d", ErrDocumentTooLarge, len(pages), o.maxPages())
	}
	lang, err := o.languages(ctx, docLang)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "askyourdocs-ocr-")
	if err != nil {
		return nil, fmt.Errorf("ocr: %w", err)
	}
	defer os.RemoveAll(dir)
	arg := path
	if strings.HasPrefix(arg, "-") {
		arg = "." + string(os.PathSeparator) + arg
	}
	dctx, cancel, budget := o.documentBudget(ctx)
	defer cancel()
	stack := &ocrHeadingStack{}
	var out []Paragraph
	for _, pg := range pages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		paras, err := o.readPDFPage(dctx, arg, dir, pg, lang, stack)
		if err = budget(err); err != nil {
			return nil, fmt.Errorf("page %d: %w", pg.num, err)
		}
		out = append(out, paras...)
	}
	return out, nil
}

// readPDFPage renders and reads one page (see readPDFPages).
func (o *OCR) readPDFPage(ctx context.Context, pdfPath, dir string, pg ocrPDFPage, lang string, stack *ocrHeadingStack) ([]Paragraph, error) {
	dpi, err := ocrRenderDPI(o.dpi(), pg.width, pg.height)
	if err != nil {
		return nil, err
	}
	n := strconv.Itoa(pg.num)
	prefix := filepath.Join(dir, "page")
	if _, err := o.run(ctx, o.pageTimeout(), o.Pdftoppm, "-f", n, "-l", n, "-r", strconv.Itoa(dpi), "-gray", "-png", "-singlefile", pdfPath, prefix); err != nil {
		return nil, err
	}
	img := prefix + ".png"
	defer os.Remove(img)
	tsv, err := o.run(ctx, o.pageTimeout(), o.Tesseract, img, "stdout", "-l", lang, "--dpi", strconv.Itoa(dpi), "--psm", "3", "tsv")
	if err != nil {
		return nil, err
	}
	return ocrParagraphs(ocrGroup(ocrParseTSV(tsv), o.minConfidence()), stack, func(int) int { return pg.num }), nil
}
