// Command chunkstats reports the quality counts of the chunks the engine
// builds of document folders (issue 10, item 3): for each folder the number
// of pages and chunks, the chunks under 200 characters (and how many of
// those are a whole page that short), the chunks that hold a navigation bar
// ("Prev | Up | Home | Next", texinfo's "Next: ..., Previous: ..., Up:
// ..."), and the chunks whose text or breadcrumb holds a heading permalink
// mark (a line or breadcrumb element ending in ¶ or 🔗, or an element
// ending in " #").
//
// Usage:
//
//	go run ./scripts/dev-eval/chunkstats [-size 1200] [-overlap 150] [-show N] DIR...
//
// Every file under DIR that the CLI indexes is read as the CLI's index
// command reads it (.html through HTMLToStructuredText, other document
// formats through ExtractParagraphs) and chunked with BuildChunks. A DIR
// named corpus is reported under its parent's name, so
//
//	go run ./scripts/dev-eval/chunkstats $WORK/{octave,cmake,gnucash,mkdocs}/corpus
//
// reports the dev-eval sets scripts/dev-eval/run built in $WORK. -show N
// prints up to N offending chunks per kind and folder.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Counts are one folder's figures.
type counts struct {
	pages, chunks, short, shortPages, nav, marks int
}

var (
	// A navigation bar is a line of navigation words only ("Prev Up Home
	// Next"), a line with two of texinfo's labels ("Next: Foo, Previous:
	// Bar, Up: Baz") or a line with both "Prev" and "Next" ("<<< Prev |
	// Chapter 15 | Next >>>").
	navWordsRE = regexp.MustCompile(`(?i)^(?:\s*\|?\s*(?:prev|previous|next|up|home|top|contents|index)\b\s*\|?\s*){2,}$`)
	navLabelRE = regexp.MustCompile(`\b(?:Next|Previous|Prev|Up): .*\b(?:Next|Previous|Prev|Up): `)
	prevRE     = regexp.MustCompile(`(?i)\bprev\b`)
	nextRE     = regexp.MustCompile(`(?i)\bnext\b`)
	// A permalink mark is a ¶ or 🔗 ending a line of text (the mark of the
	// heading or definition that starts the line), or ending an element of
	// the breadcrumb (¶, 🔗 or #). A ¶ inside a sentence is content.
	markRE  = regexp.MustCompile(`(?m)(^| )(¶|🔗)$`)
	crumbRE = regexp.MustCompile(` (¶|🔗|#)( >|$)`)
)

func main() {
	size := flag.Int("size", 1200, "chunk size in characters")
	overlap := flag.Int("overlap", 150, "chunk overlap in characters")
	show := flag.Int("show", 0, "print up to this many offending chunks per kind and folder")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: chunkstats [-size N] [-overlap N] [-show N] DIR...")
		os.Exit(2)
	}
	fmt.Println("| corpus | pages | chunks | < 200 chars | of which whole page | nav-bar chunks | ¶/permalink marks |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, dir := range flag.Args() {
		c, err := count(dir, *size, *overlap, *show)
		if err != nil {
			fmt.Fprintln(os.Stderr, "chunkstats:", err)
			os.Exit(1)
		}
		name := filepath.Base(dir)
		if name == "corpus" {
			name = filepath.Base(filepath.Dir(dir))
		}
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d |\n", name, c.pages, c.chunks, c.short, c.shortPages, c.nav, c.marks)
	}
}

func count(dir string, size, overlap, show int) (counts, error) {
	var c counts
	shown := map[string]int{}
	say := func(kind, file string, ch askyourdocs.Chunk) {
		if shown[kind] < show {
			shown[kind]++
			fmt.Fprintf(os.Stderr, "--- %s %s [%s]\n%s\n", kind, file, ch.Breadcrumb, ch.Text)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		paras, err := extract(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "chunkstats: skipped: %v\n", err) // as the CLI's index skips it
			return nil
		}
		if paras == nil {
			return nil
		}
		c.pages++
		chunks := askyourdocs.BuildChunks(paras, size, overlap)
		for _, ch := range chunks {
			c.chunks++
			if utf8.RuneCountInString(ch.Text) < 200 {
				c.short++
				if len(chunks) == 1 {
					c.shortPages++
				} else {
					say("short", p, ch)
				}
			}
			if isNav(ch.Text) {
				c.nav++
				say("nav", p, ch)
			}
			if markRE.MatchString(ch.Text) || crumbRE.MatchString(ch.Breadcrumb) {
				c.marks++
				say("mark", p, ch)
			}
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

// extract reads a file as the CLI's index command does; nil for files it
// skips.
func extract(p string) ([]askyourdocs.Paragraph, error) {
	switch ext := strings.ToLower(filepath.Ext(p)); {
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return askyourdocs.HTMLToStructuredText(f)
	case askyourdocs.SupportedDocumentExt(ext):
		return askyourdocs.ExtractParagraphsWithOptions(context.Background(), p, nil)
	}
	return nil, nil
}

// isNav reports whether a chunk holds a navigation bar line.
func isNav(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		if navWordsRE.MatchString(line) || navLabelRE.MatchString(line) || prevRE.MatchString(line) && nextRE.MatchString(line) {
			return true
		}
	}
	return false
}
