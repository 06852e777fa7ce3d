package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Retrieval modes of search, ask and eval.
const (
	modeVector  = "vector"
	modeKeyword = "keyword"
	modeFusion  = "fusion"
)

// retrieveOptions tune the retrieval pipeline.
type retrieveOptions struct {
	mode  string
	depth int // candidates taken from each retriever
	top   int // results returned
	rrfK  int
	// Weights of the ranked lists in the fusion.
	vectorWeight, keywordWeight, hydeWeight float64
	// hyde adds the vector search on a HyDE passage when an LLM is configured.
	hyde bool
	// rerank reorders the fused candidates with RERANK_MODEL when configured.
	rerank bool
	// embedderFusion: the fusion settings are the defaults, to be chosen
	// by the index's embedder (forEmbedder); false once the user set them.
	embedderFusion bool
}

// fusion returns the fusion settings o asks for: nil (the index's
// recorded defaults, which Search applies) unless the user set them.
func (o retrieveOptions) fusion() *askyourdocs.FusionOptions {
	if o.embedderFusion {
		return nil
	}
	return &askyourdocs.FusionOptions{RRFK: o.rrfK, VectorWeight: o.vectorWeight, TextWeight: o.keywordWeight, HyDEWeight: o.hydeWeight}
}

// The CLI's search depth and result count: Search's defaults
// (SearchOptions.Depth and K; TestCLIAndSDKRankAlike compares the CLI
// with Search with nil options).
const (
	cliSearchDepth = 40
	cliSearchK     = 10
)

// defaultRetrieveOptions are the CLI's retrieval defaults: fusion mode,
// 40 candidates per list, 10 results, HyDE and rerank when models are
// configured, and the fusion settings the index records for its embedder
// (askyourdocs.FusionDefaults; docs/retrieval.md has the grid). The
// rrfK and weights here are used only when a flag sets one of them.
func defaultRetrieveOptions() retrieveOptions {
	d := askyourdocs.FusionDefaults(askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim).Name())
	return retrieveOptions{
		mode: modeFusion, depth: cliSearchDepth, top: cliSearchK, rrfK: d.RRFK,
		vectorWeight: d.VectorWeight, keywordWeight: d.TextWeight, hydeWeight: d.HyDEWeight,
		hyde: true, rerank: true, embedderFusion: true,
	}
}

// hit is one retrieved chunk (an askyourdocs.SearchHit in the CLI's
// terms).
type hit struct {
	doc   *ai.Document
	text  string
	score float64 // fused score (or the single list's reciprocal rank share)
	// vectorRank and keywordRank are 1-based ranks in the single lists
	// (0: not found by that retriever).
	vectorRank, keywordRank int
	// rerank is the reranker's 0-10 score, -1 without a reranker.
	rerank int
	// confidence (0-10) and its basis, as Search computed them.
	confidence      int
	confidenceBasis string
	// level is Search's calibrated confidence level.
	level askyourdocs.ConfidenceLevel
	// contents: the chunk looks like a table of contents or an index.
	contents bool
	// releaseNotes: the chunk's page is release notes; demoted: Search
	// lowered its score for this question (SearchOptions.ReleaseNotesWeight).
	releaseNotes, demoted bool
	// excerpt is the chunk's best sentences for the question.
	excerpt string
}

func (h hit) meta(key string) string {
	s, _ := h.doc.Metadata[key].(string)
	return s
}

// retrieval is the result of retrieve.
type retrieval struct {
	hits     []hit
	hydeText string // "" when HyDE did not run
	reranked bool
	// fusion is the fusion setting Search applied.
	fusion askyourdocs.FusionOptions
}

// searchOptions translates o into Search's options: HyDE with an LLM,
// rerank with RERANK_MODEL, the fusion the index records unless a flag
// set it.
func (b *backend) searchOptions(o retrieveOptions) (*askyourdocs.SearchOptions, error) {
	so := &askyourdocs.SearchOptions{K: o.top, Depth: max(o.depth, o.top), Fusion: o.fusion(), Genkit: b.g,
		RerankOptions: askyourdocs.RerankOptions{BatchSize: 8, Parallel: 2, DefaultScore: 5}}
	switch o.mode {
	case modeVector:
		so.Mode = askyourdocs.SearchModeVector
	case modeKeyword:
		so.Mode = askyourdocs.SearchModeKeyword
	case modeFusion:
		so.Mode = askyourdocs.SearchModeFusion
	default:
		return nil, withHint(fmt.Errorf("%w: unknown --mode %q", errUsage, o.mode), "--mode is vector, keyword or fusion")
	}
	if o.hyde && b.llm != nil && o.mode == modeFusion {
		so.HyDE = &askyourdocs.SearchModel{Model: b.llm, Config: b.genCfg}
	}
	if o.rerank && b.rerank != nil {
		so.Rerank = &askyourdocs.SearchModel{Model: b.rerank, Config: b.rerankCfg}
	}
	return so, nil
}

// retrieve runs askyourdocs.Search for question with o: the pipeline a Go
// program calling Search on the same index runs, so both rank alike.
func (b *backend) retrieve(ctx context.Context, question string, o retrieveOptions) (*retrieval, error) {
	so, err := b.searchOptions(o)
	if err != nil {
		return nil, err
	}
	found, err := askyourdocs.Search(ctx, b.store, question, so)
	if err != nil {
		return nil, err
	}
	rep := found.Report
	out := &retrieval{hydeText: rep.HyDEPassage, reranked: rep.Reranked, fusion: rep.Fusion, hits: make([]hit, len(found.Hits))}
	for i, h := range found.Hits {
		out.hits[i] = hitOf(h)
	}
	return out, nil
}

// hitOf is a SearchHit in the CLI's terms.
func hitOf(h askyourdocs.SearchHit) hit {
	return hit{doc: h.Doc, text: h.Text, score: h.Score, vectorRank: h.VectorRank, keywordRank: h.TextRank,
		rerank: h.Rerank, confidence: h.Confidence, confidenceBasis: h.ConfidenceBasis, level: h.Level, contents: h.Contents, excerpt: h.Excerpt,
		releaseNotes: h.ReleaseNotes, demoted: h.Demoted}
}

// citation is where a chunk came from, as printed and in --json output.
// Every key is always present ("" when not known).
type citation struct {
	N   int    `json:"n"`
	URL string `json:"url"` // absolute file path or page URL
	// Display is the short form shown to people: a file path relative to
	// the working directory or to the indexed folder, a URL as it is.
	Display    string `json:"display"`
	Source     string `json:"source"`
	Pages      string `json:"pages"`
	Breadcrumb string `json:"breadcrumb"`
	// Language is the ISO 639-1 code of the language the engine detected
	// in the chunk ("en", "ja"; the chunk's "language" metadata).
	Language string `json:"language"`
	// Link opens the place: file:///…/manual.pdf#page=62, or the page URL
	// with a text fragment (#:~:text=Heading) that scrolls to the section.
	Link string `json:"link"`
	// passage is the text the answer was given (ParentText), for serve's
	// passage view; not printed.
	passage string
	// quote is the passage's sentences the answer rests on
	// (the SDK answer's citation Excerpt): serve's excerpt and highlight.
	quote string
	// chunk is the cited chunk's text (serve's passage view finds it by
	// its hash).
	chunk string
	// headings are the section's headings (breadcrumb elements and the
	// headings of merged sections), which excerpts keep apart from the text.
	headings []string
}

// citationOf returns the citation of a hit.
func citationOf(h hit) citation {
	c := citation{URL: h.meta(askyourdocs.MetaURL), Source: h.meta(askyourdocs.MetaSource),
		Pages: h.meta(metaPages), Breadcrumb: h.meta(metaBreadcrumb), Language: h.meta("language")}
	c.Display = shortPath(c.URL, c.Source)
	c.Link = citationLink(c.URL, c.Pages, c.Breadcrumb)
	c.chunk = h.text
	if c.Breadcrumb != "" {
		c.headings = strings.Split(c.Breadcrumb, " > ")
	}
	if hs := h.meta(askyourdocs.MetaHeadings); hs != "" {
		c.headings = append(c.headings, strings.Split(hs, "\n")...)
	}
	return c
}

// key identifies the place a citation points to (file or page, pages,
// section): two hits with the same key are cited once.
func (c citation) key() string { return c.URL + "\x00" + c.Pages + "\x00" + c.Breadcrumb }

// String renders a citation: its short path with pages and section, as
// one line of printable text (printable).
func (c citation) String() string {
	s := c.Display
	if s == "" {
		s = shortPath(c.URL, c.Source)
	}
	if c.Pages != "" {
		if strings.Contains(c.Pages, "-") {
			s += ", pp. " + c.Pages
		} else {
			s += ", p. " + c.Pages
		}
	}
	if c.Breadcrumb != "" {
		s += " (" + c.Breadcrumb + ")"
	}
	return printable(s)
}

// shortPath shortens an absolute file path: relative to the working
// directory when below it, else relative to the parent of the indexed
// folder (source), else with ~ for the home directory. URLs stay.
func shortPath(p, source string) string {
	if isURL(p) || !filepath.IsAbs(p) {
		return p
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if source != "" && source != p && filepath.IsAbs(source) {
		if rel, err := filepath.Rel(filepath.Dir(source), p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return p
}

// displayPath shortens an absolute file path (see shortPath).
func displayPath(p string) string { return shortPath(p, "") }

// citationLink returns a link to the cited place: file:// URLs for files,
// with #page=N for PDFs; a text fragment with the section heading for HTML
// files and web pages.
func citationLink(loc, pages, breadcrumb string) string {
	if loc == "" {
		return ""
	}
	link := loc
	if !isURL(loc) {
		link = (&url.URL{Scheme: "file", Path: filepath.ToSlash(loc)}).String()
	}
	ext := strings.ToLower(filepath.Ext(strings.SplitN(loc, "?", 2)[0]))
	switch {
	case ext == ".pdf" && pages != "":
		first, _, _ := strings.Cut(pages, "-")
		return link + "#page=" + first
	case (isURL(loc) || ext == ".html" || ext == ".htm" || ext == ".xhtml") && breadcrumb != "" && !strings.Contains(loc, "#"):
		parts := strings.Split(breadcrumb, " > ")
		return link + "#:~:text=" + textFragment(parts[len(parts)-1])
	}
	return link
}

// textFragment encodes s for a #:~:text= fragment (also "-", "&", ",").
func textFragment(s string) string {
	e := url.PathEscape(strings.TrimSpace(s))
	return strings.NewReplacer("-", "%2D", "&", "%26", ",", "%2C").Replace(e)
}

// searchOutput is search's --json output.
type searchOutput struct {
	Query   string         `json:"query"`
	Mode    string         `json:"mode"`
	Results []searchResult `json:"results"`
}

// searchResult is one result of search's --json output; every key is
// always present (rerank is null without a reranker, a rank 0 means the
// retriever did not find the chunk).
type searchResult struct {
	Rank        int     `json:"rank"`
	Score       float64 `json:"score"`
	VectorRank  int     `json:"vectorRank"`
	KeywordRank int     `json:"keywordRank"`
	Rerank      *int    `json:"rerank"`
	// ReleaseNotes: the chunk's page is release notes, which Search ranks
	// lower unless the query asks about changes (docs/search.md).
	ReleaseNotes bool `json:"releaseNotes"`
	citation
	Text string `json:"text"`
}

// searchResults turns hits into results.
func searchResults(hits []hit) []searchResult {
	out := make([]searchResult, len(hits))
	for i, h := range hits {
		c := citationOf(h)
		c.N = i + 1
		out[i] = searchResult{Rank: i + 1, Score: h.score, VectorRank: h.vectorRank, KeywordRank: h.keywordRank, ReleaseNotes: h.releaseNotes, citation: c, Text: h.text}
		if h.rerank >= 0 {
			r := h.rerank
			out[i].Rerank = &r
		}
	}
	return out
}

func (a *cliApp) cmdSearch(ctx context.Context, args []string) error {
	fset, cf := a.flags("search")
	o := defaultRetrieveOptions()
	fset.StringVar(&o.mode, "mode", o.mode, "retriever: vector, keyword or fusion")
	fset.IntVar(&o.top, "k", o.top, "number of results (1-100)")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if strings.TrimSpace(strings.Join(pos, " ")) == "" {
		return usageError("search", "search needs a query")
	}
	if o.top < 1 || o.top > 100 {
		return usageError("search", "-k must be between 1 and 100, got %d", o.top)
	}
	query := strings.Join(pos, " ")
	o.hyde, o.rerank = false, false // search never calls an LLM
	b, err := a.openIndexed(ctx, cf, openOptions{reads: true, once: true})
	if err != nil {
		return err
	}
	defer b.Close()
	res, err := b.retrieve(ctx, query, o)
	if err != nil {
		return err
	}
	results := searchResults(res.hits)
	if cf.json {
		return printJSON(a.stdout, searchOutput{Query: query, Mode: o.mode, Results: results})
	}
	if len(results) == 0 {
		fmt.Fprintln(a.stdout, "No matching passages.")
		return nil
	}
	st := newStyle(a.stdout, a)
	for i, r := range results {
		note := ""
		if a.verbose {
			note = rankNote(res.hits[i])
		}
		fmt.Fprintf(a.stdout, "%s %s  %s%s\n", st.bold(fmt.Sprintf("%d.", r.Rank)), st.link(r.Link, r.citation.String()),
			st.dim(fmt.Sprintf("score %.4f", r.Score)), st.dim(note))
		fmt.Fprintf(a.stdout, "   %s\n\n", indent(res.hits[i].excerpt, "   "))
	}
	return nil
}

// rankNote says where the single retrievers ranked a hit.
func rankNote(h hit) string {
	var parts []string
	if h.vectorRank > 0 {
		parts = append(parts, fmt.Sprintf("vector #%d", h.vectorRank))
	}
	if h.keywordRank > 0 {
		parts = append(parts, fmt.Sprintf("keyword #%d", h.keywordRank))
	}
	if h.rerank >= 0 {
		parts = append(parts, fmt.Sprintf("rerank %d/10", h.rerank))
	}
	switch {
	case h.demoted:
		parts = append(parts, "release notes, ranked lower")
	case h.releaseNotes:
		parts = append(parts, "release notes")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  [" + strings.Join(parts, ", ") + "]"
}

func indent(s, prefix string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+prefix)
}

// cliStopWords are the engine's QuestionStopWords: English and German
// question words and function words left out of keyword search ("how do
// I ..." should not match every chunk with "do").
var cliStopWords = askyourdocs.QuestionStopWords()
