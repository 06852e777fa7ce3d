package main

import (
	"context"
	"errors"
	"fmt"
)

// cmdExport writes the embedded index as a Genkit localvec database file
// (DIR/__db_<name>.json), for apps that read that format.
func (a *cliApp) cmdExport(ctx context.Context, args []string) error {
	fset, cf := a.flags("export")
	genkitDir := fset.String("genkit", "", "directory to write the Genkit localvec file __db_<name>.json into")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *genkitDir == "" {
		return fmt.Errorf("%w: export needs --genkit DIR and no arguments", errUsage)
	}
	b, err := a.open(ctx, cf, openOptions{})
	if err != nil {
		return err
	}
	defer b.Close()
	st, ok := b.store.(*sqliteStore)
	if !ok {
		return errors.New("export: only the embedded index (--data) can be exported, not a PostgreSQL store")
	}
	if err := b.requireIndexed(ctx); err != nil {
		return err
	}
	path, n, err := st.ExportLocalvec(ctx, *genkitDir, cf.name)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Wrote %d chunks to %s (Genkit localvec, retriever devLocalVectorStore/%s, embedder %s).\n",
		n, path, cf.name, b.manifest.Embedder)
	return nil
}
