package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The sentinels a *DocumentError unwraps to (the OCR ones also those of
// NewOCR); callers test them with errors.Is.
var (
	// ErrInvalidDocument is wrapped by the error ExtractParagraphsWithOptions returns for a
	// file that is not readable as its format: a truncated, corrupt or
	// mislabelled PDF, a .docx, .pptx, .xlsx, OpenDocument or EPUB file that is
	// not a zip archive, lacks a required part or holds malformed XML in a part
	// the reader needs. Panics of the underlying PDF parser become this error.
	ErrInvalidDocument = errors.New("invalid document file")

	// ErrDocumentTooLarge is wrapped by the error ExtractParagraphsWithOptions returns for a
	// document beyond the readers' limits. For the zip-based formats (.docx,
	// .pptx, .xlsx, .odt, .ods, .odp, .epub) one guard applies: more than 10,000
	// entries, more than 1 GiB of declared uncompressed content, or a part that
	// really inflates to more than 128 MiB (256 MiB for all parts read
	// together). The sizes are counted while inflating, so an archive lying
	// about them in its headers is caught too; such files are zip bombs or not
	// documents. One XML token or paragraph of those may hold 16 MiB.
	// Spreadsheets are also capped at 2,000,000 non-empty cells, Markdown,
	// plain text and HTML files at 64 MiB (an HTML token at 16 MiB), and a
	// PDF page at 64 MiB of decoded content streams and 1,048,576
	// characters. docs/formats.md lists every bound.
	ErrDocumentTooLarge = errors.New("document exceeds the size limits")

	// ErrNoText is wrapped by the error ExtractParagraphsWithOptions returns for a readable
	// document that holds no extractable text, such as a scanned PDF without a
	// text layer.
	ErrNoText = errors.New("document has no extractable text")

	// ErrPDFEncrypted is returned (wrapped) by ExtractParagraphsWithOptions for an
	// encrypted PDF that cannot be opened without a password, or whose
	// encryption the reader does not support (AES-256, even with an empty user
	// password). A PDF protected only by an owner password with RC4 or AES-128
	// encryption is read normally.
	ErrPDFEncrypted = errors.New("pdf is encrypted")

	// ErrUnsupportedFormat is wrapped by the error ExtractParagraphsWithOptions returns
	// for a file whose extension it does not read. For the legacy binary Office
	// formats (.doc, .xls, .ppt) and for .rtf the error names the format and
	// says what to convert it to; they are not parsed.
	ErrUnsupportedFormat = errors.New("unsupported document format")

	// ErrOCRUnavailable is wrapped by the errors of OCR when the programs it
	// runs are not installed (tesseract, or pdftoppm for PDFs) or a language it
	// is asked for has no trained data. The message says what to install.
	ErrOCRUnavailable = errors.New("ocr is not available")

	// ErrOCRFailed is wrapped by the errors of OCR when tesseract or pdftoppm
	// ran but failed: a non-zero exit, a page over its time limit, or output
	// over its size limit. The message names the program and the page.
	ErrOCRFailed = errors.New("ocr failed")
)

// DocumentError is the error every document reader returns (ExtractParagraphs,
// FileSource), for a file it could not read: the file itself is broken, too
// large, encrypted, without text or of a format not read, or the operating
// system refused it (permission denied, missing, a named pipe or directory).
//
// Error gives one line, "<Path>: <Reason>". Err is the full cause; it wraps
// one of ErrInvalidDocument, ErrDocumentTooLarge, ErrPDFEncrypted, ErrNoText
// or ErrUnsupportedFormat, or for an operating-system failure the *fs.PathError
// (errors.Is(err, fs.ErrPermission) works). Branch with errors.Is on those,
// and show Reason with errors.As. The type is a plain value: safe to copy
// and to share between goroutines.
type DocumentError struct {
	// Path is the file's path, as the caller gave it.
	Path string
	// Format is the lower-case extension without the dot ("pdf", "docx",
	// "md"), or "text" for a file without extension.
	Format string
	// Reason says in one line what is wrong, for people: "unreadable PDF:
	// the file is truncated (an interrupted download?)".
	Reason string
	// Err is the cause.
	Err error
}

// Error returns "<Path>: <Reason>".
func (e *DocumentError) Error() string {
	return e.Path + ": " + e.Reason
}

// Unwrap returns Err.
func (e *DocumentError) Unwrap() error { return e.Err }

// documentFormat returns DocumentError.Format for path.
func documentFormat(path string) string {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if ext == "" {
		return "text"
	}
	return ext
}

// documentFormatLabel names a format in reasons: "PDF", ".docx file".
func documentFormatLabel(format string) string {
	switch format {
	case "pdf":
		return "PDF"
	case "md", "markdown":
		return "Markdown file"
	case "txt", "text":
		return "text file"
	case "html", "htm", "xhtml":
		return "HTML file"
	}
	return "." + format + " file"
}

// documentErrorCauses are the sentinels a reader's error wraps, with the
// lead of the reason each gives; the first that matches is used.
var documentErrorCauses = []struct {
	sentinel error
	lead     func(label string) string
}{
	{ErrPDFEncrypted, func(string) string { return "encrypted PDF" }},
	{ErrOCRFailed, func(label string) string { return "OCR of the " + label + " failed" }},
	{ErrNoText, func(label string) string {
		if label == "PDF" {
			return "PDF without a text layer"
		}
		return label + " without text"
	}},
	{ErrDocumentTooLarge, func(label string) string { return label + " too large" }},
	{ErrUnsupportedFormat, func(string) string { return "unsupported format" }},
	{ErrInvalidDocument, func(label string) string { return "unreadable " + label }},
	{ErrOCRUnavailable, func(string) string { return "OCR not available" }},
}

// newDocumentError returns err as a *DocumentError for the file at path; an
// error that already holds one is returned as it is, nil gives nil.
func newDocumentError(path string, err error) error {
	if err == nil {
		return nil
	}
	var de *DocumentError
	if errors.As(err, &de) {
		return err
	}
	format := documentFormat(path)
	return &DocumentError{Path: path, Format: format, Reason: documentReason(format, err), Err: err}
}

// documentReason returns the one-line reason for err, a reader's error for
// a file of format.
func documentReason(format string, err error) string {
	label := documentFormatLabel(format)
	for _, c := range documentErrorCauses {
		if errors.Is(err, c.sentinel) {
			if d := detailAfter(err, c.sentinel); d != "" {
				return c.lead(label) + ": " + d
			}
			return c.lead(label)
		}
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.As(err, &pe):
		return pe.Op + ": " + pe.Err.Error()
	}
	return oneLine(err.Error())
}

// detailAfter returns what err's message says after the sentinel's own text
// ("invalid document file: <detail>"): the reader's account of the fault,
// without the wrapping that names the path (DocumentError.Path does).
func detailAfter(err, sentinel error) string {
	msg := err.Error()
	i := strings.Index(msg, sentinel.Error())
	if i < 0 {
		return ""
	}
	d := strings.TrimSpace(strings.TrimPrefix(msg[i+len(sentinel.Error()):], ":"))
	return oneLine(d)
}

// oneLine joins the lines of s with "; " and escapes what else is not
// printable (printableText): a reason is one clean line.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
	}
	return printableText(s)
}

// checkDocumentFile returns a *DocumentError when path cannot be a document
// file: missing, not permitted, not a regular file (a named pipe would
// block the reader, a directory has no content), or on a pseudo
// filesystem (specialFilesystem: /proc/self/environ is a regular file to
// os.Stat). A nil error means the
// readers may open it.
func checkDocumentFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return newDocumentError(path, err)
	}
	if fi.Mode().IsRegular() {
		if special := specialFilesystem(path); special != "" {
			return &DocumentError{Path: path, Format: documentFormat(path), Reason: "on the " + special + " pseudo filesystem, not a document",
				Err: fmt.Errorf("%w: %s lies on the %s pseudo filesystem (process or device state, not a document)", ErrUnsupportedFormat, path, special)}
		}
		return nil
	}
	kind := nonRegularKind(fi.Mode())
	return &DocumentError{Path: path, Format: documentFormat(path), Reason: "not a regular file (" + kind + ")",
		Err: fmt.Errorf("%w: %s is %s, not a regular file", ErrUnsupportedFormat, path, kind)}
}

// nonRegularKind names a file type other than a regular file.
func nonRegularKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
