package engine

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// The one keyword ranker. LocalvecStore's in-memory index, SQLiteStore's
// FTS5 index and PgvecStore's posting table rank a keyword search alike:
// each implements keywordIndex, the narrow view of its postings the
// ranker reads, and rankKeywords does the rest (the plan's stop-word rule,
// which terms are scored, BM25F summation, the phrase and every-keyword
// stages, order and ties, deduplication by text, the list rule of
// search_rank_lists.go, the cap). A ranking rule
// changes here, once, for every store. PgvecStore's threshold search
// (pgvecTopK) is an optimisation of the same order for queries without a
// quoted phrase; FuzzKeywordRankerStores holds them equal.

// keywordIndex is a store's keyword index as rankKeywords reads it. A
// chunk is named by an ordinal the index assigns (small, non-negative,
// stable for the duration of one search): LocalvecStore's posting slots,
// SQLite row IDs or PostgreSQL chunk keys numbered as first seen. An
// implementation serves one search on one snapshot of the store.
type keywordIndex interface {
	// chunks returns the number of chunks searched.
	chunks(ctx context.Context) (int, error)
	// docFreqs returns the document frequency of each of terms.
	docFreqs(ctx context.Context, terms []string) ([]int, error)
	// postings calls add with each chunk holding term and the term's
	// share of its BM25F score (bm25TermScore with bm25IDF(n, df), n the
	// chunk count) and returns df, the number of such chunks.
	postings(ctx context.Context, term string, n int, add func(ord int, score float64)) (int, error)
	// texts calls fn with the text of each chunk of ords.
	texts(ctx context.Context, ords []int, fn func(ord int, text string)) error
	// scanTexts calls fn with every chunk and its text.
	scanTexts(ctx context.Context, fn func(ord int, text string)) error
	// keys returns the chunk IDs of ords: equal scores rank by them (IDs
	// derive from a chunk's source, URL and content, so the order does
	// not depend on the index's history).
	keys(ctx context.Context, ords []int) ([]string, error)
	// docs returns the documents of ords, nil for one the search's filter
	// refuses; one whose text seen reports (a text already returned) may
	// be nil too, undecoded.
	docs(ctx context.Context, ords []int, seen func(text string) bool) ([]*ai.Document, error)
	// pages returns what the ranker knows of the index's pages: their
	// names (pageName of each URL, the list rule) and the chunks of each
	// URL (the long-page rule), filter or not. Shared: read only.
	pages(ctx context.Context) (*keywordPages, error)
}

// keywordHit is a chunk matching a plan: its ordinal, stage (2 per
// quoted phrase it contains, 1 more when it has every keyword) and BM25F
// score.
type keywordHit struct {
	ord   int
	stage int
	score float64
}

// compareKeywordHits orders hits best first by stage and score, then by
// ordinal (ties by chunk ID are settled later, see orderTies).
func compareKeywordHits(a, b keywordHit) int {
	return cmp.Or(cmp.Compare(b.stage, a.stage), cmp.Compare(b.score, a.score), cmp.Compare(a.ord, b.ord))
}

// sameRank reports whether a and b tie on stage and score.
func sameRank(a, b keywordHit) bool { return a.stage == b.stage && a.score == b.score }

// rankKeywords returns the chunks of ix matching plan p, best first,
// each text once, at most maxResults (all when <= 0): the ranking every
// store's keyword search shares (LocalvecKeywordSearch documents it).
func rankKeywords(ctx context.Context, ix keywordIndex, p bm25Plan, maxResults int) ([]*ai.Document, error) {
	keep := 0
	if maxResults > 0 {
		keep = 4 * maxResults // room for duplicate texts and filtered chunks
	}
	r, err := scoreKeywords(ctx, ix, &p)
	if err != nil || len(r) == 0 {
		return nil, err
	}
	// The rules after the cut reorder the best listRankTop: pick at
	// least those and one more (reweighKeywordDocs).
	most := maxResults
	if most > 0 && most <= keywordReweighTop {
		most = keywordReweighTop + 1
		keep = 4 * most
	}
	docs, ranks, err := pickKeywordHits(ctx, ix, r, keep, most)
	if err != nil {
		return nil, err
	}
	if err := reweighKeywordDocs(ctx, ix, p, docs, ranks, nil); err != nil {
		return nil, err
	}
	if docs, err = listsLast(ctx, ix, p, docs); err != nil {
		return nil, err
	}
	if maxResults > 0 && len(docs) > maxResults {
		docs = docs[:maxResults]
	}
	return docs, nil
}

// scoreKeywords returns the chunks of ix matching p with their stage and
// score, in no order; p's stop-listed words are decided on the way
// (keepStopWords, with ix's statistics).
func scoreKeywords(ctx context.Context, ix keywordIndex, p *bm25Plan) ([]keywordHit, error) {
	n, err := ix.chunks(ctx)
	if err != nil || n == 0 {
		return nil, err
	}
	if len(p.stops) > 0 {
		stops := p.statTerms()
		dfs, err := ix.docFreqs(ctx, stops)
		if err != nil {
			return nil, err
		}
		p.keepStopWords(n, func(t string) int { return dfs[slices.Index(stops, t)] })
	}
	if p.empty() {
		return nil, nil
	}
	// The scored terms: keywords, then phrase words, then heading pairs
	// and optional terms, each once; bit i of a chunk's mask says it holds
	// the i-th of them that some chunk holds (at most bm25MaxTerms).
	var terms []string
	add := func(ts ...string) {
		for _, t := range ts {
			if !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
		}
	}
	add(p.keywords...)
	for _, ts := range p.phraseTerms {
		add(ts...)
	}
	add(p.pairs...)
	add(p.optional...)

	var acc keywordAcc
	bit := make(map[string]int, len(terms))
	for _, t := range terms {
		if len(bit) == bm25MaxTerms {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b := uint64(1) << len(bit)
		df, err := ix.postings(ctx, t, n, func(ord int, s float64) { acc.add(ord, b, s) })
		if err != nil {
			return nil, err
		}
		if df > 0 {
			bit[t] = len(bit)
		}
	}
	// A keyword no chunk holds: none holds them all.
	allKw := true
	var kwMask uint64
	for _, t := range p.keywords {
		if b, ok := bit[t]; ok {
			kwMask |= 1 << b
		} else {
			allKw = false
		}
	}
	allKw = allKw && kwMask != 0

	// Phrases: 2 points where the phrase is a substring of the normalised
	// text, checked in the chunks holding all its words (every chunk for
	// a phrase without words).
	stage := make([]int32, len(acc.mask))
	if len(p.phrases) > 0 {
		masks := make([]uint64, len(p.phrases))
		scan := false
		for i, ts := range p.phraseTerms {
			for _, t := range ts {
				b, ok := bit[t]
				if !ok {
					masks[i] = math.MaxUint64 // a word no chunk holds: cannot occur
					break
				}
				masks[i] |= 1 << b
			}
			scan = scan || len(ts) == 0
		}
		check := func(ord int, text string) {
			norm := keywordNormalize(text)
			for i, ph := range p.phrases {
				if m := masks[i]; m != math.MaxUint64 && acc.maskOf(ord)&m == m && strings.Contains(norm, ph) {
					if ord >= len(stage) {
						stage = append(stage, make([]int32, ord+1-len(stage))...)
					}
					stage[ord] += 2
				}
			}
		}
		if scan {
			err = ix.scanTexts(ctx, func(ord int, text string) {
				if acc.maskOf(ord) == 0 {
					acc.touch(ord)
				}
				check(ord, text)
			})
		} else {
			var ords []int
			for _, ord := range acc.cand {
				for _, m := range masks {
					if m != math.MaxUint64 && acc.mask[ord]&m == m {
						ords = append(ords, ord)
						break
					}
				}
			}
			err = ix.texts(ctx, ords, check)
		}
		if err != nil {
			return nil, err
		}
	}

	hits := make([]keywordHit, 0, len(acc.cand))
	for _, ord := range acc.cand {
		h := keywordHit{ord: ord, score: acc.score[ord]}
		if ord < len(stage) {
			h.stage = int(stage[ord])
		}
		m := acc.mask[ord]
		if allKw && m&kwMask == kwMask {
			h.stage++
		}
		if h.stage == 0 && m&kwMask == 0 {
			continue // only phrase words, pairs or optional terms, not the phrase
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// keywordAcc accumulates the scores and term masks of the chunks a
// search's postings name, by ordinal, with the ordinals in order of first
// posting.
type keywordAcc struct {
	score []float64
	mask  []uint64
	seen  []bool
	cand  []int
}

// add adds score s and term bit b to chunk ord.
func (a *keywordAcc) add(ord int, b uint64, s float64) {
	a.touch(ord)
	a.score[ord] += s
	a.mask[ord] |= b
}

// touch makes ord a candidate.
func (a *keywordAcc) touch(ord int) {
	if ord >= len(a.score) {
		n := max(ord+1, 2*len(a.score), 256)
		a.score = append(a.score, make([]float64, n-len(a.score))...)
		a.mask = append(a.mask, make([]uint64, n-len(a.mask))...)
		a.seen = append(a.seen, make([]bool, n-len(a.seen))...)
	}
	if !a.seen[ord] {
		a.seen[ord] = true
		a.cand = append(a.cand, ord)
	}
}

// maskOf returns the term mask of ord (0 for a chunk no posting named).
func (a *keywordAcc) maskOf(ord int) uint64 {
	if ord < len(a.mask) {
		return a.mask[ord]
	}
	return 0
}

// pickKeywordHits returns the documents of hits in rank order, each text
// once, skipping those ix's filter refuses, at most maxResults (all when
// <= 0), and the hit of each. Only the best keep hits (all when keep <= 0
// or fewer), and those tied with the last of them, are sorted at first;
// the rest only when they are needed.
func pickKeywordHits(ctx context.Context, ix keywordIndex, hits []keywordHit, keep, maxResults int) ([]*ai.Document, []keywordHit, error) {
	var rest []keywordHit
	if keep > 0 && len(hits) > keep {
		worst := keywordKth(hits, keep)
		var head []keywordHit
		for _, h := range hits {
			if compareKeywordHits(h, worst) <= 0 || sameRank(h, worst) {
				head = append(head, h)
			} else {
				rest = append(rest, h)
			}
		}
		hits = head
	}
	var out []*ai.Document
	var ranks []keywordHit
	seen := make(map[string]bool)
	batch := 256
	if maxResults > 0 {
		batch = maxResults + maxResults/4 + 4
	}
	for part := range 2 {
		if part == 1 {
			if len(rest) == 0 {
				break
			}
			hits = rest
		}
		slices.SortFunc(hits, compareKeywordHits)
		tiedTo := 0
		for start := 0; start < len(hits); {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			end := min(start+batch, len(hits))
			for tiedTo < end {
				e, err := orderTies(ctx, ix, hits, tiedTo)
				if err != nil {
					return nil, nil, err
				}
				tiedTo = e
			}
			ords := make([]int, end-start)
			for i, h := range hits[start:end] {
				ords[i] = h.ord
			}
			docs, err := ix.docs(ctx, ords, func(text string) bool { return seen[text] })
			if err != nil {
				return nil, nil, err
			}
			for i, d := range docs {
				if d == nil || seen[DocText(d)] {
					continue
				}
				seen[DocText(d)] = true
				out, ranks = append(out, d), append(ranks, hits[start+i])
				if maxResults > 0 && len(out) == maxResults {
					return out, ranks, nil
				}
			}
			start = end
			batch *= 2
		}
	}
	return out, ranks, nil
}

// orderTies orders the hits from i that tie with hits[i] (same stage and
// score) by chunk ID, then ordinal, and returns the end of the tied run.
func orderTies(ctx context.Context, ix keywordIndex, hits []keywordHit, i int) (int, error) {
	end := i + 1
	for end < len(hits) && sameRank(hits[end], hits[i]) {
		end++
	}
	if end-i < 2 {
		return end, nil
	}
	ords := make([]int, end-i)
	for j, h := range hits[i:end] {
		ords[j] = h.ord
	}
	keys, err := ix.keys(ctx, ords)
	if err != nil {
		return 0, err
	}
	key := make(map[int]string, len(ords))
	for j, o := range ords {
		key[o] = keys[j]
	}
	slices.SortFunc(hits[i:end], func(a, b keywordHit) int {
		return cmp.Or(strings.Compare(key[a.ord], key[b.ord]), cmp.Compare(a.ord, b.ord))
	})
	return end, nil
}

// keywordKth returns the k-th best of hits (0 < k < len(hits)) with a
// heap of the best k seen so far: O(n log k), not a sort of all.
func keywordKth(hits []keywordHit, k int) keywordHit {
	h := slices.Clone(hits[:k])
	worse := func(i, j int) bool { return compareKeywordHits(h[i], h[j]) > 0 }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(r, l) {
				m = r
			}
			if !worse(m, i) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range hits[k:] {
		if compareKeywordHits(x, h[0]) < 0 {
			h[0] = x
			down(0)
		}
	}
	return h[0]
}

// keywordOrds numbers a store's chunk keys as a search first meets them:
// the ordinals of keywordIndex.
type keywordOrds[K comparable] struct {
	ord  map[K]int
	keys []K
}

// of returns the ordinal of key k, numbering it when it is new.
func (o *keywordOrds[K]) of(k K) int {
	n, ok := o.ord[k]
	if !ok {
		if o.ord == nil {
			o.ord = make(map[K]int)
		}
		n = len(o.keys)
		o.ord[k] = n
		o.keys = append(o.keys, k)
	}
	return n
}

// appendDistinct appends to out the documents of docs whose text seen does
// not hold yet (nil ones skipped), marking them seen, until out holds most
// (no cap when most <= 0); full reports that it does.
func appendDistinct(out []*ai.Document, seen map[string]bool, docs []*ai.Document, most int) ([]*ai.Document, bool) {
	for _, d := range docs {
		if d == nil {
			continue
		}
		text := DocText(d)
		if seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, d)
		if most > 0 && len(out) == most {
			return out, true
		}
	}
	return out, false
}
