package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// FileSource is the IngestSource of one document file on disk: every
// format ExtractParagraphs reads, and HTML files (.html, .htm, .xhtml)
// through HTMLToStructuredText. Its chunks carry the metadata MetaURL (the
// absolute path), MetaSource (Source, or the absolute path when Source is
// empty), MetaParentText, and MetaPages, MetaBreadcrumb and MetaHeadings
// when the chunk has them. Re-indexing a file replaces its previous chunks (DeleteStale
// deletes by URL, which the stores turn into a diff that embeds only the
// changed chunks).
type FileSource struct {
	// Path is the file's absolute path; NewFileSource sets it.
	Path string
	// Source is what the user indexed, e.g. the folder the file was
	// found in, so that a folder's files can be deleted together with
	// DeleteBySource. Empty means Path.
	Source string
	// OCR, when set, reads scanned PDF pages and image files (see
	// ExtractOptions.OCR); nil reads as ExtractParagraphs does.
	OCR *OCR
	// ChunkLimit is the most chunks IndexSource takes from the file (see
	// ChunkLimiter): 0 means 20,000, negative no limit.
	ChunkLimit int
}

// MaxChunks returns ChunkLimit, so FileSource is a ChunkLimiter.
func (s *FileSource) MaxChunks() int { return s.ChunkLimit }

// NewFileSource returns the IngestSource of the file at path (made
// absolute). It fails with a *DocumentError, before reading the file, when
// the path does not name a regular file (a missing or refused path wraps
// the *fs.PathError, a directory or named pipe ErrUnsupportedFormat) or
// its extension is not one the engine reads (ErrUnsupportedFormat); images
// are accepted, and read when OCR is set. Fetch's errors are
// *DocumentError values too.
func NewFileSource(path string) (*FileSource, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("file source %q: %w", path, err)
	}
	if err := checkDocumentFile(abs); err != nil {
		return nil, err
	}
	if ext := filepath.Ext(abs); !isHTMLExt(ext) && !SupportedDocumentExt(ext) && !SupportedImageExt(ext) && ext != "" {
		if advice := legacyFormatAdvice(ext); advice != "" {
			return nil, newDocumentError(abs, fmt.Errorf("%w: %s", ErrUnsupportedFormat, advice))
		}
		return nil, newDocumentError(abs, fmt.Errorf("%w: %q files are not read", ErrUnsupportedFormat, strings.ToLower(ext)))
	}
	return &FileSource{Path: abs}, nil
}

// isHTMLExt reports whether ext (with the dot, any case) names an HTML file.
func isHTMLExt(ext string) bool {
	switch strings.ToLower(ext) {
	case ".html", ".htm", ".xhtml":
		return true
	}
	return false
}

// Name returns the file's path.
func (s *FileSource) Name() string { return s.Path }

// Fetch reads the file's paragraphs.
func (s *FileSource) Fetch(ctx context.Context) ([]Paragraph, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !isHTMLExt(filepath.Ext(s.Path)) {
		return ExtractParagraphsWithOptions(ctx, s.Path, &ExtractOptions{OCR: s.OCR})
	}
	if err := checkDocumentFile(s.Path); err != nil {
		return nil, err
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, newDocumentError(s.Path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > htmlMaxInputBytes {
		// Refused by its size, unread, as a text file is.
		return nil, newDocumentError(s.Path, fmt.Errorf("%w: more than %d bytes of HTML", ErrDocumentTooLarge, htmlMaxInputBytes))
	}
	paras, err := HTMLToStructuredText(f)
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) && !errors.Is(err, ErrDocumentTooLarge) {
			err = fmt.Errorf("%w: %w", ErrInvalidDocument, err)
		}
		return nil, newDocumentError(s.Path, err)
	}
	return paras, nil
}

// Documents turns the file's chunks into documents with the metadata
// described on FileSource.
func (s *FileSource) Documents(chunks []Chunk) []*ai.Document {
	source := s.Source
	if source == "" {
		source = s.Path
	}
	docs := make([]*ai.Document, 0, len(chunks))
	for _, c := range chunks {
		meta := map[string]any{
			MetaURL:        s.Path,
			MetaSource:     source,
			MetaParentText: c.ParentText,
		}
		if c.Pages != "" {
			meta[MetaPages] = c.Pages
		}
		if c.Breadcrumb != "" {
			meta[MetaBreadcrumb] = c.Breadcrumb
		}
		if c.Headings != "" {
			meta[MetaHeadings] = c.Headings
		}
		docs = append(docs, ai.DocumentFromText(c.Text, meta))
	}
	return docs
}

// DeleteStale deletes the chunks of the file's previous version.
func (s *FileSource) DeleteStale(ctx context.Context, store VectorStore) (int, error) {
	if store == nil {
		return 0, errors.New("file source: nil store")
	}
	return store.DeleteByURL(ctx, s.Path)
}
