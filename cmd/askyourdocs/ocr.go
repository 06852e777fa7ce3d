package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// cliOCR returns the OCR index and serve read scans and images with:
// tesseract and pdftoppm from PATH, the languages of ASKYOURDOCS_OCR_LANG
// (e.g. "deu+eng"; unset: the document's, else English). Nil when
// tesseract is not installed or ASKYOURDOCS_OCR=off; scans then stay
// "without a text layer" and images are not indexed.
var cliOCR = sync.OnceValue(func() *askyourdocs.OCR {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("ASKYOURDOCS_OCR")), "off") {
		return nil
	}
	o, err := askyourdocs.NewOCR()
	if err != nil {
		return nil
	}
	o.Languages = strings.TrimSpace(os.Getenv("ASKYOURDOCS_OCR_LANG"))
	return o
})

// ocrInstallAdvice says how to install what OCR needs, for doctor and for
// an image named while OCR is not installed.
const ocrInstallAdvice = "install tesseract and poppler-utils, e.g. on Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils (more languages: tesseract-ocr-deu, ...); on macOS: brew install tesseract poppler"

// ocrHint is the advice for a scan that was not OCRed: how to install OCR,
// or nothing when it ran (and found no text).
func ocrHint() string {
	if cliOCR() != nil {
		return ""
	}
	return "install OCR to read scans: apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils (askyourdocs doctor)"
}

// tesseractVersion returns the first line tesseract at path prints for
// --version, e.g. "tesseract 5.3.0" (older releases print it on stderr).
func tesseractVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), nil
}

// doctorOCR adds doctor's OCR line: the tesseract version and languages,
// or how to install it.
func (a *cliApp) doctorOCR(ctx context.Context, rep *doctorReport) {
	if strings.EqualFold(strings.TrimSpace(a.getenv("ASKYOURDOCS_OCR")), "off") {
		rep.add("ocr", "info", "off (ASKYOURDOCS_OCR=off): scanned PDFs and images are not read")
		return
	}
	o, err := askyourdocs.NewOCR()
	if err != nil {
		rep.add("ocr", "warn", "not available: scanned PDFs and images are not read; %s", ocrInstallAdvice)
		return
	}
	v, err := tesseractVersion(ctx, o.Tesseract)
	if err != nil {
		rep.add("ocr", "warn", "tesseract at %s does not run: %v", o.Tesseract, err)
		return
	}
	langs, err := o.InstalledLanguages(ctx)
	if err != nil {
		rep.add("ocr", "warn", "%s: cannot list its languages: %v", v, err)
		return
	}
	detail := fmt.Sprintf("%s, languages %s", v, strings.Join(langs, ", "))
	if want := strings.TrimSpace(a.getenv("ASKYOURDOCS_OCR_LANG")); want != "" {
		detail += fmt.Sprintf(" (ASKYOURDOCS_OCR_LANG=%s)", want)
	}
	if o.Pdftoppm == "" {
		rep.add("ocr", "warn", "%s; pdftoppm not found, so scanned PDFs are not read: apt-get install poppler-utils", detail)
		return
	}
	rep.add("ocr", "ok", "%s: scanned PDFs and .png/.jpg/.tiff images are read", detail)
}
