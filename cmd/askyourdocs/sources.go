package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// errNotIndexed is returned by delete when nothing matches its argument.
var errNotIndexed = errors.New("nothing indexed under that name")

// sourceEntry is one indexed document in sources' and delete's --json
// output.
type sourceEntry struct {
	URL     string `json:"url"`
	Display string `json:"display"`
	Source  string `json:"source"`
	Chunks  int    `json:"chunks"`
	// Language is the language detected in the document ("en", "de",
	// "ja", ...; empty when none was told).
	Language string `json:"language,omitempty"`
	// LastChecked and LastChanged (sources only): when an index run or a
	// watch last read the source and last found its text changed; null
	// when not recorded.
	LastChecked *time.Time `json:"lastChecked,omitempty"`
	LastChanged *time.Time `json:"lastChanged,omitempty"`
}

// checkTimes returns c's dates for JSON: nil for those not recorded.
func checkTimes(c sourceCheck) (checked, changed *time.Time) {
	if !c.Checked.IsZero() {
		checked = &c.Checked
	}
	if !c.Changed.IsZero() {
		changed = &c.Changed
	}
	return checked, changed
}

// sourcesOutput is sources' --json output.
type sourcesOutput struct {
	Store    string        `json:"store"`
	Embedder string        `json:"embedder"`
	Chunks   int           `json:"chunks"`
	Results  []sourceEntry `json:"results"`
}

func (a *cliApp) cmdSources(ctx context.Context, args []string) error {
	fset, cf := a.flags("sources")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("sources", "sources takes no arguments")
	}
	b, err := a.open(ctx, cf, openOptions{})
	if err != nil {
		return err
	}
	defer b.Close()
	srcs, err := b.store.Sources(ctx)
	if err != nil {
		return err
	}
	checks, err := b.store.loadChecks(ctx)
	if err != nil {
		return err
	}
	out := sourcesOutput{Store: storeLabel(b.store), Embedder: b.manifest.Embedder, Results: make([]sourceEntry, len(srcs))}
	for i, s := range srcs {
		out.Results[i] = sourceEntry{URL: s.URL, Display: shortPath(s.URL, s.Source), Source: s.Source, Chunks: s.Chunks, Language: s.Language}
		out.Results[i].LastChecked, out.Results[i].LastChanged = checkTimes(checks[s.URL])
		out.Chunks += s.Chunks
	}
	if cf.json {
		return printJSON(a.stdout, out)
	}
	if len(srcs) == 0 {
		fmt.Fprintf(a.stdout, "Nothing is indexed yet in %s.\n", b.store.describe())
		return nil
	}
	st := newStyle(a.stdout, a)
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNKS\tFILE OR URL\tINDEXED FROM")
	for _, e := range out.Results {
		from := printable(displayPath(e.Source))
		if e.Source == e.URL {
			from = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", e.Chunks, st.link(citationLink(e.URL, "", ""), printable(e.Display)), from)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "%s, %s in %s (embedder %s)\n", count(len(srcs), "document", "documents"),
		count(out.Chunks, "chunk", "chunks"), out.Store, out.Embedder)
	return nil
}

// deleteOutput is delete's --json output.
type deleteOutput struct {
	DryRun  bool          `json:"dryRun"`
	Chunks  int           `json:"chunks"`
	Results []sourceEntry `json:"results"`
	// Missing are the arguments that matched nothing.
	Missing []string `json:"missing"`
}

func (a *cliApp) cmdDelete(ctx context.Context, args []string) error {
	fset, cf := a.flags("delete")
	dryRun := fset.Bool("dry-run", false, "list what would be removed, remove nothing")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError("delete", "delete needs a file, folder, URL or source name (see 'askyourdocs sources')")
	}
	b, err := a.open(ctx, cf, openOptions{})
	if err != nil {
		return err
	}
	defer b.Close()
	srcs, err := b.store.Sources(ctx)
	if err != nil {
		return err
	}
	out := deleteOutput{DryRun: *dryRun, Results: []sourceEntry{}, Missing: []string{}}
	taken := map[string]bool{}
	for _, arg := range pos {
		matched := matchSources(srcs, arg)
		if len(matched) == 0 {
			out.Missing = append(out.Missing, arg)
			continue
		}
		for _, s := range matched {
			if taken[s.URL] {
				continue
			}
			taken[s.URL] = true
			out.Results = append(out.Results, sourceEntry{URL: s.URL, Display: shortPath(s.URL, s.Source), Source: s.Source, Chunks: s.Chunks})
			out.Chunks += s.Chunks
		}
	}
	if !*dryRun {
		for _, e := range out.Results {
			if _, err := b.store.DeleteByURL(ctx, e.URL); err != nil {
				return fmt.Errorf("delete %s: %w", e.Display, err)
			}
		}
	}
	if cf.json {
		if err := printJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		verb := "Deleted"
		if *dryRun {
			verb = "Would delete"
		}
		for _, e := range out.Results {
			fmt.Fprintf(a.stdout, "%s %s (%s)\n", verb, printable(e.Display), count(e.Chunks, "chunk", "chunks"))
		}
		if len(out.Results) > 1 {
			fmt.Fprintf(a.stdout, "%s %s, %s in total\n", verb, count(len(out.Results), "document", "documents"), count(out.Chunks, "chunk", "chunks"))
		}
		if *dryRun && len(out.Results) > 0 {
			fmt.Fprintln(a.stdout, "Nothing was removed (--dry-run).")
		}
	}
	if len(out.Missing) > 0 {
		err := fmt.Errorf("%w: %s", errNotIndexed, strings.Join(out.Missing, ", "))
		if cf.json {
			return &quietError{err}
		}
		return withHint(err, "'askyourdocs sources' lists what is indexed")
	}
	return nil
}

// matchSources returns the indexed documents arg names: its file or URL,
// the files below it (a folder), or the documents indexed under it as
// their source (a crawl's first URL, a folder).
func matchSources(srcs []askyourdocs.Source, arg string) []askyourdocs.Source {
	keys := []string{arg}
	var prefix string
	if !isURL(arg) {
		if abs, err := filepath.Abs(arg); err == nil {
			keys = append(keys, abs)
			prefix = strings.TrimSuffix(abs, string(filepath.Separator)) + string(filepath.Separator)
		}
	}
	var out []askyourdocs.Source
	for _, s := range srcs {
		hit := prefix != "" && strings.HasPrefix(s.URL, prefix)
		for _, k := range keys {
			hit = hit || s.URL == k || s.Source == k
		}
		if hit {
			out = append(out, s)
		}
	}
	return out
}
