package engine

// ocrUnsetError is the error for an image file given to
// ExtractParagraphsWithOptions without ExtractOptions.OCR: OCR was not set, which
// is not NewOCR's "not available", so the message says what to set while
// errors.Is still finds ErrUnsupportedFormat and ErrOCRUnavailable.
type ocrUnsetError struct {
	ext string // the file's extension, with the dot
}

// Error starts with ErrUnsupportedFormat's text, so a DocumentError's
// Reason reads "unsupported format: <what to do>".
func (e *ocrUnsetError) Error() string {
	return ErrUnsupportedFormat.Error() + ": an image (" + e.ext + ") is read only through OCR, and none is set: " +
		"set ExtractOptions.OCR (e.g. from NewOCR) to read it"
}

// Unwrap returns the sentinels the error stands for.
func (e *ocrUnsetError) Unwrap() []error {
	return []error{ErrUnsupportedFormat, ErrOCRUnavailable}
}
