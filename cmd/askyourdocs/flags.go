package main

import (
	"errors"
	"flag"
	"fmt"
)

// errHelpShown ends a command after -h printed its flags.
var errHelpShown = errors.New("help shown")

// commonFlags are the flags every command takes.
type commonFlags struct {
	data         string
	pg           string
	pgRead       string
	name         string
	allowPrivate bool
	json         bool
}

// newFlagSet returns a flag set for cmd with the common flags registered.
func (a *cliApp) newFlagSet(cmd string) (*flag.FlagSet, *commonFlags) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	cf := &commonFlags{}
	fs.StringVar(&cf.data, "data", ".askyourdocs", "index directory (SQLite database <name>.db)")
	fs.StringVar(&cf.pg, "pg", "", "PostgreSQL DSN of a pgvector database (default: env ASKYOURDOCS_DSN)")
	fs.StringVar(&cf.pgRead, "pg-read", "", "read-only DSN of a hot standby of --pg's database: search, ask, chat, mcp and serve read the index there while it keeps up (default: env ASKYOURDOCS_READ_DSN)")
	fs.BoolVar(&cf.allowPrivate, "allow-private", false, "allow fetching from private and loopback addresses")
	fs.BoolVar(&cf.json, "json", false, "machine-readable JSON output")
	fs.StringVar(&cf.name, "name", storeName, "store name (several indexes can share a --data directory or database)")
	return fs, cf
}

// parseArgs parses args with fs, allowing flags after positional arguments
// ("ask 'question' --json"); "--" ends flag parsing. It returns the
// positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelpShown
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at "--" too: then everything after it is positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
