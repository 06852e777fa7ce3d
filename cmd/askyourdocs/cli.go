package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
)

// globalFlags are the flags every command takes; they may also stand
// before the command. The value is true for flags that take a value.
var globalFlags = map[string]bool{
	"data": true, "pg": true, "pg-read": true, "name": true,
	"allow-private": false, "json": false,
	"quiet": false, "q": false, "verbose": false, "v": false, "no-color": false,
}

func isGlobalFlag(name string) bool { _, ok := globalFlags[name]; return ok }

// globalFlagTakesValue reports whether a global flag is followed by a
// separate value argument (unless written --flag=value).
func globalFlagTakesValue(name string) bool { return globalFlags[name] }

// flagName returns the name of a flag argument: "--data=x" gives "data".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

// wantsJSON reports whether --json is among args (before a "--"), so that
// even a command line that fails to parse gets its error as JSON.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" || a == "-json=true" {
			return true
		}
	}
	return false
}

// flags returns the flag set of command cmd: the common flags (see
// newFlagSet) plus --quiet, -v and --no-color. Parse it with a.parse.
func (a *cliApp) flags(cmd string) (*flag.FlagSet, *commonFlags) {
	fs, cf := a.newFlagSet(cmd)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&a.quiet, "quiet", a.quiet, "print only results and errors (no progress, no notes)")
	fs.BoolVar(&a.quiet, "q", a.quiet, "short for --quiet")
	fs.BoolVar(&a.verbose, "verbose", a.verbose, "print details and the engine's log lines")
	fs.BoolVar(&a.verbose, "v", a.verbose, "short for --verbose")
	fs.BoolVar(&a.noColor, "no-color", a.noColor, "no colours even on a terminal (also: env NO_COLOR)")
	if f := fs.Lookup("data"); f != nil {
		f.Usage = "index directory (default: $ASKYOURDOCS_DATA, else the nearest .askyourdocs upwards, else ./.askyourdocs)"
	}
	fs.Usage = func() { a.printCommandHelp(a.stdout, cmd, fs) }
	return fs, cf
}

// parse parses a command's arguments (flags may follow positional
// arguments; "--" ends the flags), prints the help for -h/--help
// (returning errHelpShown) and resolves the data directory.
func (a *cliApp) parse(fs *flag.FlagSet, cf *commonFlags, args []string) ([]string, error) {
	help := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = help }()
	pos, err := parseArgs(fs, args)
	if errors.Is(err, errHelpShown) {
		help()
		return nil, err
	}
	if cf != nil {
		a.jsonErrors = a.jsonErrors || cf.json
	}
	if err != nil {
		hint := fmt.Sprintf("run 'askyourdocs %s --help' for usage", fs.Name())
		if name, ok := strings.CutPrefix(flagErrorText(err), "unknown flag --"); ok {
			var names []string
			fs.VisitAll(func(f *flag.Flag) {
				if len(f.Name) > 1 {
					names = append(names, f.Name)
				}
			})
			name, _, _ = strings.Cut(name, "=")
			// Short names are close to too many others: one edit at most.
			if s := suggest(name, names); s != "" && (len(name) > 4 || editDistance(name, s) <= 1 || strings.HasPrefix(s, name)) {
				hint = fmt.Sprintf("did you mean --%s? Run 'askyourdocs %s --help' for usage", s, fs.Name())
			}
		}
		return nil, withHint(fmt.Errorf("%w: %s", errUsage, flagErrorText(err)), hint)
	}
	if cf != nil {
		explicit := false
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "data" {
				explicit = true
			}
		})
		if err := a.resolveData(cf, explicit); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// flagErrorText rewrites the flag package's messages with double dashes:
// "flag provided but not defined: -x" becomes "unknown flag --x".
func flagErrorText(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, errUsage.Error()+": ")
	if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + strings.TrimLeft(rest, "-")
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + strings.TrimLeft(rest, "-") + " needs a value"
	}
	msg = strings.ReplaceAll(msg, " for flag -", " for flag --")
	return msg
}

// usageError returns an errUsage error for command cmd with a hint to its
// help.
func usageError(cmd, format string, args ...any) error {
	return withHint(fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...)),
		fmt.Sprintf("run 'askyourdocs %s --help' for usage", cmd))
}

// hintError is an error with a line of advice printed below it.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// withHint attaches hint to err (the innermost hint wins when printed).
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hintError{err: err, hint: hint}
}

// errorHint returns the hint attached to err, "" if none.
func errorHint(err error) string {
	var h *hintError
	if errors.As(err, &h) {
		return h.hint
	}
	return ""
}

// errorCode names the kind of err in JSON errors.
func errorCode(err error, code int) string {
	switch {
	case code == exitUsage:
		return "usage"
	case code == exitInterrupted:
		return "interrupted"
	case errors.Is(err, errNothingIndexed):
		return "not_indexed"
	case errors.Is(err, errEmbedderMismatch):
		return "embedder_mismatch"
	}
	return "error"
}

// printError prints err as one line (plus a hint line), or as a JSON
// object {"error": {...}} on stdout in --json mode.
func (a *cliApp) printError(cmd string, err error, code int) {
	err = explainError(err)
	msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
	hint := errorHint(err)
	if a.jsonErrors {
		printJSON(a.stdout, map[string]any{"error": map[string]any{
			"code": errorCode(err, code), "message": msg, "hint": hint, "command": cmd, "exitCode": code,
		}})
		return
	}
	prefix := "askyourdocs"
	if cmd != "" {
		prefix += " " + cmd
	}
	st := newStyle(a.stderr, a)
	fmt.Fprintf(a.stderr, "%s: %s\n", st.red(prefix+": error"), msg)
	if hint != "" {
		fmt.Fprintf(a.stderr, "%s %s\n", st.dim("hint:"), hint)
	}
}

// commandNames returns the names of all commands.
func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

// suggest returns the candidate closest to s (edit distance at most 2, or
// a prefix of at least 3 letters), "" when none is close.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(s, c)
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b with adjacent
// transpositions counted as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// printMainHelp writes the top-level help.
func (a *cliApp) printMainHelp(w io.Writer) {
	fmt.Fprint(w, "askyourdocs: ask your documents (PDF, Office, OpenDocument, EPUB, Markdown, text, HTML, web pages), offline by default\n\n")
	fmt.Fprint(w, "Usage:\n  askyourdocs COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nGlobal flags (before or after the command):\n")
	fs, _ := (&cliApp{stdin: a.stdin, stdout: io.Discard, stderr: io.Discard, getenv: a.getenv}).flags("help")
	printFlags(w, fs, func(name string) bool { return isGlobalFlag(name) })
	fmt.Fprint(w, "  --version             print the version\n")
	fmt.Fprint(w, `
Environment:
  ASKYOURDOCS_DATA      index directory when --data is not given
  ASKYOURDOCS_DSN       PostgreSQL DSN when --pg is not given
  ASKYOURDOCS_READ_DSN  read replica DSN when --pg-read is not given
  LLM_MODEL, RERANK_MODEL, EMBEDDING_MODEL   e.g. ollama/llama3.2, ollama/nomic-embed-text
  EMBEDDING_DIM         dimension of EMBEDDING_MODEL (probed when unset)
  OLLAMA_HOST, GPUSTACK_URL, GPUSTACK_API_KEY, GEMINI_API_KEY, LLM_TIMEOUT
  NO_COLOR              no colours
  Without EMBEDDING_MODEL a built-in lexical embedder is used (no model server);
  without LLM_MODEL 'ask' answers with the best passages (extractive).

Examples:
  askyourdocs index ./docs
  askyourdocs ask "How do I cancel a booking?"
  askyourdocs doctor

Run 'askyourdocs help COMMAND' for a command's flags and examples.
`)
}

// printCommandHelp writes the help of one command: usage, description,
// its flags, the global flags and examples.
func (a *cliApp) printCommandHelp(w io.Writer, name string, fs *flag.FlagSet) {
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(w, "Usage:\n  askyourdocs %s [flags]\n\nFlags:\n", name)
		printFlags(w, fs, func(string) bool { return true })
		return
	}
	usage := "askyourdocs " + c.name + " [flags]"
	if c.args != "" {
		usage += " " + c.args
	}
	fmt.Fprintf(w, "%s\n\nUsage:\n  %s\n", capitalize(c.summary), usage)
	if c.long != "" {
		fmt.Fprintf(w, "\n%s\n", wrapText(strings.ReplaceAll(c.long, "\n", " "), 78))
	}
	var own bool
	fs.VisitAll(func(f *flag.Flag) {
		if !isGlobalFlag(f.Name) {
			own = true
		}
	})
	if own {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs, func(n string) bool { return !isGlobalFlag(n) })
	}
	fmt.Fprint(w, "\nGlobal flags:\n")
	printFlags(w, fs, isGlobalFlag)
	if len(c.examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, e := range c.examples {
			if strings.HasPrefix(e, "npx ") || strings.Contains(e, "| askyourdocs") || strings.HasPrefix(e, "LLM_MODEL=") {
				if rest, ok := strings.CutPrefix(e, "LLM_MODEL=ollama/llama3.2 "); ok {
					e = "LLM_MODEL=ollama/llama3.2 askyourdocs " + rest
				}
				fmt.Fprintf(w, "  %s\n", e)
				continue
			}
			fmt.Fprintf(w, "  askyourdocs %s\n", e)
		}
	}
}

// printFlags lists the flags of fs accepted by keep, double-dashed, with a
// placeholder for the value and the default when it is not the zero value.
// Single-letter aliases (-q, -v, -k) are shown beside their long form.
func printFlags(w io.Writer, fs *flag.FlagSet, keep func(string) bool) {
	var lines [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		if !keep(f.Name) || f.Name == "q" || f.Name == "v" {
			return
		}
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		switch f.Name {
		case "quiet":
			name = "-q, --quiet"
		case "verbose":
			name = "-v, --verbose"
		}
		placeholder, usage := flag.UnquoteUsage(f)
		if placeholder != "" {
			name += " " + strings.ToUpper(placeholderFor(f.Name, placeholder))
		}
		if d := f.DefValue; d != "" && d != "false" && d != "0" && f.Name != "data" {
			usage += " (default " + d + ")"
		}
		lines = append(lines, [2]string{name, usage})
	})
	sort.SliceStable(lines, func(i, j int) bool {
		return strings.TrimLeft(lines[i][0], "-") < strings.TrimLeft(lines[j][0], "-")
	})
	for _, l := range lines {
		if len(l[0]) > 20 {
			fmt.Fprintf(w, "  %s\n  %-20s  %s\n", l[0], "", l[1])
			continue
		}
		fmt.Fprintf(w, "  %-20s  %s\n", l[0], l[1])
	}
}

// placeholderFor names a flag's value in the help.
func placeholderFor(name, placeholder string) string {
	switch name {
	case "data":
		return "dir"
	case "pg", "pg-read":
		return "dsn"
	case "exclude":
		return "glob"
	case "dataset":
		return "file"
	case "mode":
		return "mode"
	}
	if placeholder == "int" {
		return "n"
	}
	if placeholder == "value" {
		return "string"
	}
	return placeholder
}

// wrapText breaks s into lines of at most width columns at spaces.
func wrapText(s string, width int) string {
	var b strings.Builder
	col := 0
	for _, w := range strings.Fields(s) {
		n := len([]rune(w))
		if col > 0 && col+1+n > width {
			b.WriteByte('\n')
			col = 0
		} else if col > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// version returns the module version and VCS revision from the build info.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += fmt.Sprintf(" (commit %s, %s%s)", rev[:min(12, len(rev))], when, dirty)
	}
	return v + " " + bi.GoVersion
}

func (a *cliApp) printVersion() {
	if a.jsonErrors {
		printJSON(a.stdout, map[string]any{"version": version()})
		return
	}
	fmt.Fprintf(a.stdout, "askyourdocs %s\n", version())
}

func (a *cliApp) cmdVersion(_ context.Context, args []string) error {
	fs, _ := a.flags("version")
	if _, err := a.parse(fs, nil, args); err != nil {
		return err
	}
	a.printVersion()
	return nil
}

// cmdHelp prints the top-level help, or runs "COMMAND --help".
func (a *cliApp) cmdHelp(ctx context.Context, args []string) error {
	var pos []string
	for _, s := range args {
		if !strings.HasPrefix(s, "-") {
			pos = append(pos, s)
		}
	}
	if len(pos) == 0 {
		a.printMainHelp(a.stdout)
		return nil
	}
	c := lookupCommand(pos[0])
	if c == nil {
		err := fmt.Errorf("%w: unknown command %q", errUsage, pos[0])
		if s := suggest(pos[0], commandNames()); s != "" {
			return withHint(err, fmt.Sprintf("did you mean %q?", s))
		}
		return withHint(err, "run 'askyourdocs help' for the list of commands")
	}
	if c.name == "help" {
		a.printMainHelp(a.stdout)
		return nil
	}
	return c.run(a, ctx, []string{"--help"})
}
