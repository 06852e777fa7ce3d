package main

// Every answer leaves the CLI sanitised: SanitizeAnswerWithOptions against the cited
// web URLs removes Markdown images, raw HTML (script elements whole, so
// no onerror attribute survives) and links to other sites from whatever a
// document put there. A generated answer is sanitised where it is made
// (ask.go); the helpers here do the same for an extractive answer's
// quotes and for the other document text an answer or a search result
// carries (breadcrumbs, excerpts, passages), in the API and MCP results.

// citedURLs are the web pages among cits: the links an answer may keep.
func citedURLs(cits []citation) []string {
	var urls []string
	for _, c := range cits {
		if isURL(c.URL) {
			urls = append(urls, c.URL)
		}
	}
	return urls
}

// sanitized returns a copy of o for an API or MCP client: the answer (an
// extractive one was sanitised already; a generated one too, so this is
// idempotent), the breadcrumbs and passages and the HyDE text.
func (o *answerResult) sanitized() *answerResult {
	c := *o
	allowed := citedURLs(o.Citations)
	c.Answer = sanitizeAnswer(o.Answer, allowed)
	c.HyDE = sanitizeAnswer(o.HyDE, allowed)
	c.Citations = make([]citation, len(o.Citations))
	for i, ct := range o.Citations {
		ct.Breadcrumb = sanitizeAnswer(ct.Breadcrumb, allowed)
		ct.passage = sanitizeAnswer(ct.passage, allowed)
		c.Citations[i] = ct
	}
	c.passages = make([]string, len(o.passages))
	for i, p := range o.passages {
		c.passages[i] = sanitizeAnswer(p, allowed)
	}
	return &c
}

// sanitizeSearch sanitises the passages and breadcrumbs of search results
// (each against its own URL when it is a web page).
func sanitizeSearch(o searchOutput) searchOutput {
	res := make([]searchResult, len(o.Results))
	for i, r := range o.Results {
		allowed := citedURLs([]citation{r.citation})
		r.Text = sanitizeAnswer(r.Text, allowed)
		r.Breadcrumb = sanitizeAnswer(r.Breadcrumb, allowed)
		res[i] = r
	}
	o.Results = res
	return o
}

// sanitizeAskOutput sanitises the document text of a web answer: the
// answer, the citations' titles and excerpts and the sources' passages.
func sanitizeAskOutput(out *askOutput) {
	var allowed []string
	for _, c := range out.Citations {
		if isURL(c.Source) {
			allowed = append(allowed, c.Source)
		}
	}
	out.Answer = sanitizeAnswer(out.Answer, allowed)
	for i := range out.Citations {
		out.Citations[i].Title = sanitizeAnswer(out.Citations[i].Title, allowed)
		out.Citations[i].Excerpt = sanitizeAnswer(out.Citations[i].Excerpt, allowed)
	}
	for i := range out.Sources {
		out.Sources[i].Text = sanitizeAnswer(out.Sources[i].Text, allowed)
	}
}
