package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// OCR defaults, used where an OCR field is zero (its field comments say
// the values).
const (
	// defaultOCRDPI is the resolution PDF pages are rendered at.
	defaultOCRDPI = 300
	// defaultOCRMinConfidence is the word confidence (0-100, tesseract's
	// scale) below which a recognised word is dropped as garbage.
	defaultOCRMinConfidence = 40
	// defaultOCRPageTimeout bounds rendering plus recognising one page.
	defaultOCRPageTimeout = 2 * time.Minute
	// defaultOCRMaxPages bounds the pages OCR reads in one document.
	defaultOCRMaxPages = 1000
	// defaultOCRDocumentTimeout bounds all OCR of one document: about twice
	// what 1,000 pages take at 300 dpi on one core.
	defaultOCRDocumentTimeout = 2 * time.Hour
)

// OCR reads text from scanned PDF pages and image files by running the
// tesseract command (and pdftoppm from poppler-utils to render PDF pages),
// never through a shell, each call with a time limit, bounded output and
// its temporary files removed. NewOCR finds the programs; the zero value of
// every other field means its default. An OCR is safe for concurrent use
// once made; do not change its fields while it is in use.
//
// Pass it in ExtractOptions.OCR (or FileSource.OCR): ExtractParagraphsWithOptions
// then reads PDF pages without a text layer and .png, .jpg, .jpeg, .tif and
// .tiff files through it. docs/formats.md describes the output and its
// measured accuracy.
type OCR struct {
	// Tesseract and Pdftoppm are the programs' paths; NewOCR sets them.
	// An empty Pdftoppm means PDFs cannot be OCRed (images still can).
	Tesseract, Pdftoppm string
	// Languages is tesseract's -l argument, e.g. "eng" or "deu+eng". Empty
	// means the document's language when it declares one whose trained
	// data is installed (a PDF's /Lang), else "eng".
	Languages string
	// MinConfidence drops recognised words whose confidence (0-100) is
	// below it; 0 means 40, negative keeps every word.
	MinConfidence float64
	// DPI is the resolution PDF pages are rendered at (0: 300).
	DPI int
	// PageTimeout bounds each page (0: 2 minutes).
	PageTimeout time.Duration
	// MaxPages bounds the pages read per document (0: 1,000);
	// a document needing more gives an error wrapping ErrDocumentTooLarge.
	MaxPages int
	// DocumentTimeout bounds all OCR of one document, its pages together
	// (0: 2 hours); a document needing longer gives an error wrapping
	// ErrDocumentTooLarge. A multi-page TIFF gets PageTimeout per page
	// within it.
	DocumentTimeout time.Duration

	langsOnce sync.Once
	langs     map[string]bool
	langsErr  error
}

// NewOCR returns an OCR using the tesseract and pdftoppm found in PATH, or
// an error wrapping ErrOCRUnavailable when tesseract is not there (whose
// message says how to install it). A missing pdftoppm is not an error: the OCR
// then reads images only, and PDFs give ErrOCRUnavailable when used.
func NewOCR() (*OCR, error) {
	t, err := exec.LookPath("tesseract")
	if err != nil {
		return nil, fmt.Errorf("%w: tesseract not found in PATH: %s", ErrOCRUnavailable, ocrInstallAdvice())
	}
	o := &OCR{Tesseract: t}
	if p, err := exec.LookPath("pdftoppm"); err == nil {
		o.Pdftoppm = p
	}
	return o, nil
}

// ocrInstallAdvice returns one line saying how to install what OCR needs,
// for the messages of ErrOCRUnavailable.
func ocrInstallAdvice() string {
	return "install tesseract and poppler-utils, e.g. on Debian/Ubuntu: apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils (more languages: tesseract-ocr-deu, ...); on macOS: brew install tesseract poppler"
}

// Limits on what the programs may write: tesseract's TSV of one page, and
// anything on standard error (kept for the error message).
const (
	ocrMaxTSVBytes    = 16 << 20
	ocrMaxStderrBytes = 16 << 10
	// ocrMaxPixels bounds an image (or a rendered page) handed to tesseract.
	ocrMaxPixels = 120_000_000
)

func (o *OCR) dpi() int {
	if o.DPI > 0 {
		return o.DPI
	}
	return defaultOCRDPI
}

func (o *OCR) minConfidence() float64 {
	if o.MinConfidence == 0 {
		return defaultOCRMinConfidence
	}
	return o.MinConfidence
}

func (o *OCR) pageTimeout() time.Duration {
	if o.PageTimeout > 0 {
		return o.PageTimeout
	}
	return defaultOCRPageTimeout
}

func (o *OCR) documentTimeout() time.Duration {
	if o.DocumentTimeout > 0 {
		return o.DocumentTimeout
	}
	return defaultOCRDocumentTimeout
}

// documentBudget returns ctx bounded by DocumentTimeout, its cancel
// function, and a function that turns the error of an OCR step ended by
// that bound (not by ctx) into one wrapping ErrDocumentTooLarge.
func (o *OCR) documentBudget(ctx context.Context) (context.Context, context.CancelFunc, func(error) error) {
	d := o.documentTimeout()
	dctx, cancel := context.WithTimeout(ctx, d)
	return dctx, cancel, func(err error) error {
		if err != nil && ctx.Err() == nil && errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: OCR took longer than %s (OCR.DocumentTimeout)", ErrDocumentTooLarge, d)
		}
		return err
	}
}

func (o *OCR) maxPages() int {
	if o.MaxPages > 0 {
		return o.MaxPages
	}
	return defaultOCRMaxPages
}

// InstalledLanguages returns the languages tesseract has trained data for
// (`tesseract --list-langs`), without "osd", in its order.
func (o *OCR) InstalledLanguages(ctx context.Context) ([]string, error) {
	out, err := o.run(ctx, 20*time.Second, o.Tesseract, "--list-langs")
	if err != nil {
		return nil, err
	}
	var langs []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "osd" || strings.Contains(line, " ") {
			continue // the "List of available languages ..." header
		}
		langs = append(langs, line)
	}
	return langs, nil
}

// installed reports the installed languages, asking tesseract once.
func (o *OCR) installed(ctx context.Context) (map[string]bool, error) {
	o.langsOnce.Do(func() {
		langs, err := o.InstalledLanguages(ctx)
		if err != nil {
			o.langsErr = err
			return
		}
		o.langs = map[string]bool{}
		for _, l := range langs {
			o.langs[l] = true
		}
	})
	return o.langs, o.langsErr
}

// languages returns the -l argument for a document declaring docLang (a
// BCP 47 tag such as "de-DE", or ""): Languages when set (every language
// in it must be installed), else the document's language when installed,
// else "eng".
func (o *OCR) languages(ctx context.Context, docLang string) (string, error) {
	have, err := o.installed(ctx)
	if err != nil {
		return "", err
	}
	if o.Languages != "" {
		for _, l := range strings.Split(o.Languages, "+") {
			if !have[l] {
				return "", fmt.Errorf("%w: no trained data for OCR language %q (install tesseract-ocr-%s)", ErrOCRUnavailable, l, strings.ReplaceAll(strings.ToLower(l), "_", "-"))
			}
		}
		return o.Languages, nil
	}
	if l := tesseractLang(docLang); l != "" && have[l] {
		return l, nil
	}
	if !have["eng"] {
		return "", fmt.Errorf("%w: no trained data for English (install tesseract-ocr-eng) and no language given", ErrOCRUnavailable)
	}
	return "eng", nil
}

// tesseractLang maps a BCP 47 tag's primary language to tesseract's
// trained-data name, "" for languages not listed.
func tesseractLang(tag string) string {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	primary, _, _ = strings.Cut(primary, "_")
	return map[string]string{
		"en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "pt": "por", "nl": "nld",
		"da": "dan", "sv": "swe", "nb": "nor", "no": "nor", "fi": "fin", "pl": "pol", "cs": "ces",
		"sk": "slk", "sl": "slv", "hu": "hun", "ro": "ron", "hr": "hrv", "el": "ell", "ru": "rus",
		"uk": "ukr", "bg": "bul", "tr": "tur", "et": "est", "lv": "lav", "lt": "lit", "ca": "cat",
		"ja": "jpn", "zh": "chi_sim", "ko": "kor", "ar": "ara", "he": "heb", "hi": "hin",
	}[primary]
}

// boundedBuffer keeps at most max bytes and remembers whether more came.
type boundedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil // keep draining so the program does not block
	}
	return b.buf.Write(p)
}

// run runs prog with args (no shell) under timeout and returns its
// standard output, at most ocrMaxTSVBytes. Errors wrap ErrOCRFailed (or the
// context's error when ctx ended) and quote standard error.
func (o *OCR) run(ctx context.Context, timeout time.Duration, prog string, args ...string) ([]byte, error) {
	if prog == "" {
		return nil, fmt.Errorf("%w: %s", ErrOCRUnavailable, ocrInstallAdvice())
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, prog, args...)
	stdout := &boundedBuffer{max: ocrMaxTSVBytes}
	stderr := &boundedBuffer{max: ocrMaxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// One thread per page: tesseract's OpenMP threads only spin on a busy
	// machine (about 5x slower measured on 2 shared cores).
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	name := prog[strings.LastIndexByte(prog, os.PathSeparator)+1:]
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case rctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s did not finish within %s", ErrOCRFailed, name, timeout)
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s: %w: %s", ErrOCRUnavailable, name, err, ocrInstallAdvice())
	case err != nil:
		msg := strings.TrimSpace(stderr.buf.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = strings.TrimSpace(msg[i+1:]) // the last line says what failed
		}
		return nil, fmt.Errorf("%w: %s: %w: %s", ErrOCRFailed, name, err, msg)
	case stdout.over:
		return nil, fmt.Errorf("%w: %s wrote more than %d bytes", ErrOCRFailed, name, ocrMaxTSVBytes)
	}
	return stdout.buf.Bytes(), nil
}
