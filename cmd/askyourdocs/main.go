// Command askyourdocs is the reference "ask your documents" CLI built on the
// askyourdocs engine's exported API: it indexes PDF, .docx and HTML files,
// web pages and whole sites, then answers questions about them with
// citations, offline by default.
//
// Usage:
//
//	askyourdocs [global flags] COMMAND [flags] [args]
//
// Commands:
//
//	index PATH|URL ...   index files, directories, web pages (--crawl for sites)
//	ask "question"       answer from the indexed documents, with citations
//	search "query"       ranked chunks with scores and citations, no LLM
//	sources              what is indexed
//	delete SOURCE|URL    remove a file, directory, page or crawl from the index
//	eval --dataset FILE  retrieval metrics (hit@1, hit@5, MRR@10, nDCG@10, latency)
//	mcp                  serve search/ask/sources as MCP tools over stdio
//	demo                 index the documents shipped in testdata/cli/docs and ask about them
//
// Every command takes --data DIR (default ./.askyourdocs, a LocalvecStore
// file there) or --pg DSN (a PgvecStore; ASKYOURDOCS_DSN sets it too).
// Models come from LLM_MODEL, RERANK_MODEL and EMBEDDING_MODEL
// ("ollama/<name>", "gpustack/<name>", "googleai/<name>"); without
// EMBEDDING_MODEL the engine's built-in lexical embedder is used, without
// LLM_MODEL answers are extractive.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
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

// errUsage marks a wrong command line; run prints the usage for it.
var errUsage = errors.New("usage")

// usageText is printed for -h and for a wrong command line.
const usageText = `askyourdocs: ask your documents (PDF, Office, OpenDocument, EPUB, Markdown, text, HTML, web pages)

Usage:
  askyourdocs [flags] COMMAND [flags] [args]

Commands:
  index PATH|URL ...    index files and folders (.pdf .docx .pptx .xlsx .odt .ods .odp
                        .epub .md .txt .html .htm), web pages;
                        --crawl URL crawls a site (--max-pages, --max-depth, --delay)
  ask "question"        answer with numbered citations (--json for machine output)
  search "query"        ranked chunks with scores and citations, no LLM
  sources               list what is indexed
  delete SOURCE|URL     remove a file, folder, page or crawl from the index
  eval --dataset FILE   retrieval metrics: hit@1, hit@5, MRR@10, nDCG@10, latency
                        (--mode vector|keyword|fusion|all)
  mcp                   serve search_docs, ask_docs and list_sources as MCP tools on stdio
  export --genkit DIR   write the index as a Genkit localvec file DIR/__db_<name>.json
  demo                  index testdata/cli/docs into a temporary index and ask about it

Flags of every command:
  --data DIR            index directory (default ./.askyourdocs)
  --pg DSN              use a PostgreSQL/pgvector store (env ASKYOURDOCS_DSN)
  --allow-private       allow fetching from private and loopback addresses
  --json                machine-readable output

Environment:
  LLM_MODEL, RERANK_MODEL, EMBEDDING_MODEL   e.g. ollama/llama3.2, ollama/nomic-embed-text
  EMBEDDING_DIM         dimension of EMBEDDING_MODEL (probed when unset)
  OLLAMA_HOST, GPUSTACK_URL, GPUSTACK_API_KEY, GEMINI_API_KEY, LLM_TIMEOUT
  Without EMBEDDING_MODEL a built-in lexical embedder is used (no model server);
  without LLM_MODEL 'ask' answers with the best passages (extractive).
`

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	// Global flags may come before the command: move them behind it.
	var global []string
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		global = append(global, args[0])
		args = args[1:]
		if len(args) > 0 && globalFlagTakesValue(global[len(global)-1]) {
			global = append(global, args[0])
			args = args[1:]
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], append(global, args[1:]...)
	app := &cliApp{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	var err error
	switch cmd {
	case "index":
		err = app.cmdIndex(ctx, rest)
	case "ask":
		err = app.cmdAsk(ctx, rest)
	case "search":
		err = app.cmdSearch(ctx, rest)
	case "sources":
		err = app.cmdSources(ctx, rest)
	case "delete":
		err = app.cmdDelete(ctx, rest)
	case "eval":
		err = app.cmdEval(ctx, rest)
	case "mcp":
		err = app.cmdMCP(ctx, rest)
	case "export":
		err = app.cmdExport(ctx, rest)
	case "demo":
		err = app.cmdDemo(ctx, rest)
	case "serve":
		err = app.cmdServe(ctx, rest)
	case "help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		fmt.Fprintf(stderr, "askyourdocs: unknown command %q\n\n%s", cmd, usageText)
		return exitUsage
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelpShown):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "askyourdocs %s: %v\n\n%s", cmd, err, usageText)
		return exitUsage
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(stderr, "askyourdocs %s: %v\n", cmd, err)
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "askyourdocs %s: %v\n", cmd, err)
		return exitError
	}
}

// globalFlagTakesValue reports whether a flag given before the command is
// followed by a separate value argument.
func globalFlagTakesValue(f string) bool {
	switch f {
	case "-data", "--data", "-pg", "--pg":
		return true
	}
	return false
}

// cliApp carries a command's streams and environment.
type cliApp struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}
