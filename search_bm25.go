package engine

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/ai"
)

// BM25 parameters: term-frequency saturation k1 and length normalisation b,
// the usual values (Lucene, SQLite FTS5).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25HeadingWeight is how many times a term of the heading field (the
// breadcrumb and the merged headings) counts, in the term frequency and
// the document length alike.
const bm25HeadingWeight = 3

// Heading pairs: term dependence in the heading field. Besides its terms,
// each heading of the field (an element of the breadcrumb or a merged
// heading) is indexed with pair terms "a b" for every two of its terms at
// most bm25PairWindow apart, in order ("Properties on Targets" gives
// "properti on", "properti target", "on target"), each counted
// bm25PairWeight times (in the length too). A query scores the pairs of
// its consecutive keywords (stop words left out) as further terms: a
// chunk whose heading holds the query's words together outranks one that
// has them scattered. A window of 2 lets one word (mostly a stop word)
// stand between; the dev sets score alike with 1, 2 or 3 and with
// weights 1 or 3 (docs/retrieval.md).
const (
	bm25PairWindow = 2
	bm25PairWeight = 1
)

// bm25HeadingTerms calls fn with each term of the heading field heading
// as the index counts it: every analyzer term with weight
// bm25HeadingWeight, then every heading pair with weight bm25PairWeight.
// Both stores index a chunk's heading field through it.
func bm25HeadingTerms(an *textAnalyzer, heading string, fn func(term string, weight int)) {
	if heading == "" {
		return
	}
	var ts []string
	for line := range strings.SplitSeq(heading, "\n") {
		for elem := range strings.SplitSeq(line, " > ") {
			ts = ts[:0]
			an.tokenize(elem, func(_, term string, extra bool) {
				fn(term, bm25HeadingWeight)
				if !extra { // pairs of the words as written
					ts = append(ts, term)
				}
			})
			for i := range ts {
				for d := 1; d <= bm25PairWindow && i+d < len(ts); d++ {
					fn(bm25Pair(ts[i], ts[i+d]), bm25PairWeight)
				}
			}
		}
	}
}

// bm25Pair returns the pair term of terms a and b (terms never contain a
// space).
func bm25Pair(a, b string) string { return a + " " + b }

// bm25HeadingText returns the text of a chunk's heading field: its
// breadcrumb and its merged headings (string metadata values only), one
// per line.
func bm25HeadingText(meta map[string]any) string {
	crumb, _ := meta[MetaBreadcrumb].(string)
	heads, _ := meta[MetaHeadings].(string)
	return bm25JoinHeading(crumb, heads)
}

// bm25JoinHeading returns the heading field of a chunk with breadcrumb
// crumb and merged headings heads.
func bm25JoinHeading(crumb, heads string) string {
	switch {
	case heads == "":
		return crumb
	case crumb == "":
		return heads
	}
	return crumb + "\n" + heads
}

// bm25MaxTerms bounds the distinct terms of a query that are scored; the
// rest are ignored (a query is not a document).
const bm25MaxTerms = 64

// bm25Posting is one document of a term's posting list: its slot and the
// term's frequency in it.
type bm25Posting struct {
	slot int32
	tf   int32
}

// bm25Index is an in-memory inverted index ranking documents with Okapi
// BM25. Documents are rows 0..n-1 of a caller's table (LocalvecStore's
// rows); each row has a slot, the position its postings refer to, so that
// rows can be removed and compacted without rewriting the postings: a
// removed row's slot is marked dead and skipped, and the postings are
// rebuilt without dead slots once those outnumber the live ones. Not safe
// for concurrent use: LocalvecStore guards it with its mutex (queries
// shared, writes exclusive).
type bm25Index struct {
	an       *textAnalyzer
	terms    map[string]int32
	postings [][]bm25Posting
	slotLen  []int32 // length in terms of each slot's document
	slotRow  []int32 // row of each slot, -1 when removed
	rowSlot  []int32
	total    int64 // summed length of the live documents
	dead     int
	// version counts the changes (rows added or dropped): the page names
	// (bm25View.pages) are cached for one version.
	version uint64
	pagesMu sync.Mutex
	pages   *keywordPages
	pagesAt uint64
}

// newBM25Index returns an empty index analysing text with an.
func newBM25Index(an *textAnalyzer) *bm25Index {
	return &bm25Index{an: an, terms: make(map[string]int32)}
}

// bm25DocTerms returns the term frequencies of a chunk for BM25F ranking
// and its length in terms: the analyzer terms of text, plus the weighted
// terms and pairs of its heading field (bm25HeadingTerms of the breadcrumb
// and merged headings in meta). The map's keys may share memory with a
// lower-cased copy of the text: clone them to keep them.
func bm25DocTerms(an *textAnalyzer, text string, meta map[string]any) (map[string]int32, int32) {
	tf := make(map[string]int32)
	n := int32(0)
	an.tokens(text, func(_, term string) {
		tf[term]++
		n++
	})
	bm25HeadingTerms(an, bm25HeadingText(meta), func(term string, w int) {
		tf[term] += int32(w)
		n += int32(w)
	})
	return tf, n
}

// add appends doc as the next row.
func (x *bm25Index) add(doc *ai.Document) {
	x.addTerms(bm25Terms(x.an, doc))
}

// bm25Terms is bm25DocTerms of doc's text and metadata; a nil doc has no
// terms.
func bm25Terms(an *textAnalyzer, doc *ai.Document) (map[string]int32, int32) {
	if doc == nil {
		return nil, 0
	}
	return bm25DocTerms(an, DocText(doc), doc.Metadata)
}

// bm25AddBlock is the number of documents addDocs analyses at once.
const bm25AddBlock = 1024

// addDocs appends docs as the next rows, as add would one at a time: blocks
// of them are analysed in parallel, one goroutine per CPU, and then
// added in order, so the index is the same.
func (x *bm25Index) addDocs(docs []*ai.Document) {
	type terms struct {
		tf map[string]int32
		n  int32
	}
	parts := runtime.GOMAXPROCS(0)
	if len(docs) < 64 || parts == 1 {
		for _, d := range docs {
			x.add(d)
		}
		return
	}
	buf := make([]terms, min(len(docs), bm25AddBlock))
	for len(docs) > 0 {
		block := docs[:min(len(docs), bm25AddBlock)]
		var wg sync.WaitGroup
		for p := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := p * len(block) / parts; i < (p+1)*len(block)/parts; i++ {
					buf[i].tf, buf[i].n = bm25Terms(x.an, block[i])
				}
			}()
		}
		wg.Wait()
		for i := range block {
			x.addTerms(buf[i].tf, buf[i].n)
			buf[i] = terms{}
		}
		docs = docs[len(block):]
	}
}

// addTerms appends a document of n terms with the term frequencies tf as
// the next row.
func (x *bm25Index) addTerms(tf map[string]int32, n int32) {
	slot := int32(len(x.slotLen))
	for term, f := range tf {
		id, ok := x.terms[term]
		if !ok {
			id = int32(len(x.postings))
			x.terms[strings.Clone(term)] = id
			x.postings = append(x.postings, nil)
		}
		x.postings[id] = append(x.postings[id], bm25Posting{slot, f})
	}
	x.version++
	x.slotLen = append(x.slotLen, n)
	x.slotRow = append(x.slotRow, int32(len(x.rowSlot)))
	x.rowSlot = append(x.rowSlot, slot)
	x.total += int64(n)
}

// drop marks row as removed; compact must follow once every removed row
// is dropped and the kept ones are moved.
func (x *bm25Index) drop(row int) {
	x.version++
	slot := x.rowSlot[row]
	x.slotRow[slot] = -1
	x.total -= int64(x.slotLen[slot])
	x.dead++
}

// move records that row from is now row to (to <= from).
func (x *bm25Index) move(from, to int) {
	slot := x.rowSlot[from]
	x.rowSlot[to] = slot
	x.slotRow[slot] = int32(to)
}

// truncate ends a removal: n rows are left. When dead slots outnumber live
// ones, the postings are rebuilt without them.
func (x *bm25Index) truncate(n int) {
	if x == nil {
		return
	}
	x.rowSlot = x.rowSlot[:n]
	if x.dead <= n && x.dead < 1024 || x.dead == 0 {
		return
	}
	newSlot := make([]int32, len(x.slotLen))
	lens := make([]int32, 0, n)
	for s := range x.slotLen {
		newSlot[s] = -1
		if r := x.slotRow[s]; r >= 0 {
			newSlot[s] = int32(len(lens))
			lens = append(lens, x.slotLen[s])
		}
	}
	for id, ps := range x.postings {
		w := ps[:0]
		for _, p := range ps {
			if ns := newSlot[p.slot]; ns >= 0 {
				w = append(w, bm25Posting{ns, p.tf})
			}
		}
		x.postings[id] = slices.Clip(w)
	}
	slotRow := make([]int32, len(lens))
	for r, s := range x.rowSlot {
		ns := newSlot[s]
		x.rowSlot[r] = ns
		slotRow[ns] = int32(r)
	}
	x.slotLen, x.slotRow, x.dead = lens, slotRow, 0
}

// live returns the number of rows.
func (x *bm25Index) live() int { return len(x.rowSlot) }

// docFreq returns the number of live rows holding term.
func (x *bm25Index) docFreq(term string) int {
	id, ok := x.terms[term]
	if !ok {
		return 0
	}
	return x.docFreqOf(id)
}

// docFreqOf returns the number of live rows in the postings of term id.
func (x *bm25Index) docFreqOf(id int32) int {
	df := 0
	for _, q := range x.postings[id] {
		if x.slotRow[q.slot] >= 0 {
			df++
		}
	}
	return df
}

// bm25TermScore returns a term's share of a document's BM25 score: its
// IDF times tf(k1+1)/(tf + k1(1 - b + b·length/avg)), for a term found tf
// times in a document of length terms, avg the average length. LocalvecStore
// and PgvecStore score through it, so that their scores agree to the bit.
func bm25TermScore(idf float64, tf, length int32, avg float64) float64 {
	f := float64(tf)
	norm := bm25K1 * (1 - bm25B + bm25B*float64(length)/avg)
	return idf * f * (bm25K1 + 1) / (f + norm)
}

// bm25IDF returns the inverse document frequency of a term found in df of
// n documents (Lucene's form, never negative).
func bm25IDF(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25Plan is a keyword query analysed for the index: the quoted phrases
// (lower-case, white space collapsed; matched as substrings of the
// normalised text) with their terms, the terms of the other words, and the
// heading pairs of those words.
type bm25Plan struct {
	phrases     []string
	phraseTerms [][]string
	keywords    []string // distinct terms outside the quotes
	pairs       []string // distinct pair terms of consecutive keywords (they only add to the score)
	// stops are the distinct terms of the stop-listed words outside the
	// quotes that are not keywords, in query order; keepStopWords turns
	// those the index's statistics call content into keywords or optional
	// terms.
	stops []string
	// optional are stop-listed terms kept for their rarity: scored like
	// the pairs, in no stage.
	optional []string
	// stopPairs are the question pairs of two stop-listed words;
	// keepStopWords adds them to pairs when the stop words become the
	// keywords.
	stopPairs []string
	// an is the analyzer the plan's terms come from (the list rule reads
	// headings and page names with it).
	an *textAnalyzer
	// question is whether the query has a question mark (the long-page
	// and proximity rules leave questions alone).
	question bool
	// query and stopWords are what the plan was made from; langStops maps
	// each stop-listed word of the query that is a stop word of
	// stopWordLanguages only to the bit set of those languages (bit i:
	// stopWordLanguages[i]). keepStopWords makes a plan again without
	// those of languages the index does not hold, and counts them in
	// freed.
	query     string
	stopWords map[string]bool
	langStops map[string]uint8
	freed     int
}

// newBM25Plan analyses query: phrases as ExtractQuotedPhrases finds them,
// the words outside them without the stop words (compared lower-case,
// before stemming), and the pairs of those words that follow each other
// once the stop words are left out; the stop words' terms are kept aside
// for keepStopWords, which every store calls with its statistics.
func newBM25Plan(an *textAnalyzer, query string, stopWords map[string]bool) bm25Plan {
	phrases, rest := splitQuoted(query)
	p := bm25Plan{an: an, question: strings.ContainsAny(query, "?？"), query: query, stopWords: stopWords}
	for _, ph := range phrases {
		lp := keywordNormalize(ph)
		if lp == "" || slices.Contains(p.phrases, lp) {
			continue
		}
		p.phrases = append(p.phrases, lp)
		p.phraseTerms = append(p.phraseTerms, an.terms(lp))
	}
	prev := ""
	var seq []string   // the terms of every word as written, stop words included
	var seqStop []bool // whether seq[i]'s word is stop-listed
	an.tokenize(rest, func(word, term string, extra bool) {
		if !extra {
			seq = append(seq, term)
			seqStop = append(seqStop, stopWords[word])
		}
		if stopWords[word] {
			p.noteLanguageStop(word)
			if !slices.Contains(p.stops, term) {
				p.stops = append(p.stops, term)
			}
			return
		}
		if !slices.Contains(p.keywords, term) {
			p.keywords = append(p.keywords, term)
		}
		if extra {
			return // pairs of the words as written
		}
		if prev != "" && prev != term {
			if pt := bm25Pair(prev, term); !slices.Contains(p.pairs, pt) {
				p.pairs = append(p.pairs, pt)
			}
		}
		prev = term
	})
	p.pairs, p.stopPairs = bm25AppendSeqPairs(p.pairs, nil, seq, seqStop)
	p.stops = slices.DeleteFunc(p.stops, func(t string) bool { return slices.Contains(p.keywords, t) })
	return p
}

// empty reports whether the plan can match nothing, stop-listed words
// aside (keepStopWords may still find content among them).
func (p bm25Plan) empty() bool { return len(p.phrases) == 0 && len(p.keywords) == 0 }

// blank reports whether the query has nothing to search: no phrase, no
// keyword and no stop-listed word.
func (p bm25Plan) blank() bool { return p.empty() && len(p.stops) == 0 }

// bm25StopRareRatio is the document frequency, as a share of the chunks,
// up to which a stop-listed query word counts as content: a word that
// few chunks hold ("show" in a manual of commands, "cycle" is no stop
// word anyway) carries meaning in this corpus, one most chunks hold
// ("the", "is", "how") does not.
const bm25StopRareRatio = 0.02

// keepStopWords decides, from the index's statistics, which stop-listed
// words of the query stay: n is the number of chunks and df returns a
// term's document frequency. When the query has no other keyword and no
// phrase, its stop-listed words become the keywords (a query is never
// reduced below its content: "What is it?" searches "what", "is", "it",
// and its stop-word pairs "what is", "is it" join the pairs); otherwise
// those held by at most bm25StopRareRatio of the chunks become optional
// terms, scored but in no stage. Before that, stop words of a language
// the index does not hold are no stop words (dropForeignStops). The
// plan's stop list is emptied, so calling it twice changes nothing.
// Every store calls it before ranking, with its own statistics, df
// answering at least for statTerms.
func (p *bm25Plan) keepStopWords(n int, df func(term string) int) {
	p.dropForeignStops(n, df)
	stops := p.stops
	p.stops = nil
	if len(stops) == 0 || n <= 0 {
		return
	}
	dfs := make([]int, len(stops))
	for i, t := range stops {
		dfs[i] = df(t)
	}
	p.keywords = slices.Clone(p.keywords) // the plan may be a copy sharing them
	content := len(p.phrases) > 0 || len(p.keywords) > 0
	if !content {
		p.pairs = slices.Concat(p.pairs, p.stopPairs)
	}
	for i, t := range stops {
		switch {
		case dfs[i] == 0:
		case !content:
			p.keywords = append(p.keywords, t)
		case float64(dfs[i]) <= bm25StopRareRatio*float64(n):
			p.optional = append(p.optional, t)
		}
	}
}

// bm25View is a bm25Index with the documents of its rows as the one
// keyword ranker reads it (keywordIndex): ordinals are posting slots;
// rows[r] is row r's document, ids[r] its ID; filter, when non-nil, must
// accept a row's metadata.
type bm25View struct {
	x      *bm25Index
	rows   []*ai.Document
	ids    []string
	filter func(map[string]any) bool
	avg    float64
}

// search ranks the rows of docs (docs[r] is row r) for the plan with the
// one keyword ranker (rankKeywords): rows with more of the quoted phrases
// first, then rows with every keyword, then the others; within a stage by
// BM25F score over all the query's terms, ties by keys[row] (the
// document's ID, derived from its content: the order does not depend on
// the order rows were added). Rows with the same text are returned once;
// at most maxResults (all when <= 0); filter, when non-nil, must accept a
// row's metadata.
func (x *bm25Index) search(ctx context.Context, p bm25Plan, docs []*ai.Document, keys []string, maxResults int, filter func(map[string]any) bool) ([]*ai.Document, error) {
	return rankKeywords(ctx, x.view(docs, keys, filter), p, maxResults)
}

// view returns x over docs and keys for one search.
func (x *bm25Index) view(docs []*ai.Document, keys []string, filter func(map[string]any) bool) *bm25View {
	v := &bm25View{x: x, rows: docs, ids: keys, filter: filter, avg: 1}
	if n := x.live(); n > 0 && x.total > 0 {
		v.avg = float64(x.total) / float64(n)
	}
	return v
}

func (v *bm25View) chunks(context.Context) (int, error) { return v.x.live(), nil }

func (v *bm25View) docFreqs(_ context.Context, terms []string) ([]int, error) {
	out := make([]int, len(terms))
	for i, t := range terms {
		out[i] = v.x.docFreq(t)
	}
	return out, nil
}

func (v *bm25View) postings(_ context.Context, term string, n int, add func(int, float64)) (int, error) {
	x := v.x
	id, ok := x.terms[term]
	if !ok {
		return 0, nil
	}
	df := x.docFreqOf(id)
	if df == 0 {
		return 0, nil
	}
	idf := bm25IDF(n, df)
	for _, q := range x.postings[id] {
		if x.slotRow[q.slot] >= 0 {
			add(int(q.slot), bm25TermScore(idf, q.tf, x.slotLen[q.slot], v.avg))
		}
	}
	return df, nil
}

// doc returns the document of slot ord (nil for a removed row or one
// without a document).
func (v *bm25View) doc(ord int) *ai.Document {
	if r := v.x.slotRow[ord]; r >= 0 && int(r) < len(v.rows) {
		return v.rows[r]
	}
	return nil
}

func (v *bm25View) texts(_ context.Context, ords []int, fn func(int, string)) error {
	for _, o := range ords {
		if d := v.doc(o); d != nil {
			fn(o, DocText(d))
		}
	}
	return nil
}

func (v *bm25View) scanTexts(ctx context.Context, fn func(int, string)) error {
	for s := range v.x.slotLen {
		if s%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if d := v.doc(s); d != nil {
			fn(s, DocText(d))
		}
	}
	return nil
}

func (v *bm25View) keys(_ context.Context, ords []int) ([]string, error) {
	out := make([]string, len(ords))
	for i, o := range ords {
		if r := int(v.x.slotRow[o]); r >= 0 && r < len(v.ids) {
			out[i] = v.ids[r]
		}
	}
	return out, nil
}

func (v *bm25View) docs(_ context.Context, ords []int, _ func(string) bool) ([]*ai.Document, error) {
	out := make([]*ai.Document, len(ords))
	for i, o := range ords {
		if d := v.doc(o); d != nil && (v.filter == nil || v.filter(d.Metadata)) {
			out[i] = d
		}
	}
	return out, nil
}

// pages returns the rows' URLs with their chunk counts, kept for the
// index's version (the rows change only with it).
func (v *bm25View) pages(context.Context) (*keywordPages, error) {
	x := v.x
	x.pagesMu.Lock()
	defer x.pagesMu.Unlock()
	if x.pages != nil && x.pagesAt == x.version {
		return x.pages, nil
	}
	pages := newKeywordPages()
	for _, d := range v.rows[:min(len(v.rows), x.live())] {
		if d != nil {
			url, _ := d.Metadata[MetaURL].(string)
			pages.add(url, 1)
		}
	}
	x.pages, x.pagesAt = pages, x.version
	return pages, nil
}
