package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"

	"github.com/ledongthuc/pdf"
)

// ErrPDFNoText is the name ErrNoText had when only PDFs could lack text;
// it is the same error value.
//
// Deprecated: Use ErrNoText.
var ErrPDFNoText = ErrNoText

// ErrPDFMalformed is the name ErrInvalidDocument had for PDFs (truncated,
// corrupt or not a PDF at all); it is the same error value.
//
// Deprecated: Use ErrInvalidDocument.
var ErrPDFMalformed = ErrInvalidDocument

// extractPDF returns the paragraphs of the PDF file at path; see
// extractPDFBytes.
func extractPDF(path string) ([]Paragraph, error) {
	data, err := readPDFFile(path)
	if err != nil {
		return nil, fmt.Errorf("extract pdf: %w", err)
	}
	paras, err := extractPDFBytes(data)
	if err != nil {
		return nil, fmt.Errorf("extract pdf %s: %w", path, err)
	}
	return paras, nil
}

// readPDFFile returns the content of the PDF file at path, which the
// reader needs whole; a file that does not start like a PDF is refused
// after reading its first bytes (a large file of something else costs
// nothing).
func readPDFFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 5)
	if n, _ := io.ReadFull(f, head); !bytes.Equal(head[:n], []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: not a PDF file (no %%PDF- header)", ErrInvalidDocument)
	}
	return os.ReadFile(path)
}

// extractPDFBytes returns the paragraphs of the PDF document in data, in
// reading order, with headings marked and breadcrumbs filled. Errors wrap
// ErrPDFEncrypted, ErrNoText or ErrInvalidDocument. It never panics.
func extractPDFBytes(data []byte) (paras []Paragraph, err error) {
	return extractPDFData(data, nil)
}

// pdfOCRFunc reads the given pages of the PDF being extracted through OCR;
// lang is the document's /Lang ("" when absent).
type pdfOCRFunc func(pages []ocrPDFPage, lang string) ([]Paragraph, error)

// extractPDFData is extractPDFBytes that, with ocr set, reads the pages
// without a text layer through ocr (see pdfNeedsOCR) and merges their
// paragraphs in page order with those of the other pages.
func extractPDFData(data []byte, ocr pdfOCRFunc) (paras []Paragraph, err error) {
	defer func() {
		if r := recover(); r != nil {
			paras, err = nil, fmt.Errorf("%w: %v", ErrInvalidDocument, r)
		}
	}()
	r, err := pdfOpen(data)
	if err != nil {
		return nil, err
	}
	pages, err := pdfPageList(r)
	if err != nil {
		return nil, err
	}
	fonts := &pdfFontCache{byKey: map[string]*pdfFont{}, byRes: map[string]*pdfFont{}}
	doc := make([]pdfPageLines, len(pages))
	counts := make([]int, len(pages)) // glyphs per page
	var firstErr error
	failed, glyphs, text := 0, 0, 0
	run := &pdfPageRun{fonts: fonts}
	for i, pg := range pages {
		run.glyphs, run.rules, run.forms = run.glyphs[:0], nil, 0
		run.left, run.err = pdfMaxStreamBytes, nil
		lines, rules, n, perr := pdfReadPage(pg, run)
		if errors.Is(perr, ErrDocumentTooLarge) {
			return nil, fmt.Errorf("page %d: %w", i+1, perr)
		}
		for _, l := range lines {
			text += len(l.text)
		}
		if text > maxDocumentTextBytes {
			return nil, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes)
		}
		doc[i] = pdfPageLines{lines: lines, rules: rules, height: pg.height()}
		glyphs += n
		counts[i] = n
		if perr != nil {
			failed++
			if firstErr == nil {
				firstErr = fmt.Errorf("page %d: %w", i+1, perr)
			}
		}
	}
	if ocr != nil && !(glyphs == 0 && failed > 0) {
		if scanned := pdfScannedPages(pages, doc, counts); len(scanned) > 0 {
			return pdfWithOCR(doc, scanned, ocr, r.Trailer().Key("Root").Key("Lang").Text())
		}
	}
	if glyphs == 0 {
		if failed > 0 {
			return nil, fmt.Errorf("%w: no page could be read (%d of %d failed): %w", ErrInvalidDocument, failed, len(pages), firstErr)
		}
		return nil, fmt.Errorf("%w: %d page(s) without text (scanned or image-only?)", ErrNoText, len(pages))
	}
	if failed > 0 {
		slog.Warn("pdf: pages read incompletely, keeping the text read before the failure",
			"pages", failed, "of", len(pages), "first", firstErr.Error())
	}
	if err := pdfUndecodable(run.shown, run.undecoded); err != nil {
		return nil, err
	}
	paras = pdfParagraphs(doc)
	if len(paras) == 0 {
		return nil, fmt.Errorf("%w: only page furniture (headers, footers, page numbers) found", ErrNoText)
	}
	return paras, nil
}

// pdfOpen opens data with ledongthuc/pdf, classifying failures.
func pdfOpen(data []byte) (r *pdf.Reader, err error) {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: not a PDF file (no %%PDF- header)", ErrInvalidDocument)
	}
	// The reader only accepts "%PDF-1.x" headers; PDF 2.0 files share the
	// syntax it reads, so present them as 1.7.
	if bytes.HasPrefix(data, []byte("%PDF-2.")) {
		data = append([]byte("%PDF-1.7"), data[8:]...)
	}
	data = pdfTrimAfterEOF(data)
	if err := pdfPreflight(data); err != nil {
		return nil, err
	}
	func() {
		defer func() {
			if x := recover(); x != nil {
				r, err = nil, parserError{fmt.Errorf("%v", x)}
			}
		}()
		r, err = pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	}()
	if err == nil {
		if err := pdfCheckObjectStreams(r, data); err != nil {
			return nil, err
		}
		return r, nil
	}
	encrypted := bytes.Contains(data, []byte("/Encrypt"))
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return nil, fmt.Errorf("%w: a password is needed to open it", ErrPDFEncrypted)
	case encrypted && strings.Contains(err.Error(), "encrypt"):
		return nil, fmt.Errorf("%w: the reader does not support its encryption (AES-256 needs a decrypted copy): %w", ErrPDFEncrypted, parserError{err})
	case strings.Contains(err.Error(), "%%EOF") || strings.Contains(err.Error(), "startxref"):
		// The parser's own words ("missing %%EOF") mean nothing to a
		// reader; say what they mean.
		return nil, fmt.Errorf("%w: the file is truncated (no end-of-file marker; an interrupted download or copy?)", ErrInvalidDocument)
	}
	return nil, fmt.Errorf("%w: %w", ErrInvalidDocument, parserError{err})
}

// pdfPage is one leaf of the page tree with its inherited attributes.
type pdfPage struct {
	v   pdf.Value
	res pdf.Value
	box pdf.Value
	// resLoop is set when the page's own or inherited /Resources could not
	// be resolved (a reference cycle); the page is then skipped.
	resLoop bool
}

// errPDFResourcesLoop is the page error for a page whose resources are
// caught in a reference cycle.
var errPDFResourcesLoop = fmt.Errorf("%w: its resources loop (/Resources refers back to itself through references, or to a reference of a reference, which cannot be read)", ErrInvalidDocument)

// pdfResources returns node's /Resources dictionary; ok is false when
// resolving it failed (the parser panics on a reference that leads to
// another bare reference, as in a cycle).
func pdfResources(node pdf.Value) (res pdf.Value, ok bool) {
	defer func() {
		if recover() != nil {
			res, ok = pdf.Value{}, false
		}
	}()
	return node.Key("Resources"), true
}

// width and height return the page's size in points from its media box
// (612 x 792 when absent or empty). The box's corners may come in any
// order, as readers normalise them (a box [40000 0 0 792] is 40000 wide).
func (pg pdfPage) width() float64  { return pg.boxSide(0, 2, 612) }
func (pg pdfPage) height() float64 { return pg.boxSide(1, 3, 792) }

// boxSide returns |box[hi] - box[lo]|, or def without a finite non-zero
// one.
func (pg pdfPage) boxSide(lo, hi int, def float64) float64 {
	if pg.box.Len() == 4 {
		if d := math.Abs(pg.box.Index(hi).Float64() - pg.box.Index(lo).Float64()); d > 0 && !math.IsInf(d, 0) {
			return d
		}
	}
	return def
}

// pdfMaxPageTreeNodes bounds the page-tree walk (cyclic or huge trees).
const pdfMaxPageTreeNodes = 1 << 18

// pdfPageList walks the page tree and returns the pages in order.
func pdfPageList(r *pdf.Reader) ([]pdfPage, error) {
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return nil, fmt.Errorf("%w: no page tree", ErrInvalidDocument)
	}
	var pages []pdfPage
	seen := map[string]bool{}
	budget := pdfMaxPageTreeNodes
	var walk func(node, res, box pdf.Value, resLoop bool, depth int)
	walk = func(node, res, box pdf.Value, resLoop bool, depth int) {
		budget--
		if budget < 0 || depth > 64 || node.Kind() != pdf.Dict {
			return
		}
		if v, ok := pdfResources(node); !ok {
			res, resLoop = pdf.Value{}, true
		} else if v.Kind() == pdf.Dict {
			res, resLoop = v, false
		}
		if v := node.Key("MediaBox"); v.Len() == 4 {
			box = v
		}
		kids := node.Key("Kids")
		if kids.Kind() == pdf.Array && node.Key("Type").Name() != "Page" {
			key := node.String()
			if seen[key] {
				return
			}
			seen[key] = true
			for i := 0; i < kids.Len() && budget > 0; i++ {
				walk(kids.Index(i), res, box, resLoop, depth+1)
			}
			return
		}
		pages = append(pages, pdfPage{v: node, res: res, box: box, resLoop: resLoop})
	}
	walk(root, pdf.Value{}, pdf.Value{}, false, 0)
	if len(pages) == 0 {
		return nil, fmt.Errorf("%w: the page tree holds no pages", ErrInvalidDocument)
	}
	return pages, nil
}

// pdfReadPage interprets one page and lays out its lines. It returns the
// number of glyphs found; err reports a page that could not be read fully
// (what was read before the failure is kept).
func pdfReadPage(pg pdfPage, run *pdfPageRun) (lines []pdfLine, rules []pdfRule, glyphs int, err error) {
	if pg.resLoop {
		return nil, nil, 0, errPDFResourcesLoop
	}
	func() {
		defer func() {
			if x := recover(); x != nil {
				err = fmt.Errorf("%w: %v", ErrInvalidDocument, x)
			}
		}()
		contents := pg.v.Key("Contents")
		var data []byte
		switch contents.Kind() {
		case pdf.Stream:
			data, err = run.stream(contents)
		case pdf.Array:
			for i := 0; i < contents.Len() && run.err == nil; i++ {
				part, perr := run.stream(contents.Index(i))
				if perr != nil && err == nil {
					err = perr
				}
				data = append(data, part...)
				data = append(data, '\n')
			}
		}
		gs := pdfGState{ctm: pdfIdentity, th: 1}
		run.run(data, pg.res, gs, 0)
	}()
	if run.err != nil {
		return nil, nil, 0, run.err
	}
	for _, g := range run.glyphs {
		if !g.space {
			glyphs++
		}
	}
	return pdfLayoutPage(run.glyphs, run.rules), run.rules, glyphs, err
}

// pdfUndecodableShare is the share of a document's character codes
// without text past which pdfUndecodable refuses it; pdfUndecodableWarn
// the share past which it is logged.
const (
	pdfUndecodableShare = 0.8
	pdfUndecodableWarn  = 0.2
	pdfUndecodableMin   = 50 // fewer undecodable codes are never refused
)

// pdfUndecodable judges a document of which shown character codes were
// drawn in a font and undecoded had no text (a CID font without a
// ToUnicode map in an encoding not read here, a symbolic font without
// glyph names): mostly undecodable is an error wrapping ErrNoText that
// says so, since what decodes is then digits and punctuation around
// missing words; a fifth or more is logged at Warn.
func pdfUndecodable(shown, undecoded int) error {
	if shown == 0 || undecoded == 0 {
		return nil
	}
	share := float64(undecoded) / float64(shown)
	if undecoded >= pdfUndecodableMin && share >= pdfUndecodableShare {
		return fmt.Errorf("%w: %d of %d characters could not be decoded (fonts without a ToUnicode map in an encoding "+
			"not supported here); the text would be mostly missing", ErrNoText, undecoded, shown)
	}
	if share >= pdfUndecodableWarn {
		slog.Warn("pdf: characters without text (fonts without a ToUnicode map), kept what decoded",
			"undecoded", undecoded, "of", shown)
	}
	return nil
}
