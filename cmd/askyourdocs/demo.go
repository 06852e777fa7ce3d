package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// demoDocs is the folder the demo indexes, relative to the repository root.
const demoDocs = "testdata/cli/docs"

// demoQuestion is asked when demo gets no question.
const demoQuestion = "How long before the tour can I cancel a booking and get a full refund?"

// cmdDemo indexes the documents shipped in testdata/cli/docs into a
// temporary index and asks a question about them: the first command of the
// README, on a machine without model server or database.
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
	if _, err := os.Stat(demoDocs); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s not found: run the demo from the repository root", demoDocs)
	}
	dir, err := os.MkdirTemp("", "askyourdocs-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	common := []string{"--data", dir}
	if cf.json {
		common = append(common, "--json")
	}
	fmt.Fprintf(a.stdout, "$ askyourdocs index %s\n", demoDocs)
	if err := a.cmdIndex(ctx, append(append([]string{}, common...), demoDocs)); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\n$ askyourdocs ask %q\n", question)
	if err := a.cmdAsk(ctx, append(append([]string{}, common...), "--", question)); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\n(The index lived in %s and is removed again. Without LLM_MODEL the answer is extractive;\n"+
		"with EMBEDDING_MODEL unset the built-in lexical embedder is used: see cmd/askyourdocs/README.md.)\n", filepath.Clean(dir))
	return nil
}
