package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"golang.org/x/text/unicode/norm"
)

// defaultLocalEmbedderDim is the dimension NewLocalEmbedder uses for a
// dim <= 0.
const defaultLocalEmbedderDim = 512

// localEmbedderName returns the name NewLocalEmbedder(dim) gives its
// embedder (its Name()): "askyourdocs/local-hash-<dim>".
func localEmbedderName(dim int) string {
	if dim <= 0 {
		dim = defaultLocalEmbedderDim
	}
	return fmt.Sprintf("askyourdocs/local-hash-%d", dim)
}

// NewLocalEmbedder returns a built-in embedder that needs no model server:
// the offline default of the CLI and a realistic embedder for tests. It is
// LEXICAL, not semantic: texts are similar when they share words or word
// pieces, so "car" and "automobile" are unrelated to it, while inflections
// and compounds ("Datenbank", "Datenbanken") overlap through their
// character n-grams. For meaning, use a real embedding model.
//
// Each text is normalised (Unicode NFKD with combining marks, i.e.
// accents, removed; lower case; ß as ss;
// anything but letters and digits a separator); its features are the
// words and the character 3-, 4- and 5-grams of each word padded with a
// boundary mark. Features are hashed (FNV-1a, 64 bit) into dim buckets with
// a sign taken from the hash (signed feature hashing, so collisions cancel
// out on average), weighted by sublinear term frequency 1+ln(tf) (words
// count double relative to n-grams) and the vector is L2-normalised. A text
// without letters or digits gets the first unit vector. The result is
// deterministic across runs and platforms. dim <= 0 means 512. Its Name()
// is "askyourdocs/local-hash-<dim>", which FusionDefaults and an index's
// recorded embedder compare against. The embedder is safe for concurrent use; its
// Register method registers it as a Genkit embedder action, so
// genkit.RegisterAction(g, emb) makes it available to genkit.Embed.
func NewLocalEmbedder(dim int) ai.Embedder {
	if dim <= 0 {
		dim = defaultLocalEmbedderDim
	}
	return &localEmbedder{dim: dim, name: localEmbedderName(dim)}
}

type localEmbedder struct {
	dim  int
	name string
}

// Name returns "askyourdocs/local-hash-<dim>".
func (e *localEmbedder) Name() string { return e.name }

// Register registers the embedder as a Genkit embedder action in r.
func (e *localEmbedder) Register(r api.Registry) {
	ai.NewEmbedder(e.name, &ai.EmbedderOptions{
		Label:      "askyourdocs local hashing embedder (lexical)",
		Dimensions: e.dim,
		Supports:   &ai.EmbedderSupports{Input: []string{"text"}, Multilingual: true},
	}, e.Embed).Register(r)
}

// Embed returns one vector per input document.
func (e *localEmbedder) Embed(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
	resp := &ai.EmbedResponse{}
	if req == nil {
		return resp, nil
	}
	resp.Embeddings = make([]*ai.Embedding, len(req.Input))
	for i, d := range req.Input {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("local embedder: %w", err)
			}
		}
		resp.Embeddings[i] = &ai.Embedding{Embedding: localHashVector(DocText(d), e.dim)}
	}
	return resp, nil
}

// localHashScratch is reusable per-call working memory.
type localHashScratch struct {
	words  []byte
	hashes []uint64
	runes  []rune
	keys   []uint64
	counts []uint32
}

var localHashPool = sync.Pool{New: func() any { return new(localHashScratch) }}

const (
	localHashOffset = 14695981039346656037
	localHashPrime  = 1099511628211
	// localWordSeed distinguishes word features from n-gram features.
	localWordSeed = 0x9e3779b97f4a7c15
)

// localHashVector computes the feature-hashed vector of text.
func localHashVector(text string, dim int) []float32 {
	s := localHashPool.Get().(*localHashScratch)
	defer localHashPool.Put(s)
	s.words = localNormalize(s.words[:0], text)
	s.hashes = s.hashes[:0]
	// Words are separated by single spaces in s.words.
	start := 0
	for i := 0; i <= len(s.words); i++ {
		if i < len(s.words) && s.words[i] != ' ' {
			continue
		}
		if i > start {
			w := s.words[start:i]
			s.hashes = append(s.hashes, localFNV(localWordSeed, w))
			s.runes = localRunes(s.runes[:0], w)
			s.hashes = localNgrams(s.hashes, s.runes)
		}
		start = i + 1
	}
	v := make([]float32, dim)
	if len(s.hashes) == 0 {
		v[0] = 1
		return v
	}
	// Count equal features in an open-addressing table (much faster than
	// sorting); the table size is a power of two at least twice the count.
	size := 16
	for size < 2*len(s.hashes) {
		size <<= 1
	}
	if cap(s.keys) < size {
		s.keys = make([]uint64, size)
		s.counts = make([]uint32, size)
	}
	keys, counts := s.keys[:size], s.counts[:size]
	clear(keys)
	mask := uint64(size - 1)
	for _, h := range s.hashes {
		h |= 2 // never 0, the empty marker; bit 1 is not used below
		i := (h ^ h>>29) & mask
		for keys[i] != 0 && keys[i] != h {
			i = (i + 1) & mask
		}
		if keys[i] == 0 {
			keys[i] = h
			counts[i] = 0
		}
		counts[i]++
	}
	var sum float64
	acc := make([]float64, dim)
	for i, h := range keys {
		if h == 0 {
			continue
		}
		w := 1 + math.Log(float64(counts[i]))
		if h&1 == 1 { // word features have the low bit set
			w *= 2
		}
		if h>>63 == 1 {
			w = -w
		}
		acc[(h>>2)%uint64(dim)] += w
	}
	for _, x := range acc {
		sum += x * x
	}
	if sum == 0 {
		v[0] = 1
		return v
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range acc {
		v[i] = float32(x * inv)
	}
	return v
}

// localFNV hashes b with FNV-1a seeded by seed; word hashes get the low bit
// set and n-gram hashes cleared so the weighting can tell them apart.
func localFNV(seed uint64, b []byte) uint64 {
	h := uint64(localHashOffset) ^ seed
	for _, c := range b {
		h ^= uint64(c)
		h *= localHashPrime
	}
	if seed == localWordSeed {
		return h | 1
	}
	return h &^ 1
}

// localRunes appends the runes of w, framed by '<' and '>' boundary marks.
func localRunes(dst []rune, w []byte) []rune {
	dst = append(dst, '<')
	for len(w) > 0 {
		r, n := utf8.DecodeRune(w)
		dst = append(dst, r)
		w = w[n:]
	}
	return append(dst, '>')
}

// localNgrams appends the hashes of the 3- to 5-rune n-grams of r.
func localNgrams(dst []uint64, r []rune) []uint64 {
	var buf [5 * utf8.UTFMax]byte
	for n := 3; n <= 5; n++ {
		for i := 0; i+n <= len(r); i++ {
			b := buf[:0]
			for _, c := range r[i : i+n] {
				b = utf8.AppendRune(b, c)
			}
			dst = append(dst, localFNV(uint64(n), b))
		}
	}
	return dst
}

// localNormalize appends to dst the NFKD-decomposed, lower-cased text with
// combining marks removed and every run of
// characters that are not letters or digits replaced by one space.
func localNormalize(dst []byte, text string) []byte {
	space := true
	var it norm.Iter
	it.InitString(norm.NFKD, text)
	for !it.Done() {
		seg := it.Next()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			seg = seg[n:]
			switch {
			case unicode.Is(unicode.Mn, r):
				continue
			case unicode.IsLetter(r) || unicode.IsDigit(r):
				if r == 'ß' {
					dst = append(dst, "ss"...)
				} else {
					dst = utf8.AppendRune(dst, unicode.ToLower(r))
				}
				space = false
			default:
				if !space {
					dst = append(dst, ' ')
					space = true
				}
			}
		}
	}
	if n := len(dst); n > 0 && dst[n-1] == ' ' {
		dst = dst[:n-1]
	}
	return dst
}
