package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

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
func viewLink(p, chunkText string) string {
	return "/view?url=" + url.QueryEscape(p) + "&chunk=" + chunkRef(chunkText) + "#passage"
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

// handleView is GET /view?url=FILE&chunk=ID.
func (s *server) handleView(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("url")
	if isURL(p) {
		// A web page is its own best view.
		http.Redirect(w, r, p, http.StatusSeeOther)
		return
	}
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
	paras, err := (&askyourdocs.FileSource{Path: p}).Fetch(r.Context())
	if err != nil {
		jsonOrPageError(w, r, http.StatusNotFound, "the file can no longer be read: "+err.Error())
		return
	}
	page := buildViewPage(paras, r.URL.Query().Get("chunk"))
	page.Label = label
	page.Original = fileLink(p, page.Page)
	s.render(w, r, http.StatusOK, "view.html", page)
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

// sortedLabels returns labels' files sorted by label (for tests and the
// front page).
func sortedLabels(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}
