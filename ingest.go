package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// IngestSource is one kind of document an app indexes (a PDF upload, a web
// page, a database row, ...). IndexSource runs the pipeline around it.
type IngestSource interface {
	Fetch(ctx context.Context) ([]Paragraph, error)
	Documents(chunks []Chunk) []*ai.Document
	DeleteStale(ctx context.Context, store VectorStore) (int, error)
	Name() string
}

// Metadata keys of chunk documents. DeleteByURL and DeleteBySource match
// chunks by MetaURL and MetaSource, and Sources groups by them; FileSource
// writes the others too. The keyword ranking of the stores reads
// MetaBreadcrumb and MetaHeadings (their terms weigh more), and an app
// shows MetaPages in citations and gives the model MetaParentText, the
// wider window around the chunk. IndexSource also writes "language", the
// ISO 639-1 code of the language the chunk is written in ("en", "de",
// "ja"; text_language.go), unless the source set it; SearchHit.Language
// reads it.
const (
	// MetaURL is the metadata key holding a chunk's URL (or file path).
	MetaURL = "url"
	// MetaSource is the metadata key holding a chunk's source name.
	MetaSource = "source"
	// MetaParentText is the metadata key of a chunk's ParentText.
	MetaParentText = "parentText"
	// MetaPages is the metadata key of a chunk's Pages ("3" or "3-4").
	MetaPages = "pages"

	// MetaBreadcrumb is the metadata key of a chunk's breadcrumb (the
	// headings above it, "Page > Section > Subsection"), as the reference CLI
	// stores it. Keyword ranking counts the breadcrumb's terms bm25HeadingWeight
	// times and scores its heading pairs (BM25F with one boosted field,
	// bm25HeadingTerms): a question naming a section finds the section.
	MetaBreadcrumb = "breadcrumb"

	// MetaHeadings is the metadata key of a chunk's Headings: the headings in
	// its text that its breadcrumb does not name (small sections merged into
	// the chunk), one per line. Keyword ranking counts their terms as it
	// counts the breadcrumb's (bm25HeadingWeight times): the heading field of
	// BM25F is the breadcrumb plus these headings.
	MetaHeadings = "headings"

	// MetaQuery is the metadata key QueryDocument sets (to true) to mark a
	// document as a search query. A prefix embedder gives such documents the
	// model's query prefix and every other document the passage prefix.
	MetaQuery = "askyourdocsQuery"
)

// sourceReplacer is implemented by stores that can replace the chunks of one
// source as a diff: IndexSource uses it, when present, instead of
// delete-then-index, so that re-indexing unchanged content embeds nothing
// and rewrites nothing, and a failed run leaves the previous version intact.
//
// replaceSource makes the chunks matched by scope equal to docs: documents
// whose chunkID already exists in the scope are kept as they are; the others
// are embedded and written (progress reports written/total as it goes); only
// after all of them are written are the scope's chunks that are not in docs
// deleted. On error, the chunks this call wrote are removed again and the
// old ones are left untouched. written counts documents actually embedded and
// written, deleted counts old chunks removed.
type sourceReplacer interface {
	replaceSource(ctx context.Context, scope replaceScope, docs []*ai.Document, progress func(done, total int)) (written, deleted int, err error)
}

// replaceScope names the chunks a source's DeleteStale would delete: those
// whose MetaURL value is in urls or whose MetaSource value is in sources.
type replaceScope struct {
	urls    []string
	sources []string
}

// docIdentity is a document's content hash and stable chunk ID.
type docIdentity struct {
	// hash is the SHA-256 (hex) of the text and the canonical JSON of all
	// metadata: any change a reader of the chunk could see changes it.
	hash string
	// textHash is the SHA-256 (hex) of the text alone: documents with equal
	// textHash can share one embedding.
	textHash string
	// id is derived from (source, url, ordinal, hash), where ordinal counts
	// earlier documents with the same hash, source and url in the same call,
	// so identical chunks of one source still get distinct IDs while
	// inserting a chunk leaves the IDs of the others unchanged.
	id string
}

// documentIdentities computes the identity of each document, in order.
func documentIdentities(docs []*ai.Document) ([]docIdentity, error) {
	out := make([]docIdentity, len(docs))
	seen := make(map[string]int)
	for i, d := range docs {
		text := DocText(d)
		meta, err := json.Marshal(d.Metadata) // map keys are sorted: canonical
		if err != nil {
			return nil, fmt.Errorf("document %d: metadata is not JSON-encodable: %w", i, err)
		}
		th := sha256.Sum256([]byte(text))
		h := sha256.New()
		h.Write([]byte(text))
		h.Write([]byte{0})
		h.Write(meta)
		hash := hex.EncodeToString(h.Sum(nil))
		src, url := metaString(d.Metadata, MetaSource), metaString(d.Metadata, MetaURL)
		key := src + "\x00" + url + "\x00" + hash
		ord := seen[key]
		seen[key] = ord + 1
		out[i] = docIdentity{
			hash:     hash,
			textHash: hex.EncodeToString(th[:]),
			id:       chunkID(src, url, ord, hash),
		}
	}
	return out, nil
}

// chunkID returns the stable 32-hex-digit ID of a chunk.
func chunkID(source, url string, ordinal int, hash string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%d\x00%s", source, url, ordinal, hash))
	return hex.EncodeToString(h[:16])
}

// metaString returns meta[key] if it is a string, else "".
func metaString(meta map[string]any, key string) string {
	s, _ := meta[key].(string)
	return s
}

// Errors of IndexSource; callers test them with errors.Is.
var (
	// ErrNoDocuments is returned (wrapped) by IndexSource when a source yields no
	// document with text; the store is left unchanged, so a page that failed to
	// render or a scanned PDF without a text layer never wipes an indexed source.
	// To remove a source, call the store's DeleteByURL or DeleteBySource.
	ErrNoDocuments = errors.New("source produced no documents with text")

	// ErrTooManyChunks is wrapped by the error IndexSource returns for a
	// source whose paragraphs give more chunks than its limit (20,000
	// unless the source says otherwise, see ChunkLimiter). Nothing is embedded
	// or written then; the message names the limit.
	ErrTooManyChunks = errors.New("too many chunks for one document")

	// ErrSymlinkOutside is the Err of a FolderResult.NotFollowed entry
	// whose target lies outside the folder: IndexFolder follows it only
	// with FolderOptions.FollowSymlinksOutside.
	ErrSymlinkOutside = errors.New("symlink out of folder")
)

// errRecorderWrite is returned by the VectorStore IndexSource passes to a
// source's DeleteStale when the store diffs sources itself.
var errRecorderWrite = errors.New("DeleteStale may only call DeleteByURL and DeleteBySource")

// scopeCounter is implemented by sourceReplacer stores that can count the
// documents in a scope; the scope recorder returns that count from its
// delete methods, so a DeleteStale that reports it still sees the number of
// chunks its deletion concerns.
type scopeCounter interface {
	countScope(ctx context.Context, scope replaceScope) (int, error)
}

// scopeRecorder is the VectorStore IndexSource hands to DeleteStale when the
// real store is a sourceReplacer: its delete methods delete nothing but
// record the URL or source name into scope and return the number of chunks
// that currently match (when the store is a scopeCounter, else 0); Index and
// Close fail.
type scopeRecorder struct {
	store VectorStore
	scope replaceScope
}

func (r *scopeRecorder) Index(ctx context.Context, docs []*ai.Document) error {
	return fmt.Errorf("index source: Index called during DeleteStale: %w", errRecorderWrite)
}

func (r *scopeRecorder) DeleteByURL(ctx context.Context, url string) (int, error) {
	if !slices.Contains(r.scope.urls, url) {
		r.scope.urls = append(r.scope.urls, url)
	}
	return r.count(ctx, replaceScope{urls: []string{url}})
}

func (r *scopeRecorder) DeleteBySource(ctx context.Context, sourceName string) (int, error) {
	if !slices.Contains(r.scope.sources, sourceName) {
		r.scope.sources = append(r.scope.sources, sourceName)
	}
	return r.count(ctx, replaceScope{sources: []string{sourceName}})
}

func (r *scopeRecorder) Close() error {
	return fmt.Errorf("index source: Close called during DeleteStale: %w", errRecorderWrite)
}

func (r *scopeRecorder) count(ctx context.Context, sc replaceScope) (int, error) {
	c, ok := r.store.(scopeCounter)
	if !ok {
		return 0, nil
	}
	return c.countScope(ctx, sc)
}

// IndexSource runs the ingest pipeline for one source: src.Fetch, then
// BuildChunks(paragraphs, chunkSize, chunkOverlap), then src.Documents
// (documents that are nil or have no text are dropped), and replaces the
// source's old chunks in store with the new ones. A store that diffs
// sources itself (SQLiteStore, LocalvecStore, PgvecStore) gets
// src.DeleteStale with a recording VectorStore and changes nothing unless
// the whole run succeeds; any other store gets src.DeleteStale, then
// IndexInBatches, rolled back on failure so the source is never half
// indexed. DeleteStale should use only the VectorStore methods. Details:
// docs/api-reference.md.
//
// indexed is the number of chunks the source has in store after the run;
// deleted the number of old chunks removed. A source with no document
// with text gives an error wrapping ErrNoDocuments, one over its chunk
// limit one wrapping ErrTooManyChunks; both change nothing. A failing
// DeleteStale is logged and the run goes on. sendChunk, when non-nil,
// receives short progress messages (docs/api-reference.md). A nil store
// or src is an error. IndexSource blocks until the run ends.
func IndexSource(ctx context.Context, store VectorStore, src IngestSource, chunkSize, chunkOverlap int, sendChunk func(string)) (indexed, deleted int, err error) {
	if store == nil || src == nil {
		return 0, 0, errors.New("index source: store and source must not be nil")
	}
	name := src.Name()
	say := func(format string, args ...any) {
		if sendChunk != nil {
			sendChunk(fmt.Sprintf(format, args...))
		}
	}
	paras, err := src.Fetch(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("index source %q: fetch: %w", name, err)
	}
	limit := sourceChunkLimit(src)
	if n := minChunks(paras, chunkSize); limit >= 0 && n > limit {
		return 0, 0, fmt.Errorf("index source %q: %w", name, tooManyChunksError(n, limit, chunkSize, true))
	}
	chunks := BuildChunks(paras, chunkSize, chunkOverlap)
	if limit >= 0 && len(chunks) > limit {
		return 0, 0, fmt.Errorf("index source %q: %w", name, tooManyChunksError(len(chunks), limit, chunkSize, false))
	}
	paras = nil // the chunks hold what is needed; let the paragraphs go
	all := src.Documents(chunks)
	docs := make([]*ai.Document, 0, len(all))
	for _, d := range all {
		if d != nil && strings.TrimSpace(DocText(d)) != "" {
			docs = append(docs, d)
		}
	}
	if len(docs) > 0 {
		say("%d Chunks erzeugt, indexiere...", len(docs))
	}
	if len(docs) == 0 {
		return 0, 0, fmt.Errorf("index source %q: %w", name, ErrNoDocuments)
	}
	annotateLanguages(docs)
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("index source %q: %w", name, err)
	}
	// One message per batch written (docs/compat.md).
	lastBatch := 0
	progress := func(done, total int) {
		if b := (done + indexBatchSize - 1) / indexBatchSize; b > lastBatch {
			lastBatch = b
			say("Batch %d/%d indexiert", b, (total+indexBatchSize-1)/indexBatchSize)
		}
	}

	if rep, ok := store.(sourceReplacer); ok {
		rec := &scopeRecorder{store: store}
		if _, err := src.DeleteStale(ctx, rec); err != nil {
			if errors.Is(err, errRecorderWrite) {
				return 0, 0, fmt.Errorf("index source %q: delete stale: %w", name, err)
			}
			slog.WarnContext(ctx, "deleting the stale version failed; indexing the new one anyway", "source", name, "err", err)
			say("%s: deleting the old version failed (%v); indexing the new one anyway", name, err)
		}
		written, deleted, err := rep.replaceSource(ctx, rec.scope, docs, progress)
		if err != nil {
			return 0, 0, fmt.Errorf("index source %q: %w (the previous version is unchanged)", name, err)
		}
		slog.DebugContext(ctx, "indexed source", "source", name, "chunks", len(docs), "written", written, "deleted", deleted)
		return len(docs), deleted, nil
	}

	deleted, err = src.DeleteStale(ctx, store)
	if err != nil {
		slog.WarnContext(ctx, "deleting the stale version failed; indexing the new one anyway", "source", name, "err", err)
		say("%s: deleting the old version failed (%v); indexing the new one anyway", name, err)
	}
	if err := IndexInBatches(ctx, store, docs, progress); err != nil {
		err = fmt.Errorf("index source %q: %w", name, err)
		rctx := context.WithoutCancel(ctx)
		_, serr := src.DeleteStale(rctx, store)
		if rerr := errors.Join(serr, removeIndexedDocuments(rctx, store, docs)); rerr != nil {
			return 0, deleted, errors.Join(err, fmt.Errorf("index source %q: roll back: %w", name, rerr))
		}
		return 0, deleted, err
	}
	slog.DebugContext(ctx, "indexed source", "source", name, "chunks", len(docs), "deleted", deleted)
	return len(docs), deleted, nil
}

// removeIndexedDocuments deletes from store the chunks with the MetaURL
// values of docs, and the MetaSource values of docs without a URL: the
// rollback of a failed plain IndexSource run.
func removeIndexedDocuments(ctx context.Context, store VectorStore, docs []*ai.Document) error {
	var urls, sources []string
	orphans := 0
	for _, d := range docs {
		if u := metaString(d.Metadata, MetaURL); u != "" {
			if !slices.Contains(urls, u) {
				urls = append(urls, u)
			}
		} else if s := metaString(d.Metadata, MetaSource); s != "" {
			if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		} else {
			orphans++
		}
	}
	var errs []error
	for _, u := range urls {
		if _, err := store.DeleteByURL(ctx, u); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range sources {
		if _, err := store.DeleteBySource(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	if orphans > 0 {
		errs = append(errs, fmt.Errorf("%d documents have neither %q nor %q metadata and may remain", orphans, MetaURL, MetaSource))
	}
	return errors.Join(errs...)
}
