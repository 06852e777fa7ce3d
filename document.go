package engine

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Paragraph is one block of text extracted from a document or web page, in
// reading order. ExtractParagraphs and HTMLToStructuredText produce them;
// BuildChunks groups them into chunks.
type Paragraph struct {
	// Text is the paragraph's text with whitespace normalised (see
	// NormalizeSpaces). A table row is one paragraph, a list item carries its
	// marker ("- " or "1. ") in front.
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
//
// A chunk never spans two sections: a section starts at a heading (a run of
// headings with no text between them counts as one, so a heading always
// stays with the text that follows it) and, for sources without heading
// paragraphs, wherever the paragraphs' Breadcrumb changes.
type Chunk struct {
	// Text is the chunk's text: whole words of the section's paragraphs, in
	// order, words separated by one space and paragraphs by one newline
	// ("\n"). It holds at most BuildChunks' maxSize characters (runes) and
	// starts with up to overlapSize characters of the previous chunk of the
	// same section. The first chunk of a section starts with the section's
	// heading line(s). Index this text for embedding.
	Text string
	// ParentText is the text around the chunk, for the language model at
	// answer time: a window of whole words of up to max(2*maxSize, 3000)
	// characters containing Text, centred on it where possible and bounded by
	// the section (it never reaches into the previous or next section; a
	// short section is its own ParentText, heading included). It contains
	// Text as a substring, and equals Text when Text alone is that long.
	ParentText string
	// Pages is the page range of the chunk's ParentText window, what an
	// answer is drawn from (docs/compat.md): "3" or "3-4"
	// (lowest and highest non-zero Paragraph.PageNum of the paragraphs the
	// window lies on); "" when the source has no pages.
	Pages string
	// Section is the nearest heading: the text of the heading the chunk's
	// section starts with (the last one of a run of headings); for a section
	// without a heading paragraph, the last element of Breadcrumb; "" before
	// the first heading.
	Section string
	// Top is a short label of the chunk's top-level heading (the first
	// element of Breadcrumb): "TOP 7" for "TOP 7 Ein Antrag", "TOP N2" for
	// "TOP N2 Honorarprofessur", "TOP N1" for "N1. Antrag", "§ 12" for
	// "§ 12 Modulabschluss", "A" for "A. Allgemeine Regelungen", "II" for
	// "II. Modulabschluss"; "" for other headings ("1. Begrüßung"), for
	// in-text cross-references that merely start like one ("§ 54 Absatz 6
	// ThürHG anwesend sein.") and when Breadcrumb is empty.
	Top string
	// Breadcrumb is the heading path of the chunk's section, joined with
	// " > " (the Breadcrumb of the section's heading, which includes the
	// heading itself; for a section without a heading, that of its first
	// paragraph).
	Breadcrumb string
	// Headings holds, one per line, the headings inside the chunk's text
	// that Breadcrumb does not name: those of small sections BuildChunks
	// merged into a neighbour (whose breadcrumb then names their common
	// parent, or the large section they joined); "" when there are none.
	// FileSource stores it as MetaHeadings, and keyword ranking weighs
	// these words as it weighs the breadcrumb's, so a merged section is
	// still found by its heading.
	Headings string
	// URL is left empty by BuildChunks; callers set it to the page URL or
	// file path the chunk came from.
	URL string
}

// documentReaders maps each extension ExtractParagraphs reads to its
// reader: a whole-file reader for text formats, a zip reader otherwise.
var documentReaders = map[string]struct {
	text func([]byte) ([]Paragraph, error)
	zip  func(io.ReaderAt, int64) ([]Paragraph, error)
}{
	".md":       {text: extractMarkdown},
	".markdown": {text: extractMarkdown},
	".txt":      {text: extractText},
	".text":     {text: extractText},
	".pptx":     {zip: extractPptx},
	".xlsx":     {zip: extractXlsx},
	".odt":      {zip: extractODF},
	".ods":      {zip: extractODF},
	".odp":      {zip: extractODF},
	".epub":     {zip: extractEpub},
}

// legacyFormats names the formats ExtractParagraphsWithOptions refuses with advice.
var legacyFormats = map[string]string{
	".doc": "legacy binary Word document (.doc): convert it to .docx or .odt, e.g. with LibreOffice: soffice --headless --convert-to docx",
	".xls": "legacy binary Excel workbook (.xls): convert it to .xlsx or .ods, e.g. with LibreOffice: soffice --headless --convert-to xlsx",
	".ppt": "legacy binary PowerPoint presentation (.ppt): convert it to .pptx or .odp, e.g. with LibreOffice: soffice --headless --convert-to pptx",
	".rtf": "Rich Text Format (.rtf): convert it to .docx or .odt, e.g. with LibreOffice: soffice --headless --convert-to docx",
}

// legacyFormatAdvice returns, for an extension (with the dot, in any case)
// of a legacy format ExtractParagraphsWithOptions refuses (.doc, .xls, .ppt, .rtf),
// what the format is and how to convert it, the text its
// ErrUnsupportedFormat error carries (the DocumentError's Reason); "" for
// any other extension.
func legacyFormatAdvice(ext string) string {
	return legacyFormats[strings.ToLower(ext)]
}

// SupportedDocumentExt reports whether ExtractParagraphsWithOptions reads files with
// the extension ext (with the dot, in any case): .pdf, .docx, .pptx, .xlsx,
// .odt, .ods, .odp, .epub, .md, .markdown, .txt and .text. Files without an
// extension are read as plain text by ExtractParagraphsWithOptions but are not
// reported here, so a folder walk does not pick up every extensionless
// file; pass them explicitly.
func SupportedDocumentExt(ext string) bool {
	switch ext = strings.ToLower(ext); ext {
	case ".pdf", ".docx":
		return true
	}
	_, ok := documentReaders[ext]
	return ok
}

// ExtractParagraphs returns the paragraphs of the document at path, in
// reading order, as ExtractParagraphsWithOptions does without options.
//
// Deprecated: Use ExtractParagraphsWithOptions(ctx, path, nil), which reads
// the same formats the same way, stops when ctx ends, and with
// ExtractOptions.OCR also reads scans and image files.
func ExtractParagraphs(path string) ([]Paragraph, error) {
	return extractDocument(path)
}

// extractDocument reads the document at path without OCR: the reading of
// ExtractParagraphsWithOptions.
func extractDocument(path string) ([]Paragraph, error) {
	if err := checkDocumentFile(path); err != nil {
		return nil, err
	}
	paras, err := extractParagraphsFile(path)
	if err != nil {
		return nil, newDocumentError(path, err)
	}
	if len(paras) > maxDocumentParagraphs {
		return nil, newDocumentError(path, fmt.Errorf("%w: more than %d paragraphs", ErrDocumentTooLarge, maxDocumentParagraphs))
	}
	text := 0
	for _, p := range paras {
		if text += len(p.Text); text > maxDocumentTextBytes {
			return nil, newDocumentError(path, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxDocumentTextBytes))
		}
	}
	return paras, nil
}

// Limits on what one document may give: paragraphs, and bytes of text
// (as much as a text file may hold). The .docx reader stops reading at
// them; the others, bounded by their input bytes and cells, are checked
// after reading.
const (
	maxDocumentParagraphs = 250_000
	maxDocumentTextBytes  = maxTextFileBytes
)

// extractParagraphsFile is ExtractParagraphs for a regular file, without
// the paragraph limit and with the readers' own errors.
func extractParagraphsFile(path string) ([]Paragraph, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".pdf":
		return extractPDF(path)
	case ".docx":
		return extractDocx(path)
	}
	if msg, ok := legacyFormats[ext]; ok {
		return nil, fmt.Errorf("extract paragraphs from %s: %w: %s", path, ErrUnsupportedFormat, msg)
	}
	rd, ok := documentReaders[ext]
	if ext == "" {
		rd, ok = documentReaders[".txt"], true
	}
	if !ok {
		return nil, fmt.Errorf("extract paragraphs from %s: %w %q (want .pdf, .docx, .pptx, .xlsx, .odt, .ods, .odp, .epub, .md or .txt)", path, ErrUnsupportedFormat, ext)
	}
	if rd.zip != nil {
		return readZipFile(path, rd.zip)
	}
	data, err := readTextFile(path)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	if ext == "" && bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 && !bytes.HasPrefix(data, []byte{0xFF, 0xFE}) && !bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return nil, fmt.Errorf("extract paragraphs from %s: %w: a binary file without extension, not text", path, ErrUnsupportedFormat)
	}
	paras, err := rd.text(data)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	return paras, nil
}

// readTextFile reads a text file of at most maxTextFileBytes.
func readTextFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into one buffer of the file's size: io.ReadAll's doubling would
	// leave about as much garbage again as the file is large.
	var buf bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > maxTextFileBytes {
			// Refused by its size, before reading 64 MiB of it.
			return nil, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxTextFileBytes)
		}
		buf.Grow(int(st.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, maxTextFileBytes+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if len(data) > maxTextFileBytes {
		return nil, fmt.Errorf("%w: more than %d bytes of text", ErrDocumentTooLarge, maxTextFileBytes)
	}
	return data, nil
}

// NormalizeSpaces returns s with every run of whitespace replaced by one
// ASCII space and leading and trailing whitespace removed.
//
// Whitespace is what unicode.IsSpace reports: ASCII space, tab and line
// breaks, U+0085, NO-BREAK SPACE U+00A0, U+1680, the spaces U+2000-U+200A,
// the line and paragraph separators U+2028/U+2029, U+202F, U+205F and the
// ideographic space U+3000. The invisible characters ZERO WIDTH SPACE
// U+200B, WORD JOINER U+2060, ZERO WIDTH NO-BREAK SPACE (byte-order mark)
// U+FEFF and SOFT HYPHEN U+00AD are removed without leaving a space, so a
// word they sit in stays one word. ZERO WIDTH (NON-)JOINER U+200C/U+200D
// are kept: they change how Indic and Arabic scripts and emoji render.
// Invalid UTF-8 bytes are kept as they are. When s needs no change, s itself
// is returned without allocating.
func NormalizeSpaces(s string) string {
	s, _ = normalizeSpacesASCII(s)
	return s
}

// normalizeSpacesASCII is NormalizeSpaces that also reports whether the
// result is pure ASCII (so its length in bytes is its length in runes).
func normalizeSpacesASCII(s string) (string, bool) {
	prevSpace := true // at the start, a space would be leading
	ascii := true
	for i := 0; i < len(s); {
		// Fast loop over printable ASCII other than space.
		for i < len(s) && s[i] > ' ' && s[i] < utf8.RuneSelf {
			i++
			prevSpace = false
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c != ' ' || prevSpace {
				if c < ' ' && !asciiSpaceNorm[c] {
					prevSpace = false // a control character, kept
					i++
					continue
				}
				return normalizeSpacesFrom(s, i)
			}
			prevSpace = true
			i++
			continue
		}
		ascii = false
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) || zeroWidthNorm(r) {
			return normalizeSpacesFrom(s, i)
		}
		prevSpace = false
		i += n
	}
	if prevSpace && len(s) > 0 {
		return s[:len(s)-1], ascii // exactly one trailing ASCII space
	}
	return s, ascii
}

// asciiSpaceNorm marks the ASCII bytes unicode.IsSpace reports as spaces.
var asciiSpaceNorm = [33]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// zeroWidthNorm reports whether NormalizeSpaces drops r.
func zeroWidthNorm(r rune) bool {
	return r == 0x200B || r == 0x2060 || r == 0xFEFF || r == 0x00AD
}

// normalizeSpacesFrom is the slow path of NormalizeSpaces: s[:i] is already
// normalised (it may end in one space).
func normalizeSpacesFrom(s string, i int) (string, bool) {
	ascii := true
	for k := 0; k < i; k++ {
		if s[k] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	pending := false
	if i > 0 && s[i-1] == ' ' {
		// s[:i] ends in a space: hold it back until a non-space follows.
		b.Reset()
		b.WriteString(s[:i-1])
		pending = true
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' && asciiSpaceNorm[c] {
				pending = b.Len() > 0
				i++
				continue
			}
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case n == 1: // invalid UTF-8: keep the byte
			ascii = false
		case unicode.IsSpace(r):
			pending = b.Len() > 0
			i += n
			continue
		case zeroWidthNorm(r):
			i += n
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		ascii = false
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String(), ascii
}

// BuildChunks groups paras into chunks of at most maxSize characters
// (runes, not bytes) for embedding, carrying up to overlapSize characters of
// each chunk over into the next one of the same section. Chunk documents
// what each field holds; URL is left empty for the caller to set.
//
// Paragraphs are split into sections (see Chunk) and chunks never cross a
// section boundary. Within a section, chunks hold whole words: a chunk ends
// at a paragraph end if that keeps it at least half full, else at a sentence
// end (a word ending in '.', '!' or '?') under the same condition, else
// after the last word that fits. A chunk ends right after a heading only if
// the heading leaves no room for the next word. Only a word longer than
// maxSize is cut, into pieces of maxSize runes. The overlap is the longest
// run of whole words at the end of a chunk that is at most overlapSize runes
// long, shorter than the chunk, and leaves room for the next word, so every
// chunk brings at least one word the previous one did not have.
//
// Degenerate input: paragraphs whose text is empty or only whitespace are
// ignored, and text is normalised with NormalizeSpaces; maxSize <= 0 means no
// size limit, so each section becomes one chunk (and ParentText equals
// Text); overlapSize < 0 is treated as 0 and overlapSize > maxSize/2 as
// maxSize/2. No paragraphs give no chunks (nil).
//
// BuildChunks is deterministic: the same input gives the same chunks. It
// runs in time linear in the size of the input plus the size of the output.
// The chunks' strings share memory with each other.
func BuildChunks(paras []Paragraph, maxSize, overlapSize int) []Chunk {
	paras, merged := mergeSmallSections(paras, maxSize)
	cb := newChunkBuilder(paras, maxSize, overlapSize)
	cb.merged = merged
	cb.run(paras)
	if len(cb.chunks) == 0 {
		return nil
	}
	return cb.chunks
}
