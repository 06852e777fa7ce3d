package engine

import (
	"fmt"

	"github.com/ledongthuc/pdf"
)

// pdfOCRGlyphs is the number of glyphs under which a page that draws an
// image is taken for a scan: a scanned page often carries a stamped page
// number, Bates number or a one-line header as real text.
const pdfOCRGlyphs = 32

// pdfScannedPages returns the pages to OCR: those without a glyph, and
// those with fewer than pdfOCRGlyphs glyphs whose resources hold an image.
func pdfScannedPages(pages []pdfPage, doc []pdfPageLines, counts []int) []ocrPDFPage {
	var out []ocrPDFPage
	for i, pg := range pages {
		if counts[i] > 0 && (counts[i] >= pdfOCRGlyphs || !pdfHasImage(pg.res)) {
			continue
		}
		out = append(out, ocrPDFPage{num: i + 1, width: pg.width(), height: pg.height()})
	}
	return out
}

// pdfHasImage reports whether a page's resources name an image XObject.
func pdfHasImage(res pdf.Value) bool {
	xo := res.Key("XObject")
	if xo.Kind() != pdf.Dict {
		return false
	}
	for _, k := range xo.Keys() {
		if xo.Key(k).Key("Subtype").Name() == "Image" {
			return true
		}
	}
	return false
}

// pdfWithOCR returns the paragraphs of a PDF some of whose pages (scanned)
// are read through ocr: the text-layer pages as usual, the scanned pages'
// OCR paragraphs in their place. An OCR paragraph outside any OCR heading
// takes the breadcrumb of the paragraph before it.
func pdfWithOCR(doc []pdfPageLines, scanned []ocrPDFPage, ocr pdfOCRFunc, lang string) ([]Paragraph, error) {
	for _, pg := range scanned {
		doc[pg.num-1].lines, doc[pg.num-1].rules = nil, nil
	}
	var text []Paragraph
	if len(scanned) < len(doc) {
		text = pdfParagraphs(doc)
	}
	ocrParas, err := ocr(scanned, lang)
	if err != nil {
		return nil, err
	}
	if len(text)+len(ocrParas) == 0 {
		return nil, fmt.Errorf("%w: %d page(s) without a text layer and OCR found no text on them", ErrNoText, len(scanned))
	}
	out := make([]Paragraph, 0, len(text)+len(ocrParas))
	i, j := 0, 0
	for i < len(text) || j < len(ocrParas) {
		if j == len(ocrParas) || (i < len(text) && text[i].PageNum <= ocrParas[j].PageNum) {
			out = append(out, text[i])
			i++
			continue
		}
		p := ocrParas[j]
		if p.Breadcrumb == "" && len(out) > 0 {
			p.Breadcrumb = out[len(out)-1].Breadcrumb
		}
		out = append(out, p)
		j++
	}
	return out, nil
}
