package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// quotePairs maps each opening quotation mark ExtractQuotedPhrases knows to
// the closing marks it accepts: ASCII "..." and '...', German „...“ (also
// closed by ” or ") and ‚...‘, English “...” and ‘...’, and guillemets
// «...» and »...«.
var quotePairs = map[rune]string{
	'"':      `"`,
	'„':      `“”"`,
	'“':      `”“`,
	'«':      `»`,
	'»':      `«`,
	'\'':     `'`,
	'\u2018': "\u2019\u2018", // ‘...’
	'\u201A': "\u2018\u2019", // ‚...‘
}

// singleQuotes are the marks that double as apostrophes ("don't",
// "Peter's"): they open a phrase only at the start of a word and close it
// only at the end of one.
const singleQuotes = "'\u2018\u2019\u201A"

// ExtractQuotedPhrases returns the phrases enclosed in quotation marks in
// text, lower-cased, in order of appearance: ASCII "..." and '...', German
// „...“ and ‚...‘, English “...” and ‘...’, and guillemets «...» or »...«.
// A phrase is the text between an opening mark and the first closing mark
// that matches it, with runs of white space collapsed to one space and
// trimmed. A single quote counts only at a word boundary (before the
// phrase's first word, after its last), so apostrophes ("don't", "o'neil")
// are not quotes. Empty phrases and an opening mark without a closing one
// are ignored; a phrase quoted twice is returned once. It returns nil when
// text contains no phrase.
func ExtractQuotedPhrases(text string) []string {
	phrases, _ := splitQuoted(text)
	return phrases
}

// isWordRune reports whether r is part of a word for the single-quote
// boundary rule.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// quoteCloser returns the byte offset in inner of the first mark closing a
// phrase opened by a mark with the given closers, or -1.
func quoteCloser(inner, closers string, single bool) int {
	for j, c := range inner {
		if !strings.ContainsRune(closers, c) {
			continue
		}
		if single {
			next, _ := utf8.DecodeRuneInString(inner[j+utf8.RuneLen(c):])
			if next != utf8.RuneError && isWordRune(next) {
				continue // an apostrophe inside a word
			}
		}
		return j
	}
	return -1
}

// splitQuoted returns the quoted phrases of text (as ExtractQuotedPhrases)
// and text with the quoted parts, marks included, replaced by a space.
func splitQuoted(text string) (phrases []string, rest string) {
	var b strings.Builder
	seen := make(map[string]bool)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		closers, isOpener := quotePairs[r]
		single := strings.ContainsRune(singleQuotes, r)
		if isOpener && single {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			// An opening single quote follows no word and precedes one.
			isOpener = (i == 0 || !isWordRune(prev)) && isWordRune(next)
		}
		if !isOpener {
			b.WriteString(text[i : i+size])
			i += size
			continue
		}
		inner := text[i+size:]
		end := quoteCloser(inner, closers, single)
		if end < 0 {
			// Unclosed: the mark is not a quote; keep the rest as words.
			b.WriteByte(' ')
			i += size
			continue
		}
		if p := strings.ToLower(strings.Join(strings.Fields(inner[:end]), " ")); p != "" && !seen[p] {
			seen[p] = true
			phrases = append(phrases, p)
		}
		_, csize := utf8.DecodeRuneInString(inner[end:])
		b.WriteByte(' ')
		i += size + end + csize
	}
	return phrases, b.String()
}

// keywordMinRunes is the shortest word ExtractKeywords keeps, as in the
// original engine: shorter words ("an", "im", "of") match almost every
// chunk as substrings.
const keywordMinRunes = 3

// ExtractKeywords returns the keywords of text: its words lower-cased, in
// order of first appearance, each once, without the words in stopWords.
//
// A word is a maximal run of Unicode letters, digits and combining marks;
// everything else (spaces, punctuation, hyphens, apostrophes, SQL or regular
// expression metacharacters such as % _ ' \ * ?) separates words, so
// "E-Mail-Adresse" gives "mail" and "adresse" and "100%" gives "100".
// Words shorter than three runes are dropped. stopWords holds lower-case words
// to drop (a nil map drops none); the caller chooses the language, for
// example German articles plus its own meta-query words such as "finde".
// It returns nil when no keyword is left.
func ExtractKeywords(text string, stopWords map[string]bool) []string {
	var out []string
	seen := make(map[string]bool)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
	for _, w := range words {
		if utf8.RuneCountInString(w) < keywordMinRunes || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Long keywords are also searched by a prefix of keywordPrefixRunes runes so
// that inflected forms match ("Rechnungen" finds "Rechnung", "Protokolls"
// finds "Protokoll"): a bridge over inflections a stemmer would miss.
const (
	keywordPrefixMinRunes = 8
	keywordPrefixRunes    = 7
)

// keywordPlan is the analysis of a keyword query shared by both backends'
// three-stage search (LocalvecKeywordSearch and KeywordSearchSQL):
//
//  1. phrases: quoted phrases, matched exactly as case-insensitive
//     substrings (ILIKE '%phrase%'); a match always ranks first;
//  2. prefixes: truncated prefixes of the long keywords, matched as
//     case-insensitive substrings (ILIKE '%prefix%');
//  3. keywords: all keywords outside the quotes, for substring or
//     full-text scoring of the rest.
//
// Words inside quotes are not keywords: quoting asks for that exact text.
// All strings are lower-case. A plan with no phrases and no keywords (a
// query of stop words or punctuation only) matches nothing.
type keywordPlan struct {
	phrases  []string
	prefixes []string
	keywords []string
}

// newKeywordPlan analyses query with the caller's stop words.
func newKeywordPlan(query string, stopWords map[string]bool) keywordPlan {
	phrases, rest := splitQuoted(query)
	var p keywordPlan
	for _, ph := range phrases {
		if lp := strings.ToLower(ph); !slices.Contains(p.phrases, lp) {
			p.phrases = append(p.phrases, lp)
		}
	}
	p.keywords = ExtractKeywords(rest, stopWords)
	for _, k := range p.keywords {
		if utf8.RuneCountInString(k) < keywordPrefixMinRunes {
			continue
		}
		pre := string([]rune(k)[:keywordPrefixRunes])
		if !slices.Contains(p.prefixes, pre) {
			p.prefixes = append(p.prefixes, pre)
		}
	}
	return p
}

// empty reports whether the plan can match nothing.
func (p keywordPlan) empty() bool { return len(p.phrases) == 0 && len(p.keywords) == 0 }

// keywordLikePattern returns the ILIKE pattern matching s anywhere in a text,
// with the LIKE metacharacters %, _ and the escape character \ in s escaped,
// so that s matches literally (for the default escape character \).
func keywordLikePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// keywordScore is how one document matched a plan; documents are ranked by
// its fields in order, each descending: the three stages of the strategy.
type keywordScore struct {
	phrases, prefixes, keywords, occurrences int
}

// keywordNormalize returns text lower-cased with runs of white space
// collapsed to one space, the form phrases are matched against.
func keywordNormalize(text string) string {
	lower := strings.ToLower(text)
	prevSpace := true // a leading space also needs normalising
	for _, r := range lower {
		if unicode.IsSpace(r) {
			if r != ' ' || prevSpace {
				return strings.Join(strings.Fields(lower), " ")
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	if prevSpace && lower != "" {
		return strings.TrimRightFunc(lower, unicode.IsSpace)
	}
	return lower
}

func compareKeywordScores(a, b keywordScore) int {
	return cmp.Or(
		cmp.Compare(b.phrases, a.phrases),
		cmp.Compare(b.prefixes, a.prefixes),
		cmp.Compare(b.keywords, a.keywords),
		cmp.Compare(b.occurrences, a.occurrences),
	)
}

// search ranks docs (in a deterministic order; ties keep it) by the plan:
// phrase matches first, then prefix matches, then keyword matches, each
// ordered by how many of its terms they contain; documents with the same
// text are returned once; at most maxResults (all when maxResults <= 0).
// filter, when non-nil, must accept a document's metadata for it to count.
func (p keywordPlan) search(ctx context.Context, docs []*ai.Document, maxResults int, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	return p.searchIndexed(ctx, docs, nil, maxResults, filter)
}

// keywordSigWords is the size of a keywordSig in 64-bit words.
const keywordSigWords = 16

// keywordSig is the byte-bigram signature of a normalised text: bit
// keywordSigBit(a, b) is set for every two consecutive bytes a, b of the
// text. A pattern can only be a substring of the text if every bit of its
// own signature is set in the text's, so one AND per word rules most
// non-matching rows out without a substring search.
type keywordSig [keywordSigWords]uint64

// keywordSigBit returns the signature bit of the byte pair a, b.
func keywordSigBit(a, b byte) uint {
	h := (uint32(a)<<8 | uint32(b)) * 0x9E3779B1
	return uint(h>>22) % (keywordSigWords * 64)
}

// newKeywordSig returns the signature of s.
func newKeywordSig(s string) keywordSig {
	var g keywordSig
	for i := 1; i < len(s); i++ {
		bit := keywordSigBit(s[i-1], s[i])
		g[bit/64] |= 1 << (bit % 64)
	}
	return g
}

// covers reports whether every bit of sub is set in g.
func (g *keywordSig) covers(sub *keywordSig) bool {
	for i := range g {
		if g[i]&sub[i] != sub[i] {
			return false
		}
	}
	return true
}

// keywordText is what the keyword search needs of a stored document,
// computed once when it is stored: its text normalised by keywordNormalize
// and that text's signature.
type keywordText struct {
	norm string
	sig  keywordSig
}

// newKeywordText returns the keyword-search form of doc.
func newKeywordText(doc *ai.Document) keywordText {
	n := keywordNormalize(DocText(doc))
	return keywordText{norm: n, sig: newKeywordSig(n)}
}

// keywordPattern is one search string of a plan with its signature.
type keywordPattern struct {
	s   string
	sig keywordSig
}

func newKeywordPatterns(ss []string) []keywordPattern {
	out := make([]keywordPattern, len(ss))
	for i, s := range ss {
		out[i] = keywordPattern{s, newKeywordSig(s)}
	}
	return out
}

// keywordMatcher is a plan compiled for scanning many rows.
type keywordMatcher struct {
	phrases, prefixes, keywords []keywordPattern
}

// stages returns the first three fields of a normalised text's score
// (phrases, prefixes and keywords found; occurrences are left 0), with sig
// its signature or nil for no prefilter: a pattern whose signature the
// row's does not cover cannot occur in it and is not searched.
func (m *keywordMatcher) stages(norm string, sig *keywordSig) keywordScore {
	var s keywordScore
	for i := range m.phrases {
		if m.phrases[i].in(norm, sig) {
			s.phrases++
		}
	}
	for i := range m.prefixes {
		if m.prefixes[i].in(norm, sig) {
			s.prefixes++
		}
	}
	for i := range m.keywords {
		if m.keywords[i].in(norm, sig) {
			s.keywords++
		}
	}
	return s
}

// in reports whether the pattern occurs in norm, whose signature is sig
// (nil: unknown).
func (k *keywordPattern) in(norm string, sig *keywordSig) bool {
	return (sig == nil || sig.covers(&k.sig)) && strings.Contains(norm, k.s)
}

// occurrences returns how often the keywords occur in norm in total.
func (m *keywordMatcher) occurrences(norm string, sig *keywordSig) int {
	n := 0
	for i := range m.keywords {
		if k := &m.keywords[i]; sig == nil || sig.covers(&k.sig) {
			n += strings.Count(norm, k.s)
		}
	}
	return n
}

// keywordBucketsMax bounds the number of score buckets searchIndexed sorts
// hits into by counting; larger plans are sorted by comparison.
const keywordBucketsMax = 1 << 12

// searchIndexed is search over docs whose keyword-search forms are in kw
// (kw[i] belongs to docs[i]); with kw nil each document's text is
// normalised on the fly.
//
// It ranks in two passes so that the costly part, counting every
// occurrence of every keyword, is done only for the rows that can reach
// the result: first each row's stages (phrases, prefixes, keywords) are
// found with substring tests that stop at the first match, and the hits
// ordered by them (stable in row order); then, walking that order, the
// stage groups up to the one in which maxResults distinct texts are
// reached get their occurrences counted and are ordered by them. Rows in
// later groups cannot be returned. The result equals a stable sort of all
// hits by the full score.
func (p keywordPlan) searchIndexed(ctx context.Context, docs []*ai.Document, kw []keywordText, maxResults int, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	if p.empty() {
		return nil, nil
	}
	m := keywordMatcher{newKeywordPatterns(p.phrases), newKeywordPatterns(p.prefixes), newKeywordPatterns(p.keywords)}
	type hit struct {
		row   int
		score keywordScore
		norm  string
		sig   *keywordSig
	}
	var hits []hit
	for i, d := range docs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if d == nil || (filter != nil && !filter(d.Metadata)) {
			continue
		}
		var n string
		var sig *keywordSig
		if kw != nil {
			n, sig = kw[i].norm, &kw[i].sig
		} else {
			n = keywordNormalize(DocText(d))
		}
		if s := m.stages(n, sig); s.phrases+s.prefixes+s.keywords > 0 {
			hits = append(hits, hit{i, s, n, sig})
		}
	}
	if len(hits) == 0 {
		return nil, nil
	}

	// Order the hits by stages, best first, ties in row order: by counting
	// into buckets when there are few, else by comparison.
	nPre, nKw := len(m.prefixes)+1, len(m.keywords)+1
	nBuckets := (len(m.phrases) + 1) * nPre * nKw
	bucket := func(s keywordScore) int { // 0 is the best bucket
		return nBuckets - 1 - ((s.phrases*nPre+s.prefixes)*nKw + s.keywords)
	}
	if nBuckets <= keywordBucketsMax && nBuckets <= 4*len(hits) {
		start := make([]int, nBuckets+1)
		for _, h := range hits {
			start[bucket(h.score)+1]++
		}
		for b := 1; b <= nBuckets; b++ {
			start[b] += start[b-1]
		}
		sorted := make([]hit, len(hits))
		for _, h := range hits {
			b := bucket(h.score)
			sorted[start[b]] = h
			start[b]++
		}
		hits = sorted
	} else {
		slices.SortFunc(hits, func(a, b hit) int {
			return cmp.Or(compareKeywordScores(a.score, b.score), cmp.Compare(a.row, b.row))
		})
	}

	// Find the end of the last stage group needed for maxResults distinct
	// texts; count occurrences up to there.
	end := len(hits)
	if maxResults > 0 {
		distinct := make(map[string]bool)
		for i := 0; i < len(hits); i++ {
			distinct[DocText(docs[hits[i].row])] = true
			if len(distinct) >= maxResults {
				end = i + 1
				for end < len(hits) && bucket(hits[end].score) == bucket(hits[i].score) {
					end++
				}
				break
			}
		}
	}
	hits = hits[:end]
	for i := range hits {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		hits[i].score.occurrences = m.occurrences(hits[i].norm, hits[i].sig)
	}
	// Within a stage group, more occurrences first; ties keep row order.
	slices.SortStableFunc(hits, func(a, b hit) int { return compareKeywordScores(a.score, b.score) })

	var out []*ai.Document
	seen := make(map[string]bool)
	for _, h := range hits {
		text := DocText(docs[h.row])
		if seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, docs[h.row])
		if maxResults > 0 && len(out) == maxResults {
			break
		}
	}
	return out, nil
}

// LocalvecKeywordSearch searches the documents of the localvec database file
// at dbPath (the __db_<name>.json file written by LocalvecStore or by
// Genkit's localvec plugin) for query, with the three-stage strategy:
// documents containing a quoted phrase of the query (exact, case-insensitive
// substring) rank first, then documents containing the 7-rune prefix of a
// long keyword (8 runes or more, bridging inflections), then documents
// containing the other keywords as substrings; within a stage, documents
// matching more terms rank higher. Results are deduplicated by text and
// capped at maxResults (no cap when maxResults <= 0).
//
// Keywords come from ExtractKeywords(query, stopWords) outside the quotes.
// filter, when non-nil, keeps only documents whose metadata it accepts. A
// query without keywords or phrases (only stop words or punctuation) returns
// no documents and no error; metacharacters such as % _ ' \ match literally.
//
// It reads and parses the whole file on every call (embeddings are skipped,
// not decoded); an app holding a LocalvecStore should call its KeywordSearch
// method instead, which searches in memory. A missing file is an error
// wrapping fs.ErrNotExist.
func LocalvecKeywordSearch(dbPath string, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	plan := newKeywordPlan(query, stopWords)
	f, err := os.Open(dbPath)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer f.Close()
	var data map[string]struct {
		Doc *ai.Document `json:"doc"`
	}
	if err := json.NewDecoder(f).Decode(&data); err != nil {
		return nil, fmt.Errorf("keyword search: parse %s: %w", dbPath, err)
	}
	if plan.empty() {
		return nil, nil
	}
	ids := make([]string, 0, len(data))
	for id := range data {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	docs := make([]*ai.Document, len(ids))
	for i, id := range ids {
		docs[i] = data[id].Doc
	}
	return plan.search(context.Background(), docs, maxResults, filter)
}
