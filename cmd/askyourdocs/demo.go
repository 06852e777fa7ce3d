package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// demoFS holds the demo's documents, a copy of testdata/cli/docs (go:embed
// cannot reach the repository root; TestDemoDocsMatchTestdata keeps the
// two equal), so demo works from an installed binary.
//
//go:embed demodocs
var demoFS embed.FS

// demoQuestion is asked when demo gets no question.
const demoQuestion = "How long before the tour can I cancel a booking and get a full refund?"

// cmdDemo writes the documents built into the binary (those of
// testdata/cli/docs) to a temporary folder, indexes them into a temporary
// index and asks a question about them: the first command of the README,
// on a machine without model server, database or checkout.
func (a *cliApp) cmdDemo(ctx context.Context, args []string) error {
	fset, cf := a.flags("demo")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	question := demoQuestion
	if len(pos) > 0 {
		question = strings.Join(pos, " ")
	}
	dir, err := os.MkdirTemp("", "askyourdocs-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	docs := filepath.Join(dir, "docs")
	if err := writeDemoDocs(docs); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	common := []string{"--data", filepath.Join(dir, "index")}
	if cf.json {
		common = append(common, "--json")
	}
	fmt.Fprintf(a.stdout, "$ askyourdocs index %s\n", docs)
	if err := a.cmdIndex(ctx, append(append([]string{}, common...), docs)); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\n$ askyourdocs ask %q\n", question)
	if err := a.cmdAsk(ctx, append(append([]string{}, common...), "--", question)); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\n(The demo documents and the index lived in %s and are removed again. Without LLM_MODEL the answer is extractive;\n"+
		"with EMBEDDING_MODEL unset the built-in lexical embedder is used: see cmd/askyourdocs/README.md.)\n", filepath.Clean(dir))
	return nil
}

// writeDemoDocs writes the embedded demo documents into dir.
func writeDemoDocs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := fs.ReadDir(demoFS, "demodocs")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := demoFS.ReadFile("demodocs/" + e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
