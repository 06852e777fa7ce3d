package engine

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// List chunks. A chunk that lists other pages of the index, a name and a
// line about it at a time (git(1)'s list of commands, perltoc, perlmodlib,
// a module index), holds the words of many questions together, while the
// pages it names hold them spread over their text: the keyword ranker
// would put the list first for a question describing one of those pages.
// Its words describe the pages it names, not itself, so among the best
// listRankTop chunks of a keyword search a list chunk comes after the
// others (in the same order among themselves), unless the question's
// keywords stand in its own headings: a question naming the list's
// section still finds it first. Measured in docs/retrieval.md ("List
// chunks"); the rule leaves every set whose pages are not named in other
// pages' text as it was.

const (
	// listRankTop is how many of a keyword search's best chunks the rule
	// reorders: as deep as the fused lists read.
	listRankTop = 40
	// listMinNames is how many other pages, at least, a list chunk names.
	listMinNames = 10
	// listLineShare is the share of a list chunk's non-empty lines, at
	// least, that name some other page.
	listLineShare = 0.5
	// listNameMaxShare is the share of the chunks, at most, holding a
	// page's name for the name to count: a page named "file" or "index"
	// is named by every other chunk's words. In an index of fewer than
	// 250 chunks, listNameMaxDF chunks.
	listNameMaxShare = 0.02
	listNameMaxDF    = 5
	// listHeadingShare is the share of the query's keywords, at least, in
	// a chunk's own headings that keeps a list in its place.
	listHeadingShare = 0.6
)

// pageName returns the name a page of url is mentioned by in other
// pages' text: its file name in lower case without the document
// extension and a man page's section ("git-add.1.txt" -> "git-add",
// "IO::Socket.3perl.txt" -> "io::socket", "install.html" -> "install"),
// "" when shorter than three characters.
func pageName(url string) string {
	if i := strings.IndexAny(url, "?#"); i >= 0 {
		url = url[:i]
	}
	url = strings.TrimRight(url, `/\`)
	name := strings.ToLower(url[strings.LastIndexAny(url, `/\`)+1:])
	name = strings.TrimSuffix(name, ".gz")
	for _, ext := range []string{".html", ".htm", ".xhtml", ".txt", ".md", ".markdown", ".rst", ".pdf"} {
		if n, ok := strings.CutSuffix(name, ext); ok {
			name = n
			break
		}
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 && i+1 < len(name) && name[i+1] >= '0' && name[i+1] <= '9' {
		name = name[:i] // a man section: ".1", ".3perl", ".7ssl"
	}
	if utf8.RuneCountInString(name) < 3 {
		return ""
	}
	return name
}

// listNames calls fn with each whitespace-separated token of line that
// is one of names, other than own: compared in lower case, without the
// brackets, quotes and punctuation around it ("git-add(1)," ->
// "git-add"). It allocates only for a name found (and to lower-case a
// token with non-ASCII letters); buf is scratch space, returned for
// reuse.
func listNames(line string, names map[string]bool, own string, buf []byte, fn func(name string)) []byte {
	for i := 0; i < len(line); {
		for i < len(line) && listNameDelim(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !listNameDelim(line[j]) {
			j++
		}
		tok := strings.Trim(line[i:j], ".:-")
		i = j
		if len(tok) < 3 {
			continue
		}
		upper, ascii := false, true
		for k := 0; k < len(tok); k++ {
			c := tok[k]
			upper = upper || c >= 'A' && c <= 'Z'
			ascii = ascii && c < utf8.RuneSelf
		}
		switch {
		case !ascii:
			// Lower-cased only when some letter changes: a run of
			// CJK text has none, and most tokens of such a text are this.
			t := tok
			if strings.IndexFunc(tok, func(r rune) bool { return unicode.ToLower(r) != r }) >= 0 {
				t = strings.ToLower(tok)
			}
			if names[t] && t != own {
				fn(t)
			}
		case upper:
			buf = append(buf[:0], tok...)
			for k, c := range buf {
				if c >= 'A' && c <= 'Z' {
					buf[k] = c + 'a' - 'A'
				}
			}
			if names[string(buf)] && string(buf) != own {
				fn(string(buf))
			}
		default:
			if names[tok] && tok != own {
				fn(tok)
			}
		}
	}
	return buf
}

// listNameDelim reports whether c separates the tokens listNames reads.
func listNameDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '(', ')', '[', ']', '{', '}', ',', ';', '"', '\'', '`', '<', '>', '|', '*':
		return true
	}
	return false
}

// listsLast reorders docs, a keyword search's result best first, so that
// the list chunks among the first listRankTop come after the other
// chunks of those (the rule above), and returns docs. It reads ix's page
// names (keywordIndex.pages) and, only for a chunk that could be a
// list, the document frequencies of the names it holds, to leave out
// names that are common words.
func listsLast(ctx context.Context, ix keywordIndex, p bm25Plan, docs []*ai.Document) ([]*ai.Document, error) {
	top := docs[:min(len(docs), listRankTop)]
	if len(top) < 2 {
		return docs, nil
	}
	pages, err := ix.pages(ctx)
	if err != nil || len(pages.names) <= listMinNames {
		return docs, err
	}
	names := pages.names
	// The page names each chunk's lines hold. Before any document
	// frequency is read, a chunk must be a list with every name counted
	// (the frequencies only take names away): most searches have none.
	type chunk struct {
		lines int        // non-empty lines
		named [][]string // the other pages' names of each line naming some
	}
	chunks := make([]chunk, len(top))
	candidate := make([]bool, len(top))
	someCandidate := false
	var buf []byte
	for i, d := range top {
		if d == nil {
			continue
		}
		url, _ := d.Metadata[MetaURL].(string)
		own := pageName(url)
		var c chunk
		var distinct map[string]bool
		naming := 0
		for line := range strings.SplitSeq(DocText(d), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var found []string
			buf = listNames(line, names, own, buf, func(name string) {
				if distinct == nil {
					distinct = make(map[string]bool)
				}
				found = append(found, name)
				distinct[name] = true
			})
			c.lines++
			if len(found) > 0 {
				naming++
				c.named = append(c.named, found)
			}
		}
		chunks[i] = c
		candidate[i] = len(distinct) >= listMinNames && float64(naming) >= listLineShare*float64(c.lines)
		someCandidate = someCandidate || candidate[i]
	}
	if !someCandidate {
		return docs, nil
	}
	// The candidates' names' terms (a name is indexed as the identifier
	// it is, "git-add", or as its one word's term, "perlsyn") and their
	// document frequencies.
	termOf := make(map[string]string)
	var terms []string
	for i, c := range chunks {
		if !candidate[i] {
			continue
		}
		for _, found := range c.named {
			for _, tok := range found {
				if _, ok := termOf[tok]; !ok {
					t := listNameTerm(p.an, tok)
					termOf[tok] = t
					if t != "" {
						terms = append(terms, t)
					}
				}
			}
		}
	}
	dfs, err := ix.docFreqs(ctx, terms)
	if err != nil {
		return docs, err
	}
	n, err := ix.chunks(ctx)
	if err != nil {
		return docs, err
	}
	rare := make(map[string]bool, len(terms))
	for i, t := range terms {
		rare[t] = float64(dfs[i]) <= max(listNameMaxShare*float64(n), listNameMaxDF)
	}
	isList := make([]bool, len(top))
	lists := 0
	for i, c := range chunks {
		if !candidate[i] {
			continue
		}
		distinct := make(map[string]bool)
		naming := 0
		for _, found := range c.named {
			named := false
			for _, tok := range found {
				if t := termOf[tok]; t != "" && rare[t] {
					distinct[tok] = true
					named = true
				}
			}
			if named {
				naming++
			}
		}
		if len(distinct) >= listMinNames && float64(naming) >= listLineShare*float64(c.lines) && !listHeadingsMatch(p, top[i]) {
			isList[i] = true
			lists++
		}
	}
	if lists == 0 {
		return docs, nil
	}
	out := make([]*ai.Document, 0, len(top))
	for i, d := range top {
		if !isList[i] {
			out = append(out, d)
		}
	}
	for i, d := range top {
		if isList[i] {
			out = append(out, d)
		}
	}
	copy(docs, out)
	return docs, nil
}

// listNameTerm returns the keyword term a page name is indexed under:
// the name itself when the analyzer keeps it whole (an identifier), else
// its one term; "" for a name of several plain words.
func listNameTerm(an *textAnalyzer, name string) string {
	if an == nil {
		return ""
	}
	ts := an.terms(name)
	for _, t := range ts {
		if t == name {
			return t
		}
	}
	if len(ts) == 1 {
		return ts[0]
	}
	return ""
}

// listHeadingsMatch reports whether doc's own headings (breadcrumb and
// merged headings) hold at least listHeadingShare of p's keywords.
func listHeadingsMatch(p bm25Plan, doc *ai.Document) bool {
	if len(p.keywords) == 0 || p.an == nil {
		return false
	}
	head := bm25HeadingText(doc.Metadata)
	if head == "" {
		return false
	}
	in := make(map[string]bool)
	for _, t := range p.an.terms(head) {
		in[t] = true
	}
	hits := 0
	for _, k := range p.keywords {
		if in[k] {
			hits++
		}
	}
	return float64(hits) >= listHeadingShare*float64(len(p.keywords))
}
