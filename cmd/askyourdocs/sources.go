package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// errNotIndexed is returned by delete when nothing matches its argument.
var errNotIndexed = errors.New("nothing indexed under that name")

func (a *cliApp) cmdSources(ctx context.Context, args []string) error {
	fset, cf := a.newFlagSet("sources")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("%w: sources takes no arguments", errUsage)
	}
	b, err := a.open(ctx, cf, openOptions{})
	if err != nil {
		return err
	}
	defer b.Close()
	srcs, err := b.store.listSources(ctx)
	if err != nil {
		return err
	}
	if cf.json {
		type jsonSource struct {
			URL    string `json:"url"`
			Source string `json:"source"`
			Chunks int    `json:"chunks"`
		}
		out := make([]jsonSource, len(srcs))
		for i, s := range srcs {
			out[i] = jsonSource{s.URL, s.Source, s.Chunks}
		}
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(srcs) == 0 {
		fmt.Fprintf(a.stdout, "Nothing is indexed yet in %s.\n", b.store.describe())
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNKS\tURL OR FILE\tSOURCE")
	total := 0
	for _, s := range srcs {
		total += s.Chunks
		src := displayPath(s.Source)
		if s.Source == s.URL {
			src = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", s.Chunks, displayPath(s.URL), src)
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "%d %s, %d chunks in %s (embedder %s)\n", len(srcs), plural(len(srcs), "document", "documents"),
		total, b.store.describe(), b.manifest.Embedder)
	return nil
}

func (a *cliApp) cmdDelete(ctx context.Context, args []string) error {
	fset, cf := a.newFlagSet("delete")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: delete needs a file, folder, URL or source name (see 'askyourdocs sources')", errUsage)
	}
	b, err := a.open(ctx, cf, openOptions{})
	if err != nil {
		return err
	}
	defer b.Close()
	missing := 0
	for _, arg := range pos {
		n, err := deleteEverywhere(ctx, b.store, arg)
		if err != nil {
			return err
		}
		if n == 0 {
			missing++
			fmt.Fprintf(a.stderr, "%s: %v\n", arg, errNotIndexed)
			continue
		}
		if cf.json {
			json.NewEncoder(a.stdout).Encode(map[string]any{"deleted": arg, "chunks": n})
		} else {
			fmt.Fprintf(a.stdout, "Deleted %s: %d chunks\n", arg, n)
		}
	}
	if missing > 0 {
		return fmt.Errorf("%w: %d of %d arguments", errNotIndexed, missing, len(pos))
	}
	return nil
}

// deleteEverywhere removes the chunks whose url or source is arg (a file
// path is also tried as an absolute path) and returns how many went.
func deleteEverywhere(ctx context.Context, store cliStore, arg string) (int, error) {
	keys := []string{arg}
	if !isURL(arg) {
		if abs, err := filepath.Abs(arg); err == nil && abs != arg {
			keys = append(keys, abs)
		}
	}
	total := 0
	// A folder: every file indexed below it, whatever source it was
	// indexed under.
	if !isURL(arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return 0, err
		}
		srcs, err := store.listSources(ctx)
		if err != nil {
			return 0, err
		}
		prefix := strings.TrimSuffix(abs, string(filepath.Separator)) + string(filepath.Separator)
		for _, s := range srcs {
			if strings.HasPrefix(s.URL, prefix) {
				n, err := store.DeleteByURL(ctx, s.URL)
				if err != nil {
					return total, err
				}
				total += n
			}
		}
	}
	for _, k := range keys {
		n, err := store.DeleteByURL(ctx, k)
		if err != nil {
			return total, err
		}
		total += n
		n, err = store.DeleteBySource(ctx, k)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
