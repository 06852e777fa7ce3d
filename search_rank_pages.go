package engine

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"golang.org/x/text/unicode/norm"
)

// Long pages, term proximity and names: the rules for queries that
// describe a page instead of naming it ("allocate and free dynamic
// memory" for malloc(3)). Among a keyword search's best keywordReweighTop
// chunks, in their stages (the phrase and every-keyword stages keep their
// order), the score changes three times before the list rule:
//
//   - Long pages. A page of many chunks (a migration guide, perlfunc,
//     openssl(1)) has many chances that one of its chunks holds a
//     description's common words by chance, and the pages such a
//     description means are often short. A chunk's score is divided by
//     1 + pagePriorWeight·ln(chunks of its page). Not when the chunk's own
//     headings hold a keyword of the query (a long page's section named
//     by the question is what it asks for), and not for a query with an
//     identifier (a name with . _ - or :): it names what it wants, and the
//     rule cost there.
//   - Proximity (BM25TP, Rasolofo and Savoy 2003). A description's words
//     stand together in the page that does what it says, scattered in
//     others. Every two distinct keywords at most proximityWindow words
//     apart in a chunk's text add 1/d² to their pair's accumulator; a
//     chunk gains, per pair, min(1, the keywords' IDF) times the
//     accumulator saturated as BM25 saturates a term frequency (k1). Only
//     for a query of at least proximityMinKeywords keywords.
//   - Names. A description's words often stand in the name of the page
//     it means ("memory BIO" for BIO_s_mem(3), "FILE bio" for
//     BIO_s_file(3)), or in the headings of the section it means. A chunk
//     gains nameWeight times the IDF of each keyword its names hold: its
//     page's name (pageName, the file name) and its own headings. Of an
//     identifier in the query only the whole counts, not its parts
//     ("color.status" is not the git-status page). The headings count
//     with the page name so that a section the query names keeps its
//     place above pages whose names share a word ("Package Registry"
//     against CMAKE_EXPORT_PACKAGE_REGISTRY).
//
// None of them touches a question (a "?": its words name what it asks,
// and the rules cost on the question-shaped sets) or a query with a CJK
// keyword (a CJK run's bigrams stand together by construction, and the
// Japanese, Chinese and Korean sets lost 0.002 to 0.006 to the long-page
// rule). A CJK query has a rule of its own, verbatim: a chunk holding the
// query as written gains verbatimWeight of its score (cjkVerbatim).
//
// Measured on every dev set (docs/retrieval.md, "Long pages and
// proximity"): the describing sets gain, the others stay within 0.005.

const (
	// keywordReweighTop is how many of a keyword search's best chunks
	// the rules reorder: as deep as the fused lists read (listRankTop). A
	// search reads one more, to see a tie across the window's end.
	keywordReweighTop = listRankTop
	// pagePriorWeight is the weight of a page's length in chunks.
	pagePriorWeight = 0.1
	// proximityWindow is the farthest two keywords count as near, in words.
	proximityWindow = 5
	// proximityMinKeywords is the fewest keywords a query has for the
	// proximity rule: a pair alone is the heading-pair rule's.
	proximityMinKeywords = 3
	// proximityWeight scales the proximity score against BM25's.
	proximityWeight = 1.0
	// nameWeight scales the IDF of a keyword a chunk's names hold.
	nameWeight = 1.5
	// verbatimWeight is the share a chunk's score gains when it holds a
	// CJK query as written (cjkVerbatim).
	verbatimWeight = 0.5
)

// keywordPages is what the ranker knows of an index's pages: the names of
// its URLs (pageName; the list rule) and the chunks of each URL (the
// long-page rule).
type keywordPages struct {
	names  map[string]bool
	chunks map[string]int
}

// newKeywordPages returns an empty keywordPages.
func newKeywordPages() *keywordPages {
	return &keywordPages{names: make(map[string]bool), chunks: make(map[string]int)}
}

// add counts n chunks of the page at url ("" is no page).
func (p *keywordPages) add(url string, n int) {
	if url == "" {
		return
	}
	p.chunks[url] += n
	if name := pageName(url); name != "" {
		p.names[name] = true
	}
}

// reweighRules reports which of the rules apply to p: the long-page rule,
// the proximity rule and the name rule.
func (p bm25Plan) reweighRules() (prior, proximity, named bool) {
	if p.question || len(p.keywords) == 0 {
		return false, false, false
	}
	prior = true
	cjk := false
	for _, k := range p.keywords {
		prior = prior && !strings.ContainsAny(k, "._-:")
		cjk = cjk || strings.IndexFunc(k, isCJKRune) >= 0
	}
	if cjk {
		return false, false, false
	}
	return prior, len(p.keywords) >= proximityMinKeywords, true
}

// cjkVerbatim returns what the verbatim rule looks for in a chunk: a
// query with at least two CJK characters, no quoted phrase and no question
// mark, and no space between two Chinese or Japanese characters
// (cjkSpaced), in cjkCompact form ("" for any other query). Chinese and
// Japanese write no spaces, so such a query is a phrase as it stands, and a chunk
// holding it as written (a man page's NAME line holds its description)
// gains verbatimWeight of its score; its bigrams alone do not say they
// stand in that order. Measured on the CJK sets (docs/retrieval.md).
func (p bm25Plan) cjkVerbatim() string {
	if p.question || len(p.phrases) > 0 || strings.ContainsAny(p.query, `"“「『`) || cjkSpaced(p.query) {
		return ""
	}
	q := cjkCompact(p.query)
	n := 0
	for _, r := range q {
		if isCJKRune(r) {
			n++
		}
	}
	if n < 2 {
		return ""
	}
	return q
}

// cjkSpaced reports whether query puts white space between two Chinese or
// Japanese characters (cjkJoinable), which write none inside a phrase: the
// query is several terms ("term subterm" of a book's index), not one
// phrase. Korean, which puts spaces between words, is not.
func cjkSpaced(query string) bool {
	var last rune
	space := false
	for _, r := range query {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case space && cjkJoinable(last) && cjkJoinable(r) && !unicode.IsPunct(last) && !unicode.IsPunct(r):
			return true
		}
		space, last = false, r
	}
	return false
}

// cjkCompact returns text in NFKC, lower-cased, with runs of white space
// collapsed to one space and none left between two CJK characters (a line
// break inside a Chinese or Japanese sentence), trimmed: the form the
// verbatim rule compares.
func cjkCompact(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	cjkCompactEach(norm.NFKC.String(text), func(r rune) bool {
		b.WriteRune(r)
		return true
	})
	return b.String()
}

// cjkCompactEach calls emit with each character of cjkCompact's form of
// text, which must be in NFKC, until emit returns false.
func cjkCompactEach(text string, emit func(rune) bool) {
	var last rune
	space, started := false, false
	for _, r := range text {
		if unicode.IsSpace(r) {
			space = started
			continue
		}
		if space && !(isCJKRune(last) && isCJKRune(r)) && !emit(' ') {
			return
		}
		space, started, last = false, true, r
		if r < 0x3000 || r > 0x9FFF && (r < 0xAC00 || r > 0xD7A3) {
			r = unicode.ToLower(r) // kana, Han and Hangul have no case
		}
		if !emit(r) {
			return
		}
	}
}

// cjkMatcher finds a cjkCompact form in texts without building their
// compact forms (the verbatim rule reads the best 40 chunks of every CJK
// query): Knuth-Morris-Pratt over the characters cjkCompactEach gives.
type cjkMatcher struct {
	q    []rune
	fail []int
}

// newCJKMatcher returns the matcher of q, a cjkCompact form.
func newCJKMatcher(q string) *cjkMatcher {
	m := &cjkMatcher{q: []rune(q)}
	m.fail = make([]int, len(m.q))
	for i, k := 1, 0; i < len(m.q); i++ {
		for k > 0 && m.q[i] != m.q[k] {
			k = m.fail[k-1]
		}
		if m.q[i] == m.q[k] {
			k++
		}
		m.fail[i] = k
	}
	return m
}

// in reports whether cjkCompact(text) contains the matcher's form. It is
// cjkCompactEach's loop with the match inlined: it reads every character
// of 40 chunks per CJK query.
func (m *cjkMatcher) in(text string) bool {
	if len(m.q) == 0 {
		return true
	}
	if !norm.NFKC.IsNormalString(text) {
		text = norm.NFKC.String(text)
	}
	k := 0
	step := func(r rune) bool {
		for k > 0 && r != m.q[k] {
			k = m.fail[k-1]
		}
		if r == m.q[k] {
			k++
		}
		return k == len(m.q)
	}
	var last rune
	space, started := false, false
	for _, r := range text {
		if r < utf8.RuneSelf && r != ' ' && r > '\r' || r >= 0x3000 && r <= 0x9FFF || r >= 0xAC00 && r <= 0xD7A3 {
			// Neither white space nor a letter with case (CJK), or ASCII
			// other than white space: the common cases, without tables.
			if space && !(isCJKRune(last) && isCJKRune(r)) && step(' ') {
				return true
			}
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			space, started, last = false, true, r
			if step(r) {
				return true
			}
			continue
		}
		if unicode.IsSpace(r) {
			space = started
			continue
		}
		if space && !(isCJKRune(last) && isCJKRune(r)) && step(' ') {
			return true
		}
		space, started, last = false, true, r
		if step(unicode.ToLower(r)) {
			return true
		}
	}
	return false
}

// reweighKeywordDocs applies the long-page, proximity and name rules to
// the best keywordReweighTop of docs, a keyword search's result best
// first, whose ranks[i] holds docs[i]'s stage and score (one more than the
// window, when there are more, tells a tie across its end): it reorders
// them within their stages by the new scores, in place (equal ones keep
// their order). pairs[i], when pairs is not nil, holds docs[i]'s
// proximity pairs read by the store's ranking pass (pgvecDocRanks).
func reweighKeywordDocs(ctx context.Context, ix keywordIndex, p bm25Plan, docs []*ai.Document, ranks []keywordHit, pairs []*proximityPairs) error {
	top := min(len(docs), len(ranks), keywordReweighTop)
	// Chunks tied with the first one past the window stay where they are:
	// which of them the window holds depends on the store's chunk IDs.
	for top > 0 && top < min(len(docs), len(ranks)) && nearTie(ranks[top-1], ranks[top]) {
		top--
	}
	prior, proximity, named := p.reweighRules()
	verbatim := p.cjkVerbatim()
	if top < 2 || !prior && !proximity && !named && verbatim == "" {
		return nil
	}
	scores := make([]float64, top)
	for i := range top {
		scores[i] = ranks[i].score
	}
	if verbatim != "" {
		m := newCJKMatcher(verbatim)
		for i, d := range docs[:top] {
			if m.in(DocText(d)) {
				scores[i] *= 1 + verbatimWeight
			}
		}
	}
	if prior {
		pages, err := ix.pages(ctx)
		if err != nil {
			return err
		}
		for i, d := range docs[:top] {
			url, _ := d.Metadata[MetaURL].(string)
			if c := pages.chunks[url]; c > 1 && !headingsHoldKeyword(p, d) {
				scores[i] /= 1 + pagePriorWeight*math.Log(float64(c))
			}
		}
	}
	if proximity || named {
		n, err := ix.chunks(ctx)
		if err != nil {
			return err
		}
		dfs, err := ix.docFreqs(ctx, p.keywords)
		if err != nil {
			return err
		}
		idfs := make([]float64, len(p.keywords))
		weights := make([]float64, len(p.keywords))
		for i, df := range dfs {
			idfs[i] = bm25IDF(n, df)
			weights[i] = min(1, idfs[i])
		}
		counted := p.nameKeywords()
		for i, d := range docs[:top] {
			switch {
			case proximity && pairs != nil:
				scores[i] += proximityWeight * pairs[i].score(weights)
			case proximity:
				scores[i] += proximityWeight * proximityScore(p, weights, DocText(d))
			}
			if named {
				scores[i] += nameWeight * nameScore(p, idfs, counted, d)
			}
		}
	}
	order := make([]int, top)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(ranks[b].stage, ranks[a].stage), cmp.Compare(scores[b], scores[a]))
	})
	ds, rs := slices.Clone(docs[:top]), slices.Clone(ranks[:top])
	for i, o := range order {
		docs[i], ranks[i] = ds[o], rs[o]
	}
	return nil
}

// nearTie reports whether a and b rank alike: the same stage and scores
// equal but for the last bits of a floating-point sum (stores sum a
// chunk's term scores in different orders).
func nearTie(a, b keywordHit) bool {
	return a.stage == b.stage && math.Abs(a.score-b.score) <= 1e-9*max(1, math.Abs(b.score))
}

// headingsHoldKeyword reports whether doc's own headings (breadcrumb and
// merged headings) hold some keyword of p.
func headingsHoldKeyword(p bm25Plan, doc *ai.Document) bool {
	head := bm25HeadingText(doc.Metadata)
	if head == "" {
		return false
	}
	found := false
	p.an.tokens(head, func(_, term string) {
		found = found || slices.Contains(p.keywords, term)
	})
	return found
}

// nameKeywords reports, per keyword of p, whether the name rule counts
// it: not when it is only a part of an identifier of the query (the
// identifier's whole counts).
func (p bm25Plan) nameKeywords() []bool {
	parts := map[string]bool{}
	for _, k := range p.keywords {
		if strings.ContainsAny(k, "._-:") {
			for _, t := range p.an.terms(k) {
				if t != k {
					parts[t] = true
				}
			}
		}
	}
	out := make([]bool, len(p.keywords))
	for i, k := range p.keywords {
		out[i] = !parts[k]
	}
	return out
}

// nameScore returns the name score of doc for p's keywords: the sum of
// idfs[i] over the counted keywords its names hold, its page's name and
// its own headings.
func nameScore(p bm25Plan, idfs []float64, counted []bool, doc *ai.Document) float64 {
	url, _ := doc.Metadata[MetaURL].(string)
	names := p.an.terms(pageName(url) + "\n" + bm25HeadingText(doc.Metadata))
	score := 0.0
	for i, k := range p.keywords {
		if counted[i] && slices.Contains(names, k) {
			score += idfs[i]
		}
	}
	return score
}

// proximityScore returns the proximity score of text for p's keywords,
// weights[i] the weight of keyword i: per pair of distinct keywords, the
// accumulated 1/d² of their occurrences at most proximityWindow words
// apart, saturated (k1) and weighted by the smaller of the two weights.
func proximityScore(p bm25Plan, weights []float64, text string) float64 {
	acc := newProximityPairs(len(p.keywords))
	p.an.tokenize(text, func(_, term string, extra bool) {
		acc.add(slices.Index(p.keywords, term), extra)
	})
	return acc.score(weights)
}

// proximityPairs accumulates proximityScore over a chunk's tokens, so
// that a pass reading the tokens for more (pgvecDocRanks) gives it too.
type proximityPairs struct {
	k      int
	pos    int       // the word position of the last token
	recent []proxOcc // the keyword occurrences of the last window of words
	acc    []float64 // per pair a < b of keywords, at a*k+b: the sum of 1/d²
}

// proxOcc is one occurrence of keyword kw at word position pos.
type proxOcc struct{ pos, kw int }

// newProximityPairs returns an empty accumulator for k keywords.
func newProximityPairs(k int) *proximityPairs {
	return &proximityPairs{k: k, pos: -1, acc: make([]float64, k*k)}
}

// add counts the next token of the text: kw is the index of its term
// among the keywords (-1 for none) and extra tells an identifier's extra
// term, which stands at the position of the word before it.
func (x *proximityPairs) add(kw int, extra bool) {
	if !extra {
		x.pos++
	}
	if kw < 0 {
		return
	}
	keep := x.recent[:0]
	for _, o := range x.recent {
		if x.pos-o.pos <= proximityWindow {
			keep = append(keep, o)
		}
	}
	x.recent = keep
	for _, o := range x.recent {
		if d := x.pos - o.pos; d > 0 && o.kw != kw {
			a, b := min(o.kw, kw), max(o.kw, kw)
			x.acc[a*x.k+b] += 1 / float64(d*d)
		}
	}
	x.recent = append(x.recent, proxOcc{x.pos, kw})
}

// score returns the saturated, weighted sum over the pairs.
func (x *proximityPairs) score(weights []float64) float64 {
	score := 0.0
	for a := range x.k {
		for b := a + 1; b < x.k; b++ {
			if v := x.acc[a*x.k+b]; v > 0 {
				score += min(weights[a], weights[b]) * v * (bm25K1 + 1) / (v + bm25K1)
			}
		}
	}
	return score
}
