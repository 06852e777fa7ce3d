// Command chunk extracts the paragraphs of a document and prints the chunks
// BuildChunks makes of them: for each chunk its number, pages, breadcrumb
// and text.
//
// Usage:
//
//	go run ./cmd/chunk [-size 1200] [-overlap 150] [-paragraphs] FILE
//
// FILE is a .pdf or .docx file. With -paragraphs it prints the extracted
// paragraphs instead of chunks.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chunk:", err)
		os.Exit(1)
	}
}

// errUsage reports a wrong command line.
var errUsage = errors.New("usage: chunk [-size N] [-overlap N] [-paragraphs] FILE")

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("chunk", flag.ContinueOnError)
	size := fs.Int("size", 1200, "maximum chunk size in characters")
	overlap := fs.Int("overlap", 150, "characters carried over between chunks")
	paragraphs := fs.Bool("paragraphs", false, "print the extracted paragraphs instead of chunks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errUsage
	}
	src := fs.Arg(0)
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		return fmt.Errorf("%s: URL input arrives with web.go; pass a .pdf or .docx file", src)
	}
	if !askyourdocs.SupportedDocumentExt(filepath.Ext(src)) {
		return fmt.Errorf("%s: not a .pdf or .docx file", src)
	}
	paras, err := askyourdocs.ExtractParagraphs(src)
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
		fmt.Fprintf(out, "--- chunk %d/%d  pages %s  %s\n%s\n\n", i+1, len(chunks), c.Pages, c.Breadcrumb, c.Text)
	}
	return nil
}
