// Command askyourdocs is the reference "ask your documents" CLI built on the
// askyourdocs engine's exported API: it indexes documents (PDF, Office,
// OpenDocument, EPUB, Markdown, text, HTML), folders, web pages and whole
// sites, then answers questions about them with citations, offline by
// default.
//
// Usage:
//
//	askyourdocs COMMAND [flags] [args]
//
// Run "askyourdocs help" for the commands and "askyourdocs help COMMAND"
// (the same as "askyourdocs COMMAND --help") for one command's flags and
// examples; cmd/askyourdocs/README.md is the full reference.
//
// The index lives in the directory given by --data, else $ASKYOURDOCS_DATA,
// else the nearest .askyourdocs directory in the working directory or one
// of its parents (like git finds .git); index creates ./.askyourdocs when
// there is none. --pg DSN (or ASKYOURDOCS_DSN) uses a PostgreSQL/pgvector
// store instead. Models come from LLM_MODEL, RERANK_MODEL and
// EMBEDDING_MODEL ("ollama/<name>", "gpustack/<name>", "googleai/<name>");
// without EMBEDDING_MODEL the engine's built-in lexical embedder is used,
// without LLM_MODEL answers are extractive.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// errUsage marks a wrong command line; run prints a hint to the command's
// help for it.
var errUsage = errors.New("usage")

// errInterrupted is returned when Ctrl-C ended a command.
var errInterrupted = errors.New("interrupted")

// command is one entry of the command table. To add a command, append an
// entry to commands (in this file or from an init function of its own
// file) and give it a run function.
type command struct {
	name    string
	args    string // positional arguments in the usage line
	summary string // one line for the command list
	long    string // paragraph(s) for the command's help
	// examples are command lines (without "askyourdocs"), each optionally
	// followed by "  # comment".
	examples []string
	run      func(a *cliApp, ctx context.Context, args []string) error
}

// commands is the command table, in the order of the help. It is filled
// in init (the run functions refer back to it through the help).
var commands []*command

func init() {
	commands = append([]*command{
		{name: "index", args: "PATH|URL ...", summary: "index files, folders, web pages or (with --crawl) whole sites",
			long: "Indexes documents (" + supportedExtList + "),\n" +
				"folders (recursively, following symlinks that stay inside the folder), web pages and, with --crawl, sites. Indexing a folder again is a sync: changed files are re-embedded,\n" +
				"unchanged ones skipped, and files that are gone from the folder are removed from the index.\n" +
				"Files matching --exclude or a pattern of a .askyourdocsignore file (gitignore syntax, in the\n" +
				"folder or below) are left out. Empty documents and documents without text are reported as\n" +
				"skipped (exit 0); documents that cannot be read make the exit status 1.",
			examples: []string{
				"index ./docs",
				"index manual.pdf handbook.docx",
				"index ./docs --exclude 'drafts/**' --exclude '*.tmp.pdf'",
				"index --crawl https://example.com/docs/ --max-pages 300",
				"index ./docs --json   # machine-readable summary",
			},
			run: (*cliApp).cmdIndex},
		{name: "ask", args: "QUESTION", summary: "answer a question from the indexed documents, with citations",
			long: "Answers from the indexed documents with numbered citations and a confidence label. With\n" +
				"LLM_MODEL set the answer is generated (streamed on a terminal); without it, or when the model\n" +
				"server cannot be reached, the best matching passages are quoted (extractive answer).",
			examples: []string{
				`ask "How long before the tour can I cancel?"`,
				`ask "minimum age for a kayak" --json`,
				`LLM_MODEL=ollama/llama3.2 ask "What does the warranty cover?" --no-stream`,
			},
			run: (*cliApp).cmdAsk},
		{name: "chat", summary: "ask questions with follow-ups in an interactive session",
			long: "Reads questions from the terminal (or standard input) one per line and answers each like\n" +
				"'ask'; with LLM_MODEL set, follow-up questions (\"and for children?\") are rewritten into\n" +
				"standalone questions using the conversation so far. An empty line or Ctrl-D ends the session.",
			examples: []string{"chat", `printf 'minimum age for a kayak?\nand for a canoe?\n' | askyourdocs chat`},
			run:      (*cliApp).cmdChat},
		{name: "search", args: "QUERY", summary: "ranked passages with scores and citations (no LLM)",
			examples: []string{`search "refund policy"`, `search "refund policy" -k 3 --mode keyword --json`},
			run:      (*cliApp).cmdSearch},
		{name: "sources", summary: "list the indexed documents",
			examples: []string{"sources", "sources --json"},
			run:      (*cliApp).cmdSources},
		{name: "delete", args: "SOURCE|URL ...", summary: "remove files, folders, pages or crawls from the index",
			long: "Removes every indexed document whose file or URL is the argument or lies below it (a folder),\n" +
				"and every document indexed under it (a crawl's first URL). The removed documents are listed;\n" +
				"--dry-run lists them without removing anything.",
			examples: []string{"delete ./docs/old.pdf", "delete ./docs/ --dry-run", "delete https://example.com/docs/"},
			run:      (*cliApp).cmdDelete},
		{name: "doctor", summary: "check the setup: index, store, embedder, model server, database",
			long: "Says which index and store the other commands would use and what is in it, the embedder and\n" +
				"its dimension, whether the model server answers (and which models it has), whether the\n" +
				"PostgreSQL database answers (with the pgvector and pg_trgm versions), and what to do next.\n" +
				"Exits 1 when something configured does not work.",
			examples: []string{"doctor", "doctor --json"},
			run:      (*cliApp).cmdDoctor},
		{name: "eval", args: "--dataset FILE", summary: "retrieval metrics: hit@1, hit@5, MRR@10, nDCG@10, latency",
			examples: []string{"eval --dataset testdata/cli/eval.json", "eval --dataset eval.json --mode all --json"},
			run:      (*cliApp).cmdEval},
		{name: "mcp", summary: "serve search_docs, ask_docs and list_sources as MCP tools on stdio",
			long: "Runs a Model Context Protocol server on standard input and output. It serves the index found\n" +
				"like the other commands do (--data, $ASKYOURDOCS_DATA or the nearest .askyourdocs upwards) and\n" +
				"names it on standard error when it starts; it refuses to start without an index.",
			examples: []string{"mcp --data /home/me/docs/.askyourdocs",
				"npx @modelcontextprotocol/inspector --cli askyourdocs mcp --data DIR --method tools/list"},
			run: (*cliApp).cmdMCP},
		{name: "export", args: "--genkit DIR", summary: "write the index as a Genkit localvec file DIR/__db_NAME.json",
			examples: []string{"export --genkit ./genkit-index"},
			run:      (*cliApp).cmdExport},
		{name: "serve", summary: "serve the index as a web app (ask, upload, feedback) on loopback",
			examples: []string{"serve", "serve --addr 127.0.0.1:8080"},
			run:      (*cliApp).cmdServe},
		{name: "demo", args: "[QUESTION]", summary: "index the built-in demo documents into a temporary index and ask about them",
			examples: []string{"demo", `demo "What is the minimum age for a single kayak?"`},
			run:      (*cliApp).cmdDemo},
		{name: "help", args: "[COMMAND]", summary: "show help for a command (same as COMMAND --help)",
			examples: []string{"help index"},
			run:      (*cliApp).cmdHelp},
		{name: "version", summary: "print the version (same as --version)",
			run: (*cliApp).cmdVersion},
	}, commands...)
}

// lookupCommand returns the command called name, nil if there is none.
func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Documents and file names reach the output: no terminal escapes.
	stdout, stderr = newTermSafeWriter(stdout), newTermSafeWriter(stderr)
	app := &cliApp{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	app.jsonErrors = wantsJSON(args)
	// Global flags may come before the command: move them behind it.
	var global []string
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && args[0] != "--" {
		f := args[0]
		switch name := flagName(f); {
		case name == "h" || name == "help":
			app.printMainHelp(stdout)
			return exitOK
		case name == "version":
			app.printVersion()
			return exitOK
		case !isGlobalFlag(name):
			cmdName := "COMMAND"
			for _, a := range args[1:] {
				if lookupCommand(a) != nil {
					cmdName = a
					break
				}
			}
			return app.fail("", withHint(fmt.Errorf("%w: unknown flag %s before the command", errUsage, f),
				"only global flags (--data, --pg, --name, --json, --quiet, --verbose, ...) may come before the command; "+
					"write command flags after it: askyourdocs "+cmdName+" "+f+" ..."))
		}
		global = append(global, f)
		args = args[1:]
		if !strings.Contains(f, "=") && globalFlagTakesValue(flagName(f)) {
			if len(args) == 0 {
				return app.fail("", fmt.Errorf("%w: flag %s needs a value", errUsage, f))
			}
			global = append(global, args[0])
			args = args[1:]
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		app.printMainHelp(stderr)
		return exitUsage
	}
	name := args[0]
	cmd := lookupCommand(name)
	if cmd == nil {
		err := fmt.Errorf("%w: unknown command %q", errUsage, name)
		if s := suggest(name, commandNames()); s != "" {
			err = withHint(err, fmt.Sprintf("did you mean %q? Run 'askyourdocs help' for the list of commands.", s))
		} else {
			err = withHint(err, "run 'askyourdocs help' for the list of commands")
		}
		return app.fail("", err)
	}
	rest := append(append([]string{}, global...), args[1:]...)
	return app.fail(name, cmd.run(app, ctx, rest))
}

// fail prints err for command cmd ("" before a command was known) and
// returns the exit code: 0 for nil.
func (a *cliApp) fail(cmd string, err error) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	code := exitError
	var qe *quietError
	if errors.As(err, &qe) {
		return code
	}
	switch {
	case errors.Is(err, errUsage):
		code = exitUsage
	case errors.Is(err, errInterrupted):
		code = exitInterrupted
	}
	a.printError(cmd, err, code)
	return code
}

// cliApp carries a command's streams and environment.
type cliApp struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	// Set by the global flags of the command line.
	quiet, verbose, noColor bool
	// jsonErrors: --json was given, so errors are printed as JSON objects.
	jsonErrors bool
	// dataFrom says how the data directory was found (see resolveData).
	dataFrom string
}
