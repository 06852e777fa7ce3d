package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// SearchMode selects the lists Search ranks by.
type SearchMode string

// Search modes.
const (
	// SearchModeFusion fuses the vector and the keyword list (the default).
	SearchModeFusion SearchMode = "fusion"
	// SearchModeVector ranks by the vector list alone.
	SearchModeVector SearchMode = "vector"
	// SearchModeKeyword ranks by the keyword list alone.
	SearchModeKeyword SearchMode = "keyword"
)

// Defaults of SearchOptions.
const (
	// defaultSearchK is the number of hits Search returns.
	defaultSearchK = 10
	// defaultSearchDepth is the number of candidates taken from each list.
	defaultSearchDepth = 40
	// defaultExcerptChars is the length of a hit's Excerpt.
	defaultExcerptChars = 300
)

// SearchModel is a model step of Search (HyDE or rerank): the prompt to
// execute (nil: the built-in one, taken from SearchOptions.Genkit), the
// model to run it with (nil: the prompt's own) and the model config (nil:
// none).
type SearchModel struct {
	Prompt ai.Prompt
	Model  ai.Model
	Config any
}

// SearchOptions configure Search. A nil *SearchOptions, and zero fields,
// mean the defaults.
type SearchOptions struct {
	// K is the number of hits returned; <= 0 means 10.
	K int
	// Depth is the number of candidates taken from each list; <= 0 means
	// 40 (at least K).
	Depth int
	// Mode selects the lists; "" means SearchModeFusion.
	Mode SearchMode
	// Filter restricts every list (nil: every chunk).
	Filter *Filter
	// Fusion, when not nil, replaces the fusion settings; nil means the
	// settings the index records (IndexInfo), else those its embedder
	// implies (FusionDefaults).
	Fusion *FusionOptions
	// HyDE, when not nil, adds a vector list for a passage its prompt
	// writes for the question (GenerateHyDEText); fusion mode only.
	HyDE *SearchModel
	// Rerank, when not nil, reorders the best fused candidates by the
	// 0-10 scores its prompt gives (RerankScores).
	Rerank *SearchModel
	// RerankOptions configure the rerank calls.
	RerankOptions RerankOptions
	// Genkit holds the built-in prompts of the model steps whose Prompt
	// is nil: "askyourdocs-hyde" (a 3-5 sentence documentation passage
	// answering the question, in its language) and "askyourdocs-rerank"
	// (one 0-10 score per passage, the passages marked as quoted
	// material). Search defines them in Genkit at first use, once; a
	// prompt of that name the app defined first is used instead. A step
	// with a nil Prompt and no Genkit is an error. Answer passes
	// AnswerOptions.Genkit when this is nil.
	Genkit *genkit.Genkit
	// ReleaseNotesWeight multiplies the score of a hit from a
	// release-notes page (its page title reads "Release notes",
	// "Changelog", "What's new in", ...) unless the question asks about
	// versions or changes or is the hit's own heading: such pages mention
	// most features but rarely explain them. 0 means 0.5; 1 turns it off;
	// outside 0 to 1 is an error.
	ReleaseNotesWeight float64
	// RerankCandidates is how many fused candidates are reranked; <= 0
	// means max(2K, 20).
	RerankCandidates int
	// ExcerptChars is the longest quote in Excerpt, its heading line not
	// counted; <= 0 means 300.
	ExcerptChars int
}

// SearchReport says what one Search call did (SearchResult.Report).
type SearchReport struct {
	// Fusion is the fusion setting used.
	Fusion FusionOptions
	// KeywordWeak reports that the question's keyword query was weak
	// (FusionOptions), so the vector lists were weighted by
	// Fusion.WeakVectorWeight.
	KeywordWeak bool
	// Keywords are the statistics of the question's keyword query in the
	// index that KeywordWeak was decided from; zero (Chunks 0) when Search
	// needed none: not fusion mode, a fusion that is not adaptive, a
	// quoted phrase or fewer than Fusion.WeakStopWords stop words.
	Keywords KeywordQueryStats
	// Vector, Text and HyDE are the lengths of the lists fused.
	Vector, Text, HyDE int
	// HyDEPassage is the passage HyDE wrote ("" when HyDE did not run or
	// fell back to the question).
	HyDEPassage string
	// Reranked reports that the hits are in rerank order.
	Reranked bool
	// ReleaseNotesDemoted is how many fused hits from release-notes pages
	// had their score multiplied by SearchOptions.ReleaseNotesWeight.
	ReleaseNotesDemoted int
	// Lacking names what Search does without because the Searcher (or
	// the Searcher its Unwrap() Searcher method returns, followed down a
	// chain of wrappers) lacks it: "keyword statistics" (no weak-query
	// fusion), "passage search" (a HyDE passage is searched as a query),
	// "index record" (the fusion settings come from the embedder's
	// defaults or the textbook ones). Empty for the ready-made stores and
	// a wrapper that returns one from Unwrap.
	Lacking []string
}

// SearchResult is what Search returns: the hits, best first, and the
// report of how they were found.
type SearchResult struct {
	Hits   []SearchHit
	Report SearchReport
}

// SearchHit is one result of Search.
type SearchHit struct {
	// Doc is the chunk as the store returned it; Text is its DocText.
	Doc  *ai.Document
	Text string
	// Score is the fused score (for one list, that list's reciprocal
	// rank share), times SearchOptions.ReleaseNotesWeight for a demoted
	// release-notes hit; higher is better.
	Score float64
	// VectorRank, TextRank and HyDERank are the chunk's 1-based ranks in
	// the vector, keyword and HyDE lists, 0 when the list lacks it.
	VectorRank, TextRank, HyDERank int
	// Rerank is the reranker's 0-10 score, -1 when not reranked.
	Rerank int
	// Excerpt is the best sentences of the chunk for the question, with
	// their section heading on a line above (BestExcerptWithOptions with
	// ExcerptOptions.Heading).
	Excerpt string
	// URL, Source, Pages and Section are the chunk's MetaURL, MetaSource,
	// MetaPages and MetaBreadcrumb metadata ("" when absent).
	URL, Source, Pages, Section string
	// Language is the chunk's "language" metadata: the ISO 639-1 code of
	// the language IndexSource detected in it ("en", "de", "ja"), "" when
	// none was told.
	Language string
	// Passage is the text to show or give a model: MetaParentText when
	// the chunk has one, else Text.
	Passage string
	// Contents reports that the chunk (Text) looks like a table of contents or
	// an index.
	Contents bool
	// ReleaseNotes reports that the chunk's page is release notes (the
	// first part of Section reads "Release notes", "Changelog", "What's
	// new in", ...); Demoted, that its Score was multiplied by
	// SearchOptions.ReleaseNotesWeight for this question.
	ReleaseNotes, Demoted bool
	// Confidence (0-10, see ConfidenceLabelWith) is how well the passage
	// seems to answer the question: the rerank score when reranked, else
	// the evidence score docs/search.md describes. ConfidenceBasis says
	// why in one line: for a hit that is not reranked, first what decided
	// its Level (levelReason: "both searches rank it first and its
	// heading names 2 of 3 question terms", "the keyword search ranks
	// another passage first"), then what the evidence score rests on.
	Confidence      int
	ConfidenceBasis string
	// Level is the hit's confidence level, calibrated on the dev sets
	// (docs/serve.md) from its evidence: Confidence, VectorRank and
	// TextRank, RunnerUp, QuestionKeywords and HeadingKeywords; for a
	// reranked hit the spec's thresholds on the rerank score
	// (ConfidenceLabel's).
	Level ConfidenceLevel
	// RunnerUp is the next hit's evidence score (0: none, or a reranked
	// hit). QuestionKeywords is the number of keywords of the question
	// (ExtractKeywords), HeadingKeywords how many of them the hit's
	// section heading (breadcrumb and first line) contains (both 0 for a
	// reranked hit). With Confidence and the ranks they are what Level
	// was decided from.
	RunnerUp, QuestionKeywords, HeadingKeywords int
}

// searchTracer returns the tracer Genkit traces with, so Search's spans
// sit in the same traces as the flows and model calls around them.
func searchTracer() trace.Tracer { return tracing.Tracer() }

// searchSpan starts a span of one Search step; end records its count and
// latency and ends it.
func searchSpan(ctx context.Context, name string) (context.Context, func(count int, err error)) {
	start := time.Now()
	ctx, span := searchTracer().Start(ctx, name)
	return ctx, func(count int, err error) {
		span.SetAttributes(attribute.Int("askyourdocs.count", count),
			attribute.Float64("askyourdocs.latency_ms", float64(time.Since(start).Microseconds())/1000))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// Search runs the hybrid retrieval pipeline on s for question and returns
// at most K hits, best first, with the report of what it did (the fusion
// applied, the weak-query rule, the lists' lengths): a vector list and a keyword list (each Depth
// long, both restricted by opts.Filter, run concurrently), a HyDE vector
// list when opts.HyDE is set, fused by weighted reciprocal rank fusion
// with the index's fusion settings (nil opts.Fusion: the ones the index
// records or its embedder implies) for this question (FusionOptions, from
// the store's KeywordQueryStats of it), then reranked when opts.Rerank is
// set. Each step is an
// OpenTelemetry span on Genkit's tracer ("askyourdocs.search.vector",
// ".text", ".hyde", ".fusion", ".rerank" under "askyourdocs.search") with
// its result count and latency. HyDE and rerank never fail the search (see
// GenerateHyDEText, RerankScores); a list's error does. A nil s, a blank
// question or an unknown Mode is an error. Safe for concurrent use when s
// is. A Searcher of an app's own that wraps a store gets the store's
// keyword statistics, passage search and index record (and so the same
// hits) by embedding the store's pointer or by returning the store from
// an Unwrap() Searcher method; what a Searcher lacks is listed in
// SearchReport.Lacking.
func Search(ctx context.Context, s Searcher, question string, opts *SearchOptions) (res *SearchResult, err error) {
	o, err := searchSettle(s, question, opts)
	if err != nil {
		return nil, err
	}
	ctx, end := searchSpan(ctx, "askyourdocs.search")
	defer func() {
		n := 0
		if res != nil {
			n = len(res.Hits)
		}
		end(n, err)
	}()
	fo, err := searchFusion(ctx, s, o.Fusion)
	if err != nil {
		return nil, err
	}
	lists, err := searchGather(ctx, s, question, o, fo)
	if err != nil {
		return nil, err
	}
	res = &SearchResult{Report: SearchReport{Fusion: fo, Keywords: lists.stats, Vector: len(lists.vector), Text: len(lists.text),
		HyDE: len(lists.hyde), HyDEPassage: lists.passage, Lacking: searchLacking(s)}}
	hits, fused := searchFuse(ctx, question, o, lists, &res.Report)
	if o.Rerank != nil && len(hits) > 0 {
		c, done := searchSpan(ctx, "askyourdocs.search.rerank")
		n := o.RerankCandidates
		if n <= 0 {
			n = max(2*o.K, 20)
		}
		hits = searchRerank(c, o, question, hits[:min(n, len(hits))])
		done(len(hits), nil)
		res.Report.Reranked = true
	}
	res.Hits = searchAnnotate(ctx, s, question, o, hits, fused)
	return res, nil
}

// searchSettle checks Search's arguments and returns opts with the
// defaults filled in.
func searchSettle(s Searcher, question string, opts *SearchOptions) (SearchOptions, error) {
	var o SearchOptions
	if s == nil {
		return o, errNoSearcher
	}
	if strings.TrimSpace(question) == "" {
		return o, errors.New("search: empty question")
	}
	if opts != nil {
		o = *opts
	}
	if o.K <= 0 {
		o.K = defaultSearchK
	}
	o.Depth = max(o.Depth, o.K)
	if opts == nil || opts.Depth <= 0 {
		o.Depth = max(defaultSearchDepth, o.K)
	}
	if o.Mode == "" {
		o.Mode = SearchModeFusion
	}
	if o.Mode != SearchModeFusion && o.Mode != SearchModeVector && o.Mode != SearchModeKeyword {
		return o, fmt.Errorf("search: unknown mode %q (want fusion, vector or keyword)", o.Mode)
	}
	if o.ReleaseNotesWeight < 0 || o.ReleaseNotesWeight > 1 || math.IsNaN(o.ReleaseNotesWeight) {
		return o, fmt.Errorf("search: ReleaseNotesWeight %v out of range (want 0 to 1)", o.ReleaseNotesWeight)
	}
	if o.ReleaseNotesWeight == 0 {
		o.ReleaseNotesWeight = defaultReleaseNotesWeight
	}
	for _, step := range []struct {
		m          **SearchModel
		name, text string
	}{{&o.HyDE, hydePromptName, hydePromptText}, {&o.Rerank, rerankPromptName, rerankPromptText}} {
		if *step.m == nil || (*step.m).Prompt != nil {
			continue
		}
		if o.Genkit == nil {
			return o, fmt.Errorf("search: %s step without a prompt: set its Prompt or SearchOptions.Genkit (the built-in prompt)", step.name)
		}
		m := **step.m // the caller's SearchModel stays as it was
		m.Prompt = builtinPrompt(o.Genkit, step.name, step.text)
		*step.m = &m
	}
	return o, nil
}

// searchLists are what Search's gather stage found: the vector, keyword
// and HyDE lists, the keyword statistics of the question (when the
// weak-query rule needed them) and the HyDE passage.
type searchLists struct {
	vector, text, hyde []*ai.Document
	stats              KeywordQueryStats
	statsOK            bool
	passage            string
}

// searchGather is Search's first stage: the lists of o.Mode, each Depth
// long, concurrently, with the question's keyword statistics when fo's
// weak-query rule may apply and the HyDE list when o asks for it.
func searchGather(ctx context.Context, s Searcher, question string, o SearchOptions, fo FusionOptions) (searchLists, error) {
	var l searchLists
	var verr, terr, serr, herr error
	var wg sync.WaitGroup
	if o.Mode != SearchModeKeyword {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, done := searchSpan(ctx, "askyourdocs.search.vector")
			l.vector, verr = s.SearchVector(c, question, o.Depth, o.Filter)
			done(len(l.vector), verr)
		}()
	}
	if o.Mode != SearchModeVector {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, done := searchSpan(ctx, "askyourdocs.search.text")
			l.text, terr = s.SearchText(c, question, o.Depth, o.Filter)
			done(len(l.text), terr)
		}()
	}
	if ks, ok := searchCapability[keywordStatser](s); ok && o.Mode == SearchModeFusion && fo.mayBeWeak(question) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.stats, serr = ks.keywordQueryStats(ctx, question)
			l.statsOK = serr == nil
		}()
	}
	if o.Mode == SearchModeFusion && o.HyDE != nil {
		c, done := searchSpan(ctx, "askyourdocs.search.hyde")
		l.hyde, l.passage, herr = searchHyDE(c, s, question, o)
		done(len(l.hyde), herr)
	}
	wg.Wait()
	if err := errors.Join(verr, terr, serr, herr); err != nil {
		return l, fmt.Errorf("search: %w", err)
	}
	return l, nil
}

// searchFuse is Search's second stage: the lists fused with the index's
// settings for this question (the weak-query rule), as hits, release
// notes demoted; it returns them and the fused list, and fills rep's
// KeywordWeak and ReleaseNotesDemoted.
func searchFuse(ctx context.Context, question string, o SearchOptions, l searchLists, rep *SearchReport) ([]SearchHit, []fusedHit) {
	_, done := searchSpan(ctx, "askyourdocs.search.fusion")
	fo := rep.Fusion
	rep.KeywordWeak = fo.weak(l.stats) && l.statsOK && l.stats.Chunks > 0
	fq := fo.withDefaults()
	if rep.KeywordWeak {
		fq = fo.forQuery(l.stats)
	}
	fused := fuseRanked(l.vector, l.text, l.hyde, fq)
	done(len(fused), nil)
	hits := make([]SearchHit, len(fused))
	for i, f := range fused {
		hits[i] = newSearchHit(f)
	}
	rep.ReleaseNotesDemoted = demoteReleaseNotes(hits, question, o.ReleaseNotesWeight)
	return hits, fused
}

// searchAnnotate is Search's last stage: hits cut to o.K, each with its
// excerpt, contents flag, confidence and calibrated level (fused are the
// candidates the confidence compares with).
func searchAnnotate(ctx context.Context, s Searcher, question string, o SearchOptions, hits []SearchHit, fused []fusedHit) []SearchHit {
	// The hit after the last kept one is the last hit's runner-up in
	// calibratedConfidence.
	var next *SearchHit
	if len(hits) > o.K {
		next = &hits[o.K]
		hits = hits[:o.K]
	}
	chars := o.ExcerptChars
	if chars <= 0 {
		chars = defaultExcerptChars
	}
	cc := &confidenceChecker{s: s, question: question, keywords: cjkKeywords(ExtractKeywords(question, searchStopWords)), absent: map[string]bool{}}
	for _, f := range fused {
		cc.cands = append(cc.cands, f.Text)
	}
	for i := range hits {
		h := &hits[i]
		h.Excerpt = BestExcerptWithOptions(h.Text, &ExcerptOptions{Query: question, MaxChars: chars, Heading: true})
		h.Contents = looksLikeContents(h.Text)
		if h.Rerank >= 0 {
			h.Confidence, h.ConfidenceBasis = h.Rerank, "rerank"
			h.Level = rerankLevel(h.Rerank)
			continue
		}
		h.Confidence, h.ConfidenceBasis = cc.evidenceConfidence(ctx, h.Passage, passageContents(h), h.VectorRank, h.TextRank)
	}
	for i := range hits {
		h := &hits[i]
		if h.Rerank >= 0 {
			continue
		}
		e := confidenceEvidence{Evidence: h.Confidence, VectorRank: h.VectorRank, TextRank: h.TextRank,
			Keywords: len(cc.keywords), HeadingKeywords: cc.headingKeywords(h.Section, h.Text)}
		switch {
		case i+1 < len(hits):
			e.RunnerUp = hits[i+1].Confidence
		case next != nil:
			e.RunnerUp, _ = cc.evidenceConfidence(ctx, next.Passage, looksLikeContents(next.Passage), next.VectorRank, next.TextRank)
		}
		h.RunnerUp, h.QuestionKeywords, h.HeadingKeywords = e.RunnerUp, e.Keywords, e.HeadingKeywords
		h.Level = calibratedConfidence(e)
		h.ConfidenceBasis = levelReason(e, h.Level) + "; " + h.ConfidenceBasis
	}
	return hits
}

// passageContents is looksLikeContents of h.Passage, h.Contents when the
// passage is the hit's text.
func passageContents(h *SearchHit) bool {
	if h.Passage == h.Text {
		return h.Contents
	}
	return looksLikeContents(h.Passage)
}

// newSearchHit fills a hit's document fields from a fused result.
func newSearchHit(f fusedHit) SearchHit {
	h := SearchHit{Doc: f.Doc, Text: f.Text, Score: f.Score, VectorRank: f.VectorRank, TextRank: f.TextRank, HyDERank: f.HyDERank, Rerank: -1}
	if f.Doc != nil {
		m := f.Doc.Metadata
		h.URL, h.Source = metaString(m, MetaURL), metaString(m, MetaSource)
		h.Pages, h.Section = metaString(m, MetaPages), metaString(m, MetaBreadcrumb)
		h.Passage = metaString(m, MetaParentText)
		h.Language = metaString(m, metaLanguage)
		h.ReleaseNotes = isReleaseNotesPage(h.Section)
	}
	if h.Passage == "" {
		h.Passage = h.Text
	}
	return h
}

// searchLacking lists the capabilities beyond the Searcher methods that
// s lacks (SearchReport.Lacking).
func searchLacking(s Searcher) []string {
	var out []string
	if _, ok := searchCapability[keywordStatser](s); !ok {
		out = append(out, "keyword statistics")
	}
	if _, ok := searchCapability[documentSearcher](s); !ok {
		out = append(out, "passage search")
	}
	if _, ok := searchCapability[indexInfoReader](s); !ok {
		out = append(out, "index record")
	}
	return out
}

// searchHyDE writes the HyDE passage and searches by it (as a passage when
// the store can, else as a query). A passage equal to the question (HyDE
// failed) adds no list.
func searchHyDE(ctx context.Context, s Searcher, question string, o SearchOptions) ([]*ai.Document, string, error) {
	passage := GenerateHyDEText(ctx, o.HyDE.Prompt, o.HyDE.Model, o.HyDE.Config, question)
	if passage == question {
		return nil, "", nil
	}
	var docs []*ai.Document
	var err error
	if ds, ok := searchCapability[documentSearcher](s); ok {
		docs, err = ds.searchVectorDoc(ctx, ai.DocumentFromText(passage, nil), o.Depth, o.Filter)
	} else {
		docs, err = s.SearchVector(ctx, passage, o.Depth, o.Filter)
	}
	return docs, passage, err
}

// searchRerank scores cand with the rerank prompt and sorts them by score
// (stable: the fused order breaks ties).
func searchRerank(ctx context.Context, o SearchOptions, question string, cand []SearchHit) []SearchHit {
	texts := make([]string, len(cand))
	for i, h := range cand {
		texts[i] = h.Text
	}
	scores := RerankScores(ctx, o.Rerank.Prompt, o.Rerank.Model, o.Rerank.Config, question, texts, o.RerankOptions)
	for i := range cand {
		cand[i].Rerank = scores[i]
	}
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].Rerank > cand[j].Rerank })
	return cand
}

// searchFusion returns the fusion settings of a search: the caller's, else
// the index's (indexFusion).
func searchFusion(ctx context.Context, s Searcher, given *FusionOptions) (FusionOptions, error) {
	if given != nil {
		return given.withDefaults(), nil
	}
	f, err := indexFusion(ctx, s)
	if err != nil {
		return f, fmt.Errorf("search: %w", err)
	}
	return f, nil
}

// indexFusion returns the fusion settings Search uses on s when the
// options do not set them: those the index records (IndexInfo.Fusion;
// a record of its embedder's former defaults, formerFusionDefaults, means
// today's defaults), else the
// defaults of the recorded embedder, else of the store's own embedder
// (FusionDefaults), else the textbook fusion.
func indexFusion(ctx context.Context, s Searcher) (FusionOptions, error) {
	if r, ok := searchCapability[indexInfoReader](s); ok {
		info, found, err := r.IndexInfo(ctx)
		if err != nil {
			return FusionOptions{}, err
		}
		if found {
			if info.Fusion != nil {
				f := info.Fusion.withDefaults()
				if slices.Contains(formerFusionDefaults(info.Embedder), f) {
					// The embedder's defaults of an earlier release: they
					// are the defaults of today.
					f = FusionDefaults(info.Embedder)
				}
				return f, nil
			}
			return FusionDefaults(info.Embedder), nil
		}
	}
	if e, ok := searchCapability[interface{ embedder() ai.Embedder }](s); ok && e.embedder() != nil {
		return FusionDefaults(e.embedder().Name()), nil
	}
	return FusionDefaults(""), nil
}
