package engine

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/localvec"
)

// localvecProvider is the provider part of the retriever names Genkit's
// localvec plugin registers; LocalvecStore registers under the same one.
const localvecProvider = "devLocalVectorStore"

// LocalvecStore is a file-based VectorStore that reads and writes the
// database file of Genkit's localvec plugin (__db_<name>.json in its
// directory, document IDs in localvec's scheme), so a database written by
// either opens in the other. Unlike Genkit's localvec it writes the file
// atomically, persists once per IndexInBatches or IndexSource run, answers
// queries from an in-memory matrix, and re-indexes a source as a diff
// (docs/api-reference.md).
//
// Documents are matched and grouped by the metadata keys MetaURL ("url") and
// MetaSource ("source"). All methods are safe for concurrent use: queries
// run concurrently with each other and with a writer's embedding calls;
// writers are serialised. One process at a time may write a database file;
// several may read it. After Close every method returns an error wrapping
// ErrStoreClosed.
type LocalvecStore struct {
	// Retriever retrieves the documents most similar to a query. Its request
	// Options may be nil (3 documents), a *localvec.RetrieverOptions or
	// localvec.RetrieverOptions, or any value whose JSON has a "k" field
	// (such as map[string]any{"k": 5}); k <= 0 means 3. The documents it
	// returns are copies (content slice and metadata map), best first.
	Retriever ai.Retriever

	name, path string
	emb        ai.Embedder

	// writeMu serialises writers (Index, deletes, replaceSource, Bulk runs,
	// Close) for the whole of their operation, embedding included, so a
	// writer's view of the data cannot change under it.
	writeMu sync.Mutex
	// sessions counts the Bulk runs in progress; dirty reports
	// changes in memory that are not in the file yet. Both under writeMu.
	sessions int
	dirty    bool
	// fileWrites counts database file writes (for tests and diagnostics).
	fileWrites atomic.Int64
	// lockF is the held file lock (see store_localvec_lock.go), nil when
	// not held; fileInfo describes the file as last read or written (nil:
	// no file). Both under writeMu.
	lockF    *os.File
	fileInfo fs.FileInfo

	// info caches the IndexInfo record once read.
	info indexInfoCache

	// mu guards the fields below: readers (queries, listings) hold it
	// shared, writers exclusively and only while applying a change.
	mu     sync.RWMutex
	closed bool
	rows   localvecRows
	// kwAn is the keyword analyzer LocalvecOptions.KeywordLanguage chose
	// (nil: the one the rows' languages choose, keywordAnalyzer); it outlives
	// reloads of the file. Under mu.
	kwAn *textAnalyzer
	// kwMu serialises bringing rows.kw up to date, which a keyword query
	// does holding mu shared (see keywordIndex).
	kwMu sync.Mutex
}

// localvecRows is the in-memory database: row i is ids[i], docs[i] and the
// vector vecs[i*dim:(i+1)*dim] with inverse norm inv[i]; js[i] is the
// document's JSON encoding when Index computed it for the ID (nil for rows
// read from the file), which writeFile then reuses; kw is the BM25
// inverted index of the rows' texts for KeywordSearch. kw is built lazily:
// it covers rows 0..kw.live()-1 (nil: none), removals keep it in step, and
// rows added since are indexed by the next keyword query (keywords), so a
// write does not analyse its texts.
type localvecRows struct {
	dim  int
	ids  []string
	docs []*ai.Document
	vecs []float32
	inv  []float32
	js   [][]byte
	kw   *bm25Index
	byID map[string]int
	// langs counts the rows by their detected language (metaLanguage, ""
	// for none): the keyword language follows it unless
	// LocalvecOptions.KeywordLanguage sets one.
	langs map[string]int
}

// LocalvecOptions are the optional settings of NewLocalvecStoreWithOptions;
// nil or the zero value gives NewLocalvecStore's store.
type LocalvecOptions struct {
	// KeywordLanguage is the language of the store's keyword ranking:
	// "english", "german", "simple" for no stemming, or another language
	// ErrUnknownLanguage lists (SQLiteOptions.KeywordLanguage's names).
	// Empty follows the rows' detected languages: English stems while most
	// rows are English or of no known language, no stemming otherwise, as
	// a new SQLiteStore does.
	KeywordLanguage string
}

// NewLocalvecStoreWithOptions opens (or creates) the localvec database
// dir/__db_<name>.json, loads it into memory, and defines in g a retriever
// named "devLocalVectorStore/<name>", as Genkit's localvec plugin does;
// that retriever is also the store's Retriever field. An empty dir means
// os.TempDir(), like localvec; dir is created if missing. name must be
// non-empty and free of path separators, and no retriever of that name may
// be defined in g yet. Leftover temporary files of an interrupted write
// (__db_<name>.json.*.tmp) are removed when no other process holds the
// store's file lock (it would be writing one). emb embeds both the documents
// indexed and the queries. opts may be nil for the defaults; an unknown
// KeywordLanguage is an error wrapping ErrUnknownLanguage, given before
// anything is opened or defined in g. ctx is checked before the file is
// read.
func NewLocalvecStoreWithOptions(ctx context.Context, g *genkit.Genkit, name string, emb ai.Embedder, dir string, opts *LocalvecOptions) (*LocalvecStore, error) {
	var o LocalvecOptions
	if opts != nil {
		o = *opts
	}
	var an *textAnalyzer
	if o.KeywordLanguage != "" {
		var err error
		if an, err = newTextAnalyzer(o.KeywordLanguage); err != nil {
			return nil, fmt.Errorf("new localvec store: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("new localvec store: %w", err)
	}
	s, err := openLocalvecStore(g, name, emb, dir)
	if err != nil || an == nil {
		return s, err
	}
	if err := s.setKeywordAnalyzer(an); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewLocalvecStore opens (or creates) the localvec database
// dir/__db_<name>.json with the default options (see
// NewLocalvecStoreWithOptions).
//
// Deprecated: Use NewLocalvecStoreWithOptions(ctx, g, name, emb, dir, nil),
// the same function (LocalvecOptions sets the keyword language as the
// store opens).
func NewLocalvecStore(g *genkit.Genkit, name string, emb ai.Embedder, dir string) (*LocalvecStore, error) {
	return NewLocalvecStoreWithOptions(context.Background(), g, name, emb, dir, nil)
}

// openLocalvecStore opens the store as NewLocalvecStoreWithOptions
// describes, with the default keyword language.
func openLocalvecStore(g *genkit.Genkit, name string, emb ai.Embedder, dir string) (*LocalvecStore, error) {
	switch {
	case g == nil:
		return nil, errors.New("new localvec store: genkit instance is nil")
	case emb == nil:
		return nil, errors.New("new localvec store: embedder is nil")
	case name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return nil, fmt.Errorf("new localvec store: invalid name %q (want a non-empty file-name part)", name)
	}
	retrieverName := api.NewName(localvecProvider, name)
	if genkit.LookupRetriever(g, retrieverName) != nil {
		return nil, fmt.Errorf("new localvec store: retriever %q is already defined", retrieverName)
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("new localvec store: %w", err)
	}
	path := filepath.Join(dir, "__db_"+name+".json")
	removeStaleTemps(path)
	fi, _ := os.Stat(path) // before reading: a change after it is noticed later
	rows, err := loadLocalvecFile(path)
	if err != nil {
		return nil, fmt.Errorf("new localvec store %q: %w", name, err)
	}
	s := &LocalvecStore{name: name, path: path, emb: emb, rows: rows, fileInfo: fi}
	s.Retriever = genkit.DefineRetriever(g, retrieverName, &ai.RetrieverOptions{
		Label:        "askyourdocs localvec " + name,
		ConfigSchema: core.InferSchemaMap(localvec.RetrieverOptions{}),
	}, s.retrieveFresh)
	return s, nil
}

// retrieveFresh is the Retriever's function: it reloads the file if
// another process changed it, then queries.
func (s *LocalvecStore) retrieveFresh(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	if err := s.refreshForRead(); err != nil {
		return nil, fmt.Errorf("localvec retrieve: %w", err)
	}
	return s.retrieve(ctx, req)
}

// Len returns the number of documents in the store (0 after Close).
//
// Deprecated: Use Sources, as on every store, and add up its Chunks.
func (s *LocalvecStore) Len() int {
	s.refreshForRead() // on error, the data as last read
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.rows.ids)
}

// localvecDocID returns Genkit localvec's ID for doc: the hex MD5 of its
// JSON encoding.
func localvecDocID(doc *ai.Document) (string, error) {
	id, _, err := localvecDocJSON(doc)
	return id, err
}

// localvecDocJSON returns doc's localvec ID and the JSON encoding it hashed
// (the bytes the database file holds for the document).
func localvecDocJSON(doc *ai.Document) (string, []byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return "", nil, fmt.Errorf("document is not JSON-encodable: %w", err)
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:]), b, nil
}

// localvecNewRow is a document ready to be added: ID, document, vector,
// and the document's JSON encoding when known (nil: encoded when written).
type localvecNewRow struct {
	id  string
	doc *ai.Document
	vec []float32
	js  []byte
}

// Index embeds the documents that are not in the store yet and adds them
// (the write path of every store, writeDocs): documents already present
// (same ID, that is the same text and metadata) are skipped without being
// embedded, as are repeats within docs; a text already stored reuses its
// vector; the rest are embedded 100 per Embed call. Every document must
// have text (else an error wrapping ErrEmptyDocument); vectors must all
// have the store's dimension (else an error wrapping
// ErrDimensionMismatch). On any error, including a cancelled ctx, nothing
// is added. Outside a Bulk run the file is written before Index returns.
func (s *LocalvecStore) Index(ctx context.Context, docs []*ai.Document) error {
	release, err := s.beginWrite()
	if err != nil {
		return fmt.Errorf("localvec index: %w", err)
	}
	defer release()
	if _, _, err := writeDocs(ctx, s, writeNow, replaceScope{}, docs, nil); err != nil {
		return fmt.Errorf("localvec index: %w", err)
	}
	return nil
}

// apply adds rows and deletes the rows with the IDs in del, in memory and
// in the file: a held write (through a Bulk run's writer) only in memory
// (the file follows when the run ends); otherwise the file is written
// first and memory changed only if that succeeded. Called with writeMu
// held.
func (s *LocalvecStore) apply(add []localvecNewRow, del map[string]bool, held bool) error {
	if held && s.sessions == 0 {
		return errBatchEnded
	}
	if len(add) == 0 && len(del) == 0 {
		return nil
	}
	if !held {
		s.mu.RLock()
		err := s.rows.writeFile(s.path, add, del)
		s.mu.RUnlock()
		if err != nil {
			return err
		}
		s.fileWrites.Add(1)
		s.noteWritten()
	} else {
		s.dirty = true
	}
	s.mu.Lock()
	s.rows.remove(del)
	s.rows.append(add)
	s.mu.Unlock()
	return nil
}

// checkOpen returns ErrStoreClosed after Close.
func (s *LocalvecStore) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrStoreClosed
	}
	return nil
}

// beginBulk starts (or joins) a Bulk run: the file lock is held and held
// writes stay in memory until the last run ends.
func (s *LocalvecStore) beginBulk() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	if s.sessions == 0 {
		// The session holds the file lock until it ends: other processes'
		// writes wait, and this one starts from the current file.
		if _, err := s.lockWrite(); err != nil {
			return err
		}
	}
	s.sessions++
	return nil
}

// endBulk ends a Bulk run: the last to end writes the file if anything
// changed.
func (s *LocalvecStore) endBulk() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.sessions > 0 {
		s.sessions--
	}
	if s.sessions > 0 {
		return nil
	}
	defer s.unlockSession()
	return s.flushLocked()
}

// unlockSession releases the file lock a Bulk run took.
// Called with writeMu held.
func (s *LocalvecStore) unlockSession() {
	if s.lockF != nil {
		unlockFile(s.lockF)
		s.lockF = nil
	}
}

// Bulk runs fn with a writer w (a VectorStore) whose writes defer
// persistence, so that indexing many sources in one run costs one file
// write instead of one per source: Index, DeleteByURL, DeleteBySource and
// IndexSource through w (from any goroutine) change only the in-memory
// data, and the file is written once when fn returns. Queries see the changes at once. Writes
// through the store itself meanwhile write the file as usual (with what
// the run holds so far).
//
// The file is written when fn returns an error, too: what fn completed is
// kept (IndexSource has already rolled back a source that failed). A process
// that dies inside Bulk leaves the file as it was before Bulk (several Bulk
// calls bound what a crash loses). Bulk calls may nest or overlap; the last
// to end writes. The error joins fn's error and the write's. A ctx already
// done gives its error without running fn (the file write itself is not
// interrupted: it is what keeps the file whole).
func (s *LocalvecStore) Bulk(ctx context.Context, fn func(VectorStore) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("localvec %s: bulk: %w", s.path, err)
	}
	if err := s.beginBulk(); err != nil {
		return err
	}
	ferr := runBatch(s, fn)
	if perr := s.endBulk(); perr != nil {
		return errors.Join(ferr, fmt.Errorf("localvec %s: write after bulk: %w", s.path, perr))
	}
	return ferr
}

// rewritesWholeStore implements wholeStoreBulker: every write rewrites the
// file.
func (s *LocalvecStore) rewritesWholeStore() {}

// deleteBatch implements batchStore: the deletion in memory, written when
// the run ends.
func (s *LocalvecStore) deleteBatch(_ context.Context, key, value string) (int, error) {
	n, err := s.deleteWhere(func(m map[string]any) bool { return localvecMetaIs(m, key, value) }, true)
	if err != nil {
		return 0, fmt.Errorf("localvec bulk delete %s %q: %w", key, value, err)
	}
	return n, nil
}

// flushLocked writes the in-memory data to the file if it is dirty. Called
// with writeMu held.
func (s *LocalvecStore) flushLocked() error {
	if !s.dirty {
		return nil
	}
	s.mu.RLock()
	err := s.rows.writeFile(s.path, nil, nil)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	s.fileWrites.Add(1)
	s.noteWritten()
	s.dirty = false
	return nil
}

// localvecMetaIs reports whether meta[key] is the string want.
func localvecMetaIs(meta map[string]any, key, want string) bool {
	v, ok := meta[key].(string)
	return ok && v == want
}

// deleteWhere removes the documents whose metadata match and returns how
// many it removed. Called by the delete methods.
func (s *LocalvecStore) deleteWhere(match func(meta map[string]any) bool, held bool) (int, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	release, err := s.lockWrite()
	if err != nil {
		return 0, err
	}
	defer release()
	del := make(map[string]bool)
	s.mu.RLock()
	for i, d := range s.rows.docs {
		if match(d.Metadata) {
			del[s.rows.ids[i]] = true
		}
	}
	s.mu.RUnlock()
	if err := s.apply(nil, del, held); err != nil {
		return 0, err
	}
	return len(del), nil
}

// DeleteByURL removes the documents whose MetaURL ("url") metadata value is
// url and returns how many it removed. Only string values equal to url
// match: an empty url removes only documents whose url is "".
func (s *LocalvecStore) DeleteByURL(ctx context.Context, url string) (int, error) {
	n, err := s.deleteWhere(func(m map[string]any) bool { return localvecMetaIs(m, MetaURL, url) }, false)
	if err != nil {
		return 0, fmt.Errorf("localvec delete url %q: %w", url, err)
	}
	return n, nil
}

// DeleteBySource removes the documents whose MetaSource ("source") metadata
// value is sourceName and returns how many it removed.
func (s *LocalvecStore) DeleteBySource(ctx context.Context, sourceName string) (int, error) {
	n, err := s.deleteWhere(func(m map[string]any) bool { return localvecMetaIs(m, MetaSource, sourceName) }, false)
	if err != nil {
		return 0, fmt.Errorf("localvec delete source %q: %w", sourceName, err)
	}
	return n, nil
}

// Sources returns the indexed documents grouped by their MetaURL and
// MetaSource metadata values (missing or non-string values count as ""),
// sorted by URL, then Source.
func (s *LocalvecStore) Sources(ctx context.Context) ([]Source, error) {
	if err := s.refreshForRead(); err != nil {
		return nil, fmt.Errorf("localvec sources: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("localvec sources: %w", ErrStoreClosed)
	}
	counts := make(map[[2]string]int)
	langs := make(map[[2]string]string) // of the first row of each
	for _, d := range s.rows.docs {
		k := [2]string{metaString(d.Metadata, MetaURL), metaString(d.Metadata, MetaSource)}
		if counts[k]++; counts[k] == 1 {
			langs[k] = documentLanguage(d)
		}
	}
	out := make([]Source, 0, len(counts))
	for k, n := range counts {
		out = append(out, Source{URL: k[0], Source: k[1], Chunks: n, Language: langs[k]})
	}
	slices.SortFunc(out, func(a, b Source) int {
		if c := strings.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out, nil
}

// KeywordSearch searches the store's documents in memory for query, ranked
// by BM25 over its inverted index in the store's keyword language (see
// LocalvecKeywordSearch for the stages, and LocalvecOptions.KeywordLanguage),
// deduplicated by text, at most maxResults, filtered by filter when it is non-nil. A
// query without keywords returns no documents and no error. The documents
// returned are copies (content slice and metadata map) that the caller may
// change.
func (s *LocalvecStore) KeywordSearch(ctx context.Context, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	if err := s.refreshForRead(); err != nil {
		return nil, fmt.Errorf("localvec keyword search: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("localvec keyword search: %w", ErrStoreClosed)
	}
	x := s.keywordIndex()
	docs, err := x.search(ctx, newBM25Plan(x.an, query, stopWords), s.rows.docs, s.rows.ids, maxResults, filter)
	if err != nil {
		return nil, fmt.Errorf("localvec keyword search: %w", err)
	}
	for i, d := range docs {
		docs[i] = localvecCopyDoc(d)
	}
	return docs, nil
}

// Close writes pending changes (of a Bulk run still in progress)
// to the file and releases the in-memory data. Later calls of any method,
// the Retriever included, return errors wrapping ErrStoreClosed; closing
// again returns nil. If the final write fails, the store stays open and
// Close returns the error.
func (s *LocalvecStore) Close() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.checkOpen() != nil {
		return nil
	}
	if err := s.flushLocked(); err != nil {
		return fmt.Errorf("localvec close: %w", err)
	}
	s.unlockSession()
	s.mu.Lock()
	s.closed = true
	s.rows = localvecRows{}
	s.mu.Unlock()
	return nil
}
