// Command chunk extracts the paragraphs of a document and prints the chunks
// BuildChunks makes of them: for each chunk its number, pages, breadcrumb
// and text.
//
// Usage:
//
//	go run ./cmd/chunk [-size 1200] [-overlap 150] [-paragraphs] [-allow-private] FILE|URL
//
// FILE is a document of any format the engine indexes (read as
// NewFileSource reads it: ExtractParagraphs' formats and HTML files); an
// http(s) URL is fetched as a web page (following <meta refresh> stubs on
// the same host) through the SSRF guard, which refuses private addresses
// unless -allow-private is given. With -paragraphs it prints the extracted
// paragraphs instead of chunks.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

func main() {
	// Ctrl-C ends a web fetch in flight rather than waiting for it.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := runContext(ctx, os.Args[1:], os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the flag set printed the usage
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chunk:", err)
		os.Exit(1)
	}
}

// errUsage reports a wrong command line.
var errUsage = errors.New("usage: chunk [-size N] [-overlap N] [-paragraphs] [-allow-private] FILE|URL")

// pageFetchTimeout bounds the fetch of a web page, as the engine's
// context-free FetchWebPageFollowingRefresh does.
const pageFetchTimeout = 2 * time.Minute

// run is runContext with a context that never ends by itself.
func run(args []string, out io.Writer) error {
	return runContext(context.Background(), args, out)
}

// runContext runs the command; a web fetch gives up when ctx ends.
func runContext(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("chunk", flag.ContinueOnError)
	size := fs.Int("size", 1200, "maximum chunk size in characters")
	overlap := fs.Int("overlap", 150, "characters carried over between chunks")
	paragraphs := fs.Bool("paragraphs", false, "print the extracted paragraphs instead of chunks")
	allowPrivate := fs.Bool("allow-private", false, "allow fetching URLs on private or loopback addresses")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errUsage
	}
	src := fs.Arg(0)
	pages := askyourdocs.NewFetcher(&askyourdocs.FetcherOptions{AllowPrivateTargets: *allowPrivate})
	paras, url, err := extract(ctx, pages, src)
	if err != nil {
		return err
	}
	if *paragraphs {
		for _, p := range paras {
			kind := "p"
			if p.Heading {
				kind = "H"
			}
			fmt.Fprintf(out, "[%s page %d] %s\n    %s\n", kind, p.PageNum, p.Breadcrumb, p.Text)
		}
		return nil
	}
	chunks := askyourdocs.BuildChunks(paras, *size, *overlap)
	for i, c := range chunks {
		where := "pages " + c.Pages
		if url != "" {
			where = url
		}
		fmt.Fprintf(out, "--- chunk %d/%d  %s  %s\n%s\n\n", i+1, len(chunks), where, c.Breadcrumb, c.Text)
	}
	return nil
}

// extract returns the paragraphs of a file or web page, and the URL the page
// came from ("" for a file), fetching a page with pages until ctx ends.
func extract(ctx context.Context, pages *askyourdocs.Fetcher, src string) ([]askyourdocs.Paragraph, string, error) {
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		ctx, cancel := context.WithTimeout(ctx, pageFetchTimeout)
		defer cancel()
		page, from, err := pages.FetchWebPageFollowingRefresh(ctx, src)
		if err != nil {
			return nil, "", err
		}
		paras, err := askyourdocs.HTMLToStructuredText(strings.NewReader(page))
		return paras, from, err
	}
	// The file is read as indexing reads it, HTML files included.
	file, err := askyourdocs.NewFileSource(src)
	if err != nil {
		return nil, "", err
	}
	paras, err := file.Fetch(ctx)
	return paras, "", err
}
