package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/term"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// style colours terminal output: only when the stream is a terminal,
// NO_COLOR is unset, TERM is not "dumb" and --no-color was not given.
type style struct {
	color bool
	// links: print OSC-8 hyperlinks (terminals that show colours also
	// ignore or honour OSC 8 safely).
	links bool
}

// newStyle returns the style for writing to w.
func newStyle(w io.Writer, a *cliApp) style {
	if !isTerminal(w) || a.noColor || a.getenv == nil {
		return style{}
	}
	if _, set := lookupEnv(a.getenv, "NO_COLOR"); set || a.getenv("TERM") == "dumb" {
		return style{}
	}
	return style{color: true, links: a.getenv("ASKYOURDOCS_NO_LINKS") == ""}
}

// lookupEnv reports whether NO_COLOR-style variables are present: any
// non-empty value counts, as no-color.org asks.
func lookupEnv(getenv func(string) string, k string) (string, bool) {
	v := getenv(k)
	return v, v != ""
}

func (s style) wrap(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\033[" + code + "m" + text + "\033[0m"
}

func (s style) bold(t string) string   { return s.wrap("1", t) }
func (s style) dim(t string) string    { return s.wrap("2", t) }
func (s style) red(t string) string    { return s.wrap("31", t) }
func (s style) green(t string) string  { return s.wrap("32", t) }
func (s style) yellow(t string) string { return s.wrap("33", t) }
func (s style) cyan(t string) string   { return s.wrap("36", t) }

// link renders text as an OSC-8 hyperlink to target on capable terminals.
func (s style) link(target, text string) string {
	if !s.links || target == "" {
		return text
	}
	return "\033]8;;" + target + "\033\\" + text + "\033]8;;\033\\"
}

// isTerminal reports whether w (or the writer it wraps) is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := unwrapWriter(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// unwrapWriter returns the writer under wrappers such as termSafeWriter.
func unwrapWriter(w io.Writer) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// terminalWidth returns the width of the terminal w, 80 when unknown.
func terminalWidth(w io.Writer) int {
	if f, ok := unwrapWriter(w).(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// printJSON writes v as indented JSON (the --json output).
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// explainError turns errors from libraries into one line with a hint:
// a failed PostgreSQL connection names host, port and the reason once.
func explainError(err error) error {
	if errorHint(err) != "" {
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		where := "PostgreSQL"
		if ce.Config != nil {
			where = fmt.Sprintf("PostgreSQL at %s:%d (user %s, database %s)", ce.Config.Host, ce.Config.Port, ce.Config.User, ce.Config.Database)
		}
		return withHint(fmt.Errorf("cannot connect to %s: %s", where, connectReason(err)),
			"check --pg or ASKYOURDOCS_DSN (postgres://USER:PASSWORD@HOST:5432/DB) and that the server runs; 'askyourdocs doctor' checks the setup")
	}
	var pe *askyourdocs.ProviderError
	if errors.As(err, &pe) {
		return withHint(err, providerHint(pe))
	}
	if errors.Is(err, askyourdocs.ErrUnknownProvider) || errors.Is(err, askyourdocs.ErrProviderConfig) {
		return withHint(err, "model specs are ollama/NAME, gpustack/NAME or googleai/NAME; see 'askyourdocs help'")
	}
	if errors.Is(err, errNothingIndexed) {
		return withHint(err, "or point to an existing index with --data DIR or ASKYOURDOCS_DATA; 'askyourdocs doctor' shows which index is used")
	}
	return err
}

// connectReason is the one cause of a failed connection.
func connectReason(err error) string {
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &pgErr):
		return pgErr.Message
	case errors.As(err, &dnsErr):
		return "unknown host " + dnsErr.Name
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return strings.TrimSpace(msg)
}

// providerHint says how to reach or replace a model server.
func providerHint(pe *askyourdocs.ProviderError) string {
	switch pe.Provider {
	case askyourdocs.ProviderOllama:
		return "start Ollama ('ollama serve') or set OLLAMA_HOST; 'askyourdocs doctor' checks the setup"
	case askyourdocs.ProviderGPUStack:
		return "check GPUSTACK_URL and GPUSTACK_API_KEY; 'askyourdocs doctor' checks the setup"
	}
	return "'askyourdocs doctor' checks the setup"
}

// plural formats n with the singular or plural noun: "1 chunk", "2 chunks".
func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}
