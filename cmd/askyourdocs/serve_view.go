package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// The passage view (/view?url=FILE&chunk=ID) shows a cited chunk of an
// indexed file in its section, as the index has it: the file is read
// again (as the indexer read it), cut into the same chunks, and the
// section around the chunk whose text hashes to ID is rendered with its
// headings, the cited paragraphs highlighted and scrolled to (#passage).
// Web pages are cited by their own URL instead.

// viewMaxParas caps the paragraphs the view shows around a passage.
const viewMaxParas = 300

// chunkRef is the ID of a chunk in a /view link: the first 16 hex digits
// of the SHA-256 of its text.
func chunkRef(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:8])
}

// viewLink is the passage view of the chunk with text chunkText of file p.
func viewLink(p, chunkText, quote string) string {
	return "/view?url=" + url.QueryEscape(p) + "&chunk=" + chunkRef(chunkText) + quoteParam(quote) + "#passage"
}

// maxViewQuote caps the quote a view link carries (q=): longer quotes
// are highlighted by their chunk instead.
const maxViewQuote = 1500

// quoteParam is the &q= parameter of a view link: the quote the view
// highlights ("" when there is none or it is too long).
func quoteParam(quote string) string {
	if quote == "" || len(quote) > maxViewQuote {
		return ""
	}
	return "&q=" + url.QueryEscape(quote)
}

// passageLink is the link of a cited file's passage for an asker who may
// not open files: the source's label instead of its path, the chunk by its
// reference (chunkRef), the passage as the index stored it
// (handlePassageView).
func passageLink(label, ref, quote string) string {
	return "/passage?src=" + url.QueryEscape(label) + "&chunk=" + url.QueryEscape(ref) + quoteParam(quote) + "#passage"
}

// markQuote highlights quote in page: each of its lines (a sentence run,
// a code line, a list item) where a paragraph holds it, only those
// paragraphs marked. It reports whether every line was found; when one is
// not (the file changed, the quote is from another chunk), the page keeps
// the chunk's highlight. Only text of the page is marked: q never reaches
// the page itself.
func markQuote(page *viewPage, quote string) bool {
	var lines []string
	for l := range strings.SplitSeq(quote, "\n") {
		if l = strings.TrimSuffix(strings.Join(strings.Fields(l), " "), "…"); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return false
	}
	marked := make([]viewPara, len(page.Paras))
	copy(marked, page.Paras)
	for i := range marked {
		marked[i].Hit, marked[i].First = false, false
	}
	next := 0
	for _, l := range lines {
		found := false
		for i := next; i < len(marked) && !found; i++ {
			text := strings.Join(strings.Fields(marked[i].Text), " ")
			at := strings.Index(text, l)
			if at < 0 || marked[i].Mark != "" {
				continue
			}
			marked[i].Text = text
			marked[i].Before, marked[i].Mark, marked[i].After = text[:at], l, text[at+len(l):]
			marked[i].Hit = true
			next, found = i+1, true
		}
		if !found {
			return false
		}
	}
	for i := range marked {
		if marked[i].Hit {
			marked[i].First = true
			break
		}
	}
	page.Paras = marked
	return true
}

// fileLink is the download route of an indexed file, at page for a PDF.
func fileLink(p string, page int) string {
	l := "/files?url=" + url.QueryEscape(p)
	if page > 0 && strings.EqualFold(filepath.Ext(p), ".pdf") {
		l += "#page=" + strconv.Itoa(page)
	}
	return l
}

// viewPara is one paragraph of the view.
type viewPara struct {
	Text    string
	Heading bool
	Code    bool
	Hit     bool
	// Before, Mark and After are Text cut around the quoted sentences
	// (markQuote): only Mark is highlighted. Mark is "" otherwise.
	Before, Mark, After string
	// First marks the first highlighted paragraph (id="passage").
	First bool
}

// viewPage is the passage view's data.
type viewPage struct {
	Label, Breadcrumb string
	// Original opens the file (at the passage's page for a PDF).
	Original string
	Page     int
	Paras    []viewPara
	// Found is false when the file no longer has the chunk (it changed
	// since it was indexed): the start of the file is shown.
	Found bool
}

// handleView is GET /view?url=FILE|PAGE&chunk=ID. A file's view needs
// what /files needs (filesAccess); a web page's shows only text the index
// holds for it, like its answers, and is open to everyone.
func (s *server) handleView(w http.ResponseWriter, r *http.Request) {
	if isURL(r.URL.Query().Get("url")) {
		s.handlePageView(w, r)
		return
	}
	s.filesAccess(s.handleFileView)(w, r)
}

// handleFileView is the view of a file: read again and cut into chunks,
// or, when the file no longer has the chunk (it changed, or was indexed
// with other chunk sizes), the chunk's window as the index stored it.
func (s *server) handleFileView(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("url")
	labels, err := s.sourceLabels(r.Context())
	if err != nil {
		jsonOrPageError(w, r, http.StatusInternalServerError, "the sources could not be listed")
		return
	}
	label, indexed := labels[p]
	if !indexed {
		jsonOrPageError(w, r, http.StatusNotFound, "no indexed file "+p)
		return
	}
	ref := r.URL.Query().Get("chunk")
	var page viewPage
	paras, err := s.readIndexedFile(r.Context(), p)
	if errors.Is(err, errNotIndexedFile) && !errors.Is(err, errFileChanged) {
		slog.Warn("serve: /view refused a file", "url", p, "reason", err)
		jsonOrPageError(w, r, http.StatusNotFound, "the file is no longer the one indexed")
		return
	}
	if err == nil {
		page = buildViewPage(paras, ref)
	}
	if !page.Found {
		if stored, ok := s.storedViewPage(r.Context(), p, ref); ok {
			page = stored
		} else if err != nil {
			jsonOrPageError(w, r, http.StatusNotFound, "the file can no longer be read: "+err.Error())
			return
		}
	}
	page.Label = label
	page.Original = fileLink(p, page.Page)
	markQuote(&page, r.URL.Query().Get("q"))
	s.render(w, r, http.StatusOK, "view.html", page)
}

// handlePassageView is GET /passage?src=LABEL&chunk=ID: a cited file's
// passage for an asker who may not open files (passageLink). It shows the
// passage as the index stored it (the text answers already quote), under
// the source's label, with no path and no link to the file; a label that
// names no file, or two, is not found.
func (s *server) handlePassageView(w http.ResponseWriter, r *http.Request) {
	labels, err := s.sourceLabels(r.Context())
	if err != nil {
		jsonOrPageError(w, r, http.StatusInternalServerError, "the sources could not be listed")
		return
	}
	want, p, n := r.URL.Query().Get("src"), "", 0
	for path, label := range labels {
		if label == want && !isURL(path) {
			p, n = path, n+1
		}
	}
	var page viewPage
	ok := n == 1
	if ok {
		page, ok = s.storedViewPage(r.Context(), p, r.URL.Query().Get("chunk"))
	}
	if !ok {
		jsonOrPageError(w, r, http.StatusNotFound, "no indexed passage of "+want)
		return
	}
	page.Label = want
	page.Original = ""
	markQuote(&page, r.URL.Query().Get("q"))
	s.render(w, r, http.StatusOK, "view.html", page)
}

// handlePageView is the view of a web page's chunk, from the index.
func (s *server) handlePageView(w http.ResponseWriter, r *http.Request) {
	u := r.URL.Query().Get("url")
	page, ok := s.storedViewPage(r.Context(), u, r.URL.Query().Get("chunk"))
	if !ok {
		jsonOrPageError(w, r, http.StatusNotFound, "no indexed passage of "+u)
		return
	}
	page.Label = u
	page.Original = u
	markQuote(&page, r.URL.Query().Get("q"))
	s.render(w, r, http.StatusOK, "view.html", page)
}

// viewMaxChunks caps the chunks of one source the stored view looks
// through.
const viewMaxChunks = 5000

// readIndexedFile returns the paragraphs of the indexed file p, read only
// if it still is the file that was indexed (openIndexedFile; an edited
// file's error wraps errFileChanged).
func (s *server) readIndexedFile(ctx context.Context, p string) ([]askyourdocs.Paragraph, error) {
	srcs, err := s.b.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	source := ""
	for _, src := range srcs {
		if src.URL == p {
			source = src.Source
			break
		}
	}
	f, _, err := s.openIndexedFile(ctx, p, source)
	if err != nil {
		return nil, err
	}
	real := f.Name()
	f.Close()
	// Read by p, whose extension says the format as at indexing, and
	// check that p still led to the checked file once it was read.
	paras, err := (&askyourdocs.FileSource{Path: p}).Fetch(ctx)
	if err != nil {
		return nil, err
	}
	if again, err := filepath.EvalSymlinks(p); err != nil || again != real {
		return nil, fmt.Errorf("%w: %s was swapped while it was read", errNotIndexedFile, p)
	}
	return paras, nil
}

// storedViewPage renders the chunk ref of source u from the index: its
// stored window (ParentText, bounded by the section) with the section's
// headings, the chunk's lines marked. ok is false when the index has no
// such chunk.
func (s *server) storedViewPage(ctx context.Context, u, ref string) (viewPage, bool) {
	docs, err := s.b.store.SearchVector(ctx, u, viewMaxChunks, &askyourdocs.Filter{Metadata: map[string][]string{askyourdocs.MetaURL: {u}}})
	if err != nil {
		return viewPage{}, false
	}
	for _, d := range docs {
		text := askyourdocs.DocText(d)
		if chunkRef(text) != ref {
			continue
		}
		meta := func(k string) string { v, _ := d.Metadata[k].(string); return v }
		page := viewPage{Found: true, Breadcrumb: meta(askyourdocs.MetaBreadcrumb)}
		if p, _, _ := strings.Cut(meta(askyourdocs.MetaPages), "-"); p != "" {
			page.Page, _ = strconv.Atoi(p)
		}
		window := meta(askyourdocs.MetaParentText)
		if window == "" {
			window = text
		}
		page.Paras = storedParas(window, text, page.Breadcrumb, meta(askyourdocs.MetaHeadings))
		return page, true
	}
	return viewPage{}, false
}

// storedParas turns a stored window into view paragraphs: its lines,
// headings by the breadcrumb and merged headings, the lines of the chunk
// text marked.
func storedParas(window, chunk, breadcrumb, headings string) []viewPara {
	known := map[string]bool{}
	for _, h := range append(strings.Split(breadcrumb, " > "), strings.Split(headings, "\n")...) {
		if h = strings.TrimSpace(h); h != "" {
			known[h] = true
		}
	}
	lines := strings.Split(window, "\n")
	from, to := locateLines(lines, strings.Split(chunk, "\n"))
	var out []viewPara
	for i, l := range lines {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		vp := viewPara{Text: l, Heading: known[l], Hit: i >= from && i < to}
		vp.Code = !vp.Heading && looksLikeCode(l)
		vp.First = vp.Hit && i == from
		out = append(out, vp)
	}
	return out
}

// locateLines returns the lines [from, to) of window that chunk's lines
// are (in part, for the first and last); (-1, -1) when they are not.
func locateLines(window, chunk []string) (int, int) {
	paras := make([]askyourdocs.Paragraph, len(window))
	for i, l := range window {
		paras[i] = askyourdocs.Paragraph{Text: l}
	}
	return locateChunk(paras, strings.Join(chunk, "\n"))
}

// buildViewPage finds the chunk ref among paras' chunks and returns the
// section around it, its paragraphs marked.
func buildViewPage(paras []askyourdocs.Paragraph, ref string) viewPage {
	var page viewPage
	var chunk *askyourdocs.Chunk
	chunks := askyourdocs.BuildChunks(paras, defaultChunkSize, defaultChunkOverlap)
	for i := range chunks {
		if chunkRef(chunks[i].Text) == ref {
			chunk = &chunks[i]
			break
		}
	}
	from, to := 0, min(len(paras), viewMaxParas) // section shown
	hitFrom, hitTo := -1, -1                     // paragraphs of the chunk
	if chunk != nil {
		hitFrom, hitTo = locateChunk(paras, chunk.Text)
	}
	if hitFrom >= 0 {
		page.Found = true
		page.Breadcrumb = chunk.Breadcrumb
		from, to = hitFrom, hitTo
		inSection := func(p askyourdocs.Paragraph) bool {
			return chunk.Breadcrumb == "" || p.Breadcrumb == chunk.Breadcrumb || strings.HasPrefix(p.Breadcrumb, chunk.Breadcrumb+" > ")
		}
		for from > 0 && inSection(paras[from-1]) && to-from < viewMaxParas {
			from--
		}
		for to < len(paras) && inSection(paras[to]) && to-from < viewMaxParas {
			to++
		}
		page.Page = paras[hitFrom].PageNum
	}
	for i := from; i < to; i++ {
		p := paras[i]
		vp := viewPara{Text: p.Text, Heading: p.Heading, Code: !p.Heading && looksLikeCode(p.Text),
			Hit: i >= hitFrom && i < hitTo}
		vp.First = vp.Hit && i == hitFrom
		page.Paras = append(page.Paras, vp)
	}
	return page
}

// locateChunk returns the paragraphs [from, to) the chunk text was built
// from: its lines are the paragraphs' words (the first and last possibly
// in part), in order; (-1, -1) when they are not found.
func locateChunk(paras []askyourdocs.Paragraph, text string) (int, int) {
	lines := strings.Split(text, "\n")
	norm := make([]string, len(paras))
	for i, p := range paras {
		norm[i] = strings.Join(strings.Fields(p.Text), " ")
	}
	for start := range norm {
		if !strings.Contains(norm[start], lines[0]) {
			continue
		}
		j, ok := start, true
		for _, l := range lines[1:] {
			j++
			for j < len(norm) && norm[j] == "" {
				j++
			}
			if j >= len(norm) || !strings.Contains(norm[j], l) {
				ok = false
				break
			}
		}
		if ok {
			return start, j + 1
		}
	}
	return -1, -1
}

// sourceLabels maps every indexed file to its label (distinctLabels) and
// every indexed web page to its URL.
func (s *server) sourceLabels(ctx context.Context) (map[string]string, error) {
	srcs, err := s.b.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	var files []string
	labels := make(map[string]string, len(srcs))
	for _, src := range srcs {
		if isURL(src.URL) {
			labels[src.URL] = src.URL
		} else {
			files = append(files, src.URL)
		}
	}
	for p, l := range distinctLabels(files, s.isUpload) {
		labels[p] = l
	}
	return labels, nil
}

// distinctLabels names each file by the shortest tail of its path that no
// other file shares: "venv.html" when it is the only one, else
// "tutorial/venv.html" and "library/venv.html". An uploaded file (below
// its random upload directory) that shares its name is told apart by the
// start of that directory's name instead ("venv.html (upload 3fa2c1)").
func distinctLabels(paths []string, isUpload func(string) bool) map[string]string {
	parts := make([][]string, len(paths))
	for i, p := range paths {
		parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(p)), "/")
	}
	tail := func(i, k int) string {
		ps := parts[i]
		return strings.Join(ps[max(0, len(ps)-k):], "/")
	}
	out := make(map[string]string, len(paths))
	for i, p := range paths {
		k := 1
		for ; k < len(parts[i]); k++ {
			unique := true
			for j := range paths {
				if j != i && tail(j, k) == tail(i, k) {
					unique = false
					break
				}
			}
			if unique {
				break
			}
		}
		out[p] = tail(i, k)
		if k > 1 && isUpload != nil && isUpload(p) {
			dir := parts[i][len(parts[i])-2]
			out[p] = parts[i][len(parts[i])-1] + " (upload " + dir[:min(6, len(dir))] + ")"
		}
	}
	return out
}

// codeish matches what prose lines rarely have and commands and code
// always do: a command-line option, a path, an assignment, brackets, a
// prompt, a file extension, an identifier with _ or ::. (The engine's
// extractive answer keeps such lines whole by the same rule; the view
// only styles them.)
var codeish = regexp.MustCompile(`(^[$>#%] |\s--?[A-Za-z][\w-]*|\./|~/|\w/\w|[=(){}\[\];<>\\]|::|\w_\w|\.[a-z]{1,4}\b|^[a-z][\w-]*\s+[a-z][\w-]*(\s|$))`)

// looksLikeCode reports whether line l is code or a command: no sentence
// punctuation at its end and code-like characters in it.
func looksLikeCode(l string) bool {
	if l == "" || utf8.RuneCountInString(l) > 400 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(l)
	if strings.ContainsRune(".!?", last) && !strings.HasSuffix(l, "...") {
		return false
	}
	return codeish.MatchString(l)
}
