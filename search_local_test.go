package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/firebase/genkit/go/ai"
)

// keywordRefSearch is the straightforward reference for the BM25 keyword
// search: per document, tokenise the whole text, count the query's terms,
// compute BM25 from scratch over the documents given, rank stably by
// (stage, score), deduplicate by text. The index must return exactly what
// it returns.
func keywordRefSearch(an *textAnalyzer, query string, stop map[string]bool, docs []*ai.Document, maxResults int, filter func(map[string]any) bool) []*ai.Document {
	p := newBM25Plan(an, query, stop)
	if p.blank() || len(docs) == 0 {
		return nil
	}
	tfs := make([]map[string]int, len(docs))
	df := map[string]int{}
	total := 0
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, t := range an.terms(DocText(d)) {
			tfs[i][t]++
			total++
		}
		for t := range tfs[i] {
			df[t]++
		}
	}
	// Stop-listed words: all of them when nothing else is asked, else
	// those in at most bm25StopRareRatio of the documents, scored only.
	var optional []string
	keywords := slices.Clone(p.keywords)
	for _, t := range p.stops {
		switch {
		case df[t] == 0:
		case len(p.keywords) == 0 && len(p.phrases) == 0:
			keywords = append(keywords, t)
		case float64(df[t]) <= bm25StopRareRatio*float64(len(docs)):
			optional = append(optional, t)
		}
	}
	p.keywords = keywords
	if p.empty() {
		return nil
	}
	var terms []string // scoring order: keywords, then phrase words, then optional terms
	for _, t := range p.keywords {
		terms = append(terms, t)
	}
	for _, ts := range p.phraseTerms {
		for _, t := range ts {
			if !slices.Contains(terms, t) {
				terms = append(terms, t)
			}
		}
	}
	for _, t := range optional {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	avg := float64(total) / float64(len(docs))
	if avg <= 0 {
		avg = 1
	}
	type hit struct {
		doc   *ai.Document
		stage int
		score float64
		key   string
	}
	var hits []hit
	for i, d := range docs {
		if d == nil || (filter != nil && !filter(d.Metadata)) {
			continue
		}
		n := 0
		for _, c := range tfs[i] {
			n += c
		}
		h := hit{doc: d}
		h.key, _ = localvecDocID(d)
		for _, t := range terms {
			if tf := float64(tfs[i][t]); tf > 0 {
				h.score += bm25IDF(len(docs), df[t]) * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(n)/avg))
			}
		}
		norm := strings.Join(strings.FieldsFunc(strings.ToLower(DocText(d)), unicode.IsSpace), " ")
		for j, ph := range p.phrases {
			has := true // a phrase needs its words as terms and its text
			for _, t := range p.phraseTerms[j] {
				has = has && tfs[i][t] > 0
			}
			if has && strings.Contains(norm, ph) {
				h.stage += 2
			}
		}
		all, anyKw := len(p.keywords) > 0, false
		for _, t := range p.keywords {
			if tfs[i][t] > 0 {
				anyKw = true
			} else {
				all = false
			}
		}
		if all {
			h.stage++
		}
		if h.stage > 0 || anyKw {
			hits = append(hits, h)
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.stage, a.stage), cmp.Compare(b.score, a.score), strings.Compare(a.key, b.key))
	})
	var distinct []hit
	seen := map[string]bool{}
	for _, h := range hits {
		t := DocText(h.doc)
		if !seen[t] {
			seen[t] = true
			distinct = append(distinct, h)
		}
	}
	// The long-page, proximity and name rules over the best 40, in their
	// stages; a tie across the window's end stays out of it.
	top := min(len(distinct), keywordReweighTop)
	for top > 0 && top < len(distinct) && distinct[top-1].stage == distinct[top].stage &&
		math.Abs(distinct[top-1].score-distinct[top].score) <= 1e-9*max(1, math.Abs(distinct[top].score)) {
		top--
	}
	question := strings.ContainsAny(query, "?？")
	ident, cjk := false, false
	for _, k := range p.keywords {
		ident = ident || strings.ContainsAny(k, "._-:")
		cjk = cjk || strings.IndexFunc(k, isCJKRune) >= 0
	}
	prior := !question && !ident && !cjk && len(p.keywords) > 0
	prox := !question && !cjk && len(p.keywords) >= 3
	named := !question && !cjk && len(p.keywords) > 0
	identParts := map[string]bool{} // an identifier's parts: not counted by the name rule
	for _, k := range p.keywords {
		if strings.ContainsAny(k, "._-:") {
			for _, t := range an.terms(k) {
				identParts[t] = t != k
			}
		}
	}
	pageChunks := map[string]int{}
	for _, d := range docs {
		if d != nil {
			u, _ := d.Metadata[MetaURL].(string)
			pageChunks[u]++
		}
	}
	for i := range distinct[:top] {
		h := &distinct[i]
		u, _ := h.doc.Metadata[MetaURL].(string)
		inHead := false
		for _, t := range an.terms(bm25HeadingText(h.doc.Metadata)) {
			inHead = inHead || slices.Contains(p.keywords, t)
		}
		if c := pageChunks[u]; prior && u != "" && c > 1 && !inHead {
			h.score /= 1 + 0.1*math.Log(float64(c))
		}
		if named {
			names := append(an.terms(pageName(u)), an.terms(bm25HeadingText(h.doc.Metadata))...)
			for _, k := range p.keywords {
				if slices.Contains(names, k) && !identParts[k] {
					h.score += 1.5 * bm25IDF(len(docs), df[k])
				}
			}
		}
		if !prox {
			continue
		}
		type occ struct{ pos, kw int }
		var occs []occ
		pos := -1
		an.tokenize(DocText(h.doc), func(_, term string, extra bool) {
			if !extra {
				pos++
			}
			if k := slices.Index(p.keywords, term); k >= 0 {
				occs = append(occs, occ{pos, k})
			}
		})
		acc := map[[2]int]float64{}
		for x, a := range occs {
			for _, b := range occs[x+1:] {
				if d := b.pos - a.pos; d >= 1 && d <= 5 && a.kw != b.kw {
					acc[[2]int{min(a.kw, b.kw), max(a.kw, b.kw)}] += 1 / float64(d*d)
				}
			}
		}
		for pair, v := range acc {
			w := min(1, bm25IDF(len(docs), df[p.keywords[pair[0]]]), bm25IDF(len(docs), df[p.keywords[pair[1]]]))
			h.score += w * v * 2.2 / (v + 1.2)
		}
	}
	slices.SortStableFunc(distinct[:top], func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.stage, a.stage), cmp.Compare(b.score, a.score))
	})
	var out []*ai.Document
	for _, h := range distinct {
		out = append(out, h.doc)
		if maxResults > 0 && len(out) == maxResults {
			break
		}
	}
	return out
}

// localvecTestKeys returns the document IDs of docs, LocalvecStore's
// tie-break keys.
func localvecTestKeys(docs []*ai.Document) []string {
	keys := make([]string, len(docs))
	for i, d := range docs {
		if d != nil {
			keys[i], _ = localvecDocID(d)
		}
	}
	return keys
}

// keywordBenchVocabulary returns n pseudo-words of 3-10 letters.
func keywordBenchVocabulary(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, n)
	for i := range words {
		b := make([]byte, 3+r.IntN(8))
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		words[i] = string(b)
	}
	return words
}

// keywordBenchDocs returns n chunks of ~800 characters drawn Zipf-like from
// a 20,000-word vocabulary (as the CLI benchmark does), some capitalised.
func keywordBenchDocs(n int) []*ai.Document {
	vocab := keywordBenchVocabulary(20000)
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	docs := make([]*ai.Document, n)
	for i := range docs {
		var sb strings.Builder
		for sb.Len() < 800 {
			w := vocab[z.Uint64()]
			if r.IntN(10) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			sb.WriteString(w)
			sb.WriteByte(' ')
		}
		docs[i] = ai.DocumentFromText(sb.String(), map[string]any{MetaURL: fmt.Sprintf("file:///doc%d", i/20), MetaSource: "bench"})
	}
	return docs
}

// keywordBenchQueries returns n queries of 3-5 consecutive words of docs.
func keywordBenchQueries(docs []*ai.Document, n int) []string {
	r := rand.New(rand.NewPCG(5, 6))
	qs := make([]string, n)
	for i := range qs {
		words := strings.Fields(DocText(docs[r.IntN(len(docs))]))
		k := 3 + r.IntN(3)
		start := r.IntN(len(words) - k)
		qs[i] = strings.Join(words[start:start+k], " ")
	}
	return qs
}

// keywordBenchStore returns an open LocalvecStore holding docs in memory
// (one-dimensional vectors; no file, no embedder).
func keywordBenchStore(docs []*ai.Document) *LocalvecStore {
	add := make([]localvecNewRow, len(docs))
	for i, d := range docs {
		id, err := localvecDocID(d) // the tie-break key, as the store's Index gives it
		if err != nil {
			id = fmt.Sprintf("%08d", i)
		}
		add[i] = localvecNewRow{id: id, doc: d, vec: []float32{1}}
	}
	s := &LocalvecStore{}
	s.rows.append(add)
	return s
}

// BenchmarkLocalvecKeywordSearch measures LocalvecStore.KeywordSearch (top
// 10, BM25 over the in-memory inverted index) over 10k and 50k synthetic
// chunks, and the index build (time and the heap it keeps), in one run:
//
//	go test -run '^$' -bench 'LocalvecKeywordSearch|SQLiteKeywordSearch|ReciprocalRankFusion' -benchtime 1x -timeout 30m .
func BenchmarkLocalvecKeywordSearch(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		docs := keywordBenchDocs(n)
		queries := keywordBenchQueries(docs[:min(n, 2000)], 64)
		s := keywordBenchStore(docs)
		ctx := context.Background()
		b.Run(fmt.Sprintf("%dk/query", n/1000), func(b *testing.B) {
			// CPU time too: on a shared machine the wall time also counts
			// waiting for a core.
			cpu0 := pdfCPUSeconds()
			i := 0
			for b.Loop() { // every query once per iteration, so -benchtime 1x is enough
				for _, q := range queries {
					if _, err := s.KeywordSearch(ctx, q, 10, nil, nil); err != nil {
						b.Fatal(err)
					}
					i++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/1e6, "ms/query")
			b.ReportMetric((pdfCPUSeconds()-cpu0)*1e3/float64(i), "cpu-ms/query")
		})
		b.Run(fmt.Sprintf("%dk/build", n/1000), func(b *testing.B) {
			an, _ := newTextAnalyzer("english")
			var x *bm25Index
			var before, after runtime.MemStats
			i := 0
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				x = newLocalvecBM25(an, docs)
				i++
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i)/1e6, "ms/build")
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-index")
			runtime.KeepAlive(x)
		})
	}
}

// keywordRandText returns random text from a small alphabet of letters
// (with case and Unicode variants), spaces of several kinds, punctuation and
// metacharacters, so that substring matches are frequent.
func keywordRandText(r *rand.Rand, maxLen int) string {
	atoms := []string{"a", "b", "c", "ab", "ba", "Ab", "AB", "ß", "ẞ", "ä", "Ä", "é", "e\u0301", "İ", "ı", "k", "K", "\u212a", "ö",
		" ", " ", "  ", "\t", "\n", "\u00a0", "\u3000", ".", ",", "-", "%", "_", "\\", "'", "\"", "„", "“", "”", "«", "»", "*", "?", "1", "2", "Σ", "σ", "ς", "\xff"}
	var b strings.Builder
	for n := r.IntN(maxLen + 1); n > 0; n-- {
		b.WriteString(atoms[r.IntN(len(atoms))])
	}
	return b.String()
}

// TestLocalvecKeywordSearchMatchesReference checks the in-memory BM25
// index (maintained across deletes, with and without compaction of its
// postings) and the on-the-fly LocalvecKeywordSearch path against
// keywordRefSearch on random corpora and queries.
func TestLocalvecKeywordSearchMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	ctx := t.Context()
	an := localvecDefaultAnalyzer
	for round := range 60 {
		n := 1 + r.IntN(80)
		docs := make([]*ai.Document, 0, n)
		for i := range n {
			var d *ai.Document
			switch {
			case i > 0 && r.IntN(8) == 0: // same text, other metadata
				d = ai.DocumentFromText(DocText(docs[r.IntN(len(docs))]), nil)
			case r.IntN(6) == 0: // several text parts
				d = &ai.Document{Content: []*ai.Part{ai.NewTextPart(keywordRandText(r, 20)), ai.NewTextPart(keywordRandText(r, 20))}}
			default:
				d = ai.DocumentFromText(keywordRandText(r, 60), nil)
			}
			d.Metadata = map[string]any{"n": i, "odd": i%2 == 1}
			docs = append(docs, d)
		}
		s := keywordBenchStore(docs)
		// Delete some rows (most of them in odd rounds, which compacts the
		// postings) and add some, so the index is updated both ways.
		del := map[string]bool{}
		for _, id := range s.rows.ids {
			if r.IntN(5) == 0 || (round%2 == 1 && r.IntN(4) != 0) {
				del[id] = true
			}
		}
		s.keywordIndex() // built, so that the removal below updates it
		s.rows.remove(del)
		nd := ai.DocumentFromText(keywordRandText(r, 60), map[string]any{"n": 1000})
		nid, _ := localvecDocID(nd)
		s.rows.append([]localvecNewRow{{id: nid, doc: nd, vec: []float32{1}}})
		if round%2 == 1 && len(del) > len(s.rows.ids) && s.rows.kw.dead != 0 {
			// below the compaction threshold of 1024 dead slots: force it
			s.rows.kw.dead = 2000
			s.rows.kw.truncate(s.rows.kw.live())
		}
		kept := slices.Clone(s.rows.docs)
		filter := func(m map[string]any) bool { return m["odd"] == true }
		stop := map[string]bool{"ab": true}
		for range 30 {
			q := keywordRandText(r, 12)
			if len(kept) > 0 && r.IntN(3) == 0 {
				// Quote a piece of a stored text.
				if txt := []rune(DocText(kept[r.IntN(len(kept))])); len(txt) > 2 {
					a := r.IntN(len(txt) - 1)
					q += ` "` + string(txt[a:a+1+r.IntN(min(8, len(txt)-a))]) + `" ` + keywordRandText(r, 4)
				}
			}
			for _, maxN := range []int{0, 1, 3} {
				for _, f := range []func(map[string]any) bool{nil, filter} {
					want := keywordRefSearch(an, q, stop, kept, maxN, f)
					got, err := s.KeywordSearch(ctx, q, maxN, stop, f)
					if err != nil {
						t.Fatal(err)
					}
					direct, err := newLocalvecBM25(an, kept).search(ctx, newBM25Plan(an, q, stop), kept, localvecTestKeys(kept), maxN, f)
					if err != nil {
						t.Fatal(err)
					}
					if docMetaN(got) != docMetaN(want) || docMetaN(direct) != docMetaN(want) {
						t.Fatalf("round %d, query %q, max %d, filter %v:\nstore     %s\nfresh     %s\nreference %s",
							round, q, maxN, f != nil, docMetaN(got), docMetaN(direct), docMetaN(want))
					}
				}
			}
		}
	}
}

// TestLocalvecKeywordSearchLargeMatchesReference checks a store of the
// benchmark's corpus (Zipf-distributed words, some capitalised) against
// the reference, with quoted phrases too, and that a cancelled context
// stops the search.
func TestLocalvecKeywordSearchLargeMatchesReference(t *testing.T) {
	docs := keywordBenchDocs(3000)
	s := keywordBenchStore(docs)
	queries := keywordBenchQueries(docs, 4)
	queries = append(queries, `"`+queries[0]+`" `+queries[1], `„`+strings.ToUpper(queries[2])+`“`)
	for _, q := range queries {
		for _, maxN := range []int{0, 10} {
			got, err := s.KeywordSearch(t.Context(), q, maxN, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := keywordRefSearch(localvecDefaultAnalyzer, q, nil, docs, maxN, nil)
			if len(got) != len(want) {
				t.Fatalf("query %q, max %d: %d results, reference %d", q, maxN, len(got), len(want))
			}
			for i := range got {
				if DocText(got[i]) != DocText(want[i]) || got[i].Metadata[MetaURL] != want[i].Metadata[MetaURL] {
					t.Fatalf("query %q, max %d: result %d differs from the reference", q, maxN, i)
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.KeywordSearch(ctx, queries[0], 10, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}
