package main

// The non-English sets: LibreOffice's translated help (its keyword index),
// translated man pages (their NAME descriptions) and a translated DocBook
// manual (gnucash-docs, headings as for the English gnucash set).

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"html"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// languageSets are the non-English sets, in the order of the table.
func languageSets() []set {
	lo := func(name, pkg, lang string) set {
		return set{name: name, generator: "LibreOffice help", loIndex: true, maxCases: 600,
			skip:  func(rel string) bool { return rel == "noscript.html" },
			parts: []part{{pkg: pkg, dir: "usr/share/libreoffice/help/" + lang, extract: true}}}
	}
	man := func(name, pkg, lang string) set {
		return set{name: name, generator: "man pages (man -l, plain text)", manPages: true, maxCases: 600,
			skip:  func(string) bool { return false },
			parts: []part{{pkg: pkg, dir: "usr/share/man/" + lang, extract: true}}}
	}
	return []set{
		lo("lo-ja", "libreoffice-help-ja", "ja"),
		lo("lo-zhcn", "libreoffice-help-zh-cn", "zh-CN"),
		lo("lo-zhtw", "libreoffice-help-zh-tw", "zh-TW"),
		lo("lo-ko", "libreoffice-help-ko", "ko"),
		man("man-ja", "manpages-ja", "ja"),
		man("man-de", "manpages-de", "de"),
		man("man-fr", "manpages-fr", "fr"),
		{name: "gnucash-de", pkg: "gnucash-docs", generator: "DocBook", dir: "/usr/share/doc/gnucash-docs/gnucash-guide-de",
			skip: func(rel string) bool { return rel == "index.html" }},
	}
}

// cjkRune reports a Han, kana or Hangul character.
func cjkRune(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

var bookmarkRE = regexp.MustCompile(`\{url:"([^"]+)", app:"[^"]*", text:"((?:[^"\\]|\\.)*)"\}`)

// loIndexEntries reads LibreOffice help's keyword index (<lang>/bookmarks.js
// under dir): the translated entries (holding a CJK character) with the
// page each links, "term -- subterm" read as "term subterm". The page is
// the link without the language folder, the query and the fragment.
func loIndexEntries(dir string) ([][2]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "bookmarks.js"))
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, m := range bookmarkRE.FindAllSubmatch(b, -1) {
		url, text := string(m[1]), html.UnescapeString(strings.ReplaceAll(string(m[2]), `\"`, `"`))
		if !strings.ContainsFunc(text, cjkRune) {
			continue
		}
		text = spaceRE.ReplaceAllString(strings.ReplaceAll(text, " -- ", " "), " ")
		url, _, _ = strings.Cut(url, "#")
		url, _, _ = strings.Cut(url, "?")
		_, page, ok := strings.Cut(url, "/")
		if !ok {
			continue
		}
		out = append(out, [2]string{strings.TrimSpace(text), page})
	}
	return out, nil
}

// manCorpus renders every man page under dir (man1 ... man9, gzipped
// troff, links made with .so left out, symlinks too with dropDescription) to plain text with man-db's
// `man -l` at 80 columns (no hyphenation, no justification), writes it to corpus/<section>/<page>.txt and
// labels it by its NAME line's description (the text after "name - "),
// cut from the page with dropDescription.
// It returns the corpus pages and their labels.
func manCorpus(dir, corpus string, dropDescription bool) ([]string, []label, error) {
	var pages []string
	var labels []label
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && filepath.Dir(p) == dir && !strings.HasPrefix(d.Name(), "man") {
			return fs.SkipDir // usr/share/man/de and other translations beside man1 ... man9
		}
		if err != nil || d.IsDir() || !strings.HasPrefix(filepath.Base(filepath.Dir(p)), "man") {
			return err
		}
		if dropDescription && d.Type()&fs.ModeSymlink != 0 {
			// Another name of a page (libssl-doc's EVP_sha384 -> EVP_sha224).
			// The language sets keep theirs: their figures across rounds are
			// on those corpora.
			return nil
		}
		raw, err := readMaybeGzip(p)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(raw, []byte(".so ")) {
			return nil
		}
		cmd := exec.Command("man", "--nh", "--nj", "-l", "-E", "UTF-8", p)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8")
		text, err := cmd.Output()
		if err != nil || len(bytes.TrimSpace(text)) == 0 {
			return nil // a page man cannot format is left out
		}
		name := strings.TrimSuffix(filepath.Base(p), ".gz")
		rel := path.Join(filepath.Base(filepath.Dir(p)), name+".txt")
		dst := filepath.Join(corpus, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		desc := manDescription(string(text))
		if dropDescription {
			text = []byte(manDropDescription(string(text)))
		}
		if err := os.WriteFile(dst, text, 0o644); err != nil {
			return err
		}
		pages = append(pages, rel)
		if desc != "" {
			labels = append(labels, label{desc, rel})
		}
		return nil
	})
	sort.Strings(pages)
	return pages, labels, err
}

func readMaybeGzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		r = z
	}
	return io.ReadAll(io.LimitReader(r, 16<<20))
}

// manDescription is the description of a rendered man page: the indented
// lines under its first section heading (NAME, 名前, BEZEICHNUNG, NOM),
// joined, after the first " - " (or " — "). Lines of CJK text join without a space.
// It is "" when there is none or it is shorter than three characters.
func manDescription(text string) string {
	lines := strings.Split(text, "\n")
	i := manNameStart(lines)
	var desc string
	for ; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			if desc != "" {
				break
			}
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			break
		}
		l = strings.TrimSpace(l)
		if desc != "" {
			last, _ := utf8.DecodeLastRuneInString(desc)
			first, _ := utf8.DecodeRuneInString(l)
			if !(cjkRune(last) && cjkRune(first)) {
				desc += " "
			}
		}
		desc += l
	}
	_, after, ok := strings.Cut(desc, " - ")
	if !ok {
		if _, after, ok = strings.Cut(desc, " — "); !ok {
			return ""
		}
	}
	after = strings.TrimSpace(after)
	if utf8.RuneCountInString(after) < 3 {
		return ""
	}
	return after
}

// manNameStart returns the index of the line after a rendered man page's
// first section heading (NAME, 名前, BEZEICHNUNG, NOM): line 0 is the
// title line, indented or blank lines may follow it.
func manNameStart(lines []string) int {
	i := 1
	for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || lines[i][0] == ' ') {
		i++
	}
	return i + 1
}
