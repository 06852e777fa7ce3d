package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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

// Metadata keys the ready-made stores understand. DeleteByURL and
// DeleteBySource match chunks by these keys, and Sources groups by them.
const (
	// MetaURL is the metadata key holding a chunk's URL (or file path).
	MetaURL = "url"
	// MetaSource is the metadata key holding a chunk's source name.
	MetaSource = "source"
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
