// Command benchtable runs the side-by-side benchmarks of scripts/bench and
// prints one markdown table: work, ours, the anchor of the same run, the
// ratio, the goal, whether it is met and the machine's load during the
// run. scripts/bench builds and runs it; see its header for the sizes.
//
//	benchtable [-log DIR] [-bin DIR] [ROW|issue|more|all ...]   run and print the table
//	benchtable -needs-pg [ROW...]                    exit 0 if a row needs PostgreSQL
//	benchtable -list                                 the rows, their benchmarks and commands
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	logDir := flag.String("log", "", "directory for each benchmark's raw output (default: a new temporary directory)")
	binDir := flag.String("bin", "", "directory for the test binaries (default: the -log directory)")
	needsPG := flag.Bool("needs-pg", false, "only report (exit status 0 or 1) whether the selected rows need PostgreSQL")
	list := flag.Bool("list", false, "list the rows with their benchmarks and commands")
	flag.Parse()
	sel, err := selectRows(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(2)
	}
	inv := invocations()
	switch {
	case *needsPG:
		for _, r := range sel {
			if inv[r.inv()].PG {
				os.Exit(0)
			}
		}
		os.Exit(1)
	case *list:
		for _, r := range sel {
			fmt.Printf("%-16s %-6s %s  %s\n", r.ID, r.Group, r.Bench, command(inv[r.inv()]))
		}
		return
	}
	if *logDir == "" {
		if *logDir, err = os.MkdirTemp("", "bench."); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable:", err)
			os.Exit(1)
		}
	}
	if *binDir == "" {
		*binDir = *logDir
	}
	if err := run(sel, inv, *logDir, *binDir, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// selectRows returns the rows the arguments name (row IDs or the groups
// issue, more and all; none: issue), in table order.
func selectRows(args []string) ([]row, error) {
	if len(args) == 0 {
		args = []string{"issue"}
	}
	want := map[string]bool{}
	for _, a := range args {
		switch a {
		case "all", "issue", "more":
			for _, r := range rows {
				if a == "all" || r.Group == a {
					want[r.ID] = true
				}
			}
		default:
			if _, err := rowByID(a); err != nil {
				ids := make([]string, len(rows))
				for i, r := range rows {
					ids[i] = r.ID
				}
				return nil, fmt.Errorf("%w; rows: %s, or issue, more, all", err, strings.Join(ids, " "))
			}
			want[a] = true
		}
	}
	var sel []row
	for _, r := range rows {
		if want[r.ID] {
			sel = append(sel, r)
		}
	}
	return sel, nil
}

// command is the go test command line that runs one invocation alone.
func command(in invocation) string {
	var b strings.Builder
	set := map[string]bool{}
	for _, e := range in.Env {
		k, _, _ := strings.Cut(e, "=")
		set[k] = true
		if v := os.Getenv(k); v != "" {
			e = k + "=" + v // runOne keeps a value already set
		}
		b.WriteString(e + " ")
	}
	// The benchmarks' own size variables, when set, are part of the run.
	var pass []string
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); strings.HasPrefix(k, "ASKYOURDOCS_BENCH_") && !set[k] {
			pass = append(pass, e)
		}
	}
	slices.Sort(pass)
	for _, e := range pass {
		b.WriteString(e + " ")
	}
	fmt.Fprintf(&b, "go test %s -run '^$' -bench '%s' -benchtime %s -count 1 -timeout %s", in.Pkg, pattern(in), in.Benchtime, in.Timeout)
	for _, a := range in.Args {
		b.WriteString(" " + a)
	}
	return b.String()
}

func pattern(in invocation) string {
	if in.Pattern != "" {
		return in.Pattern
	}
	return "^" + in.Bench + "$"
}

// outcome is what one invocation produced.
type outcome struct {
	results      []result
	err          string // "" when it ran and passed
	load0, load1 string
	elapsed      time.Duration
	log          string
}

// run runs each benchmark the rows need once, then prints the table.
func run(sel []row, inv map[string]invocation, logDir, binDir string, stdout, stderr io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Machine: %d CPUs (nproc), %s; load average at the start %s; %s; commit %s\n\n",
		runtime.NumCPU(), goVersion(), loadAvg(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), commit(root))
	bins := map[string]string{}
	done := map[string]*outcome{}
	for _, r := range sel {
		if done[r.inv()] != nil {
			continue
		}
		in, ok := inv[r.inv()]
		o := &outcome{}
		done[r.inv()] = o
		if !ok {
			o.err = "no invocation for " + r.inv()
			continue
		}
		if exists, err := benchExists(filepath.Join(root, in.Pkg), in.Bench); err != nil || !exists {
			o.err = fmt.Sprintf("missing: %s is not in %s yet", in.Bench, in.Pkg)
			continue
		}
		if in.PG && os.Getenv("ASKYOURDOCS_TEST_DSN") == "" {
			o.err = "skipped: needs PostgreSQL (ASKYOURDOCS_TEST_DSN)"
			continue
		}
		bin, ok := bins[in.Pkg]
		if !ok {
			bin = filepath.Join(binDir, strings.NewReplacer("/", "_", ".", "root").Replace(in.Pkg)+".test")
			fmt.Fprintf(stderr, "benchtable: building the tests of %s\n", in.Pkg)
			cmd := exec.Command("go", "test", "-c", "-o", bin, in.Pkg)
			cmd.Dir, cmd.Stdout, cmd.Stderr = root, stderr, stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("building the tests of %s: %w", in.Pkg, err)
			}
			bins[in.Pkg] = bin
		}
		fmt.Fprintf(stderr, "benchtable: %s\n", command(in))
		*o = runOne(bin, filepath.Join(root, in.Pkg), in, filepath.Join(logDir, in.Bench+".txt"))
		fmt.Fprintf(stderr, "benchtable: %s took %s (load %s -> %s)\n", in.Bench, o.elapsed.Round(time.Second), o.load0, o.load1)
	}
	printTable(stdout, sel, inv, done)
	fmt.Fprintf(stdout, "\nLoad average at the end %s. Raw output: %s\n", loadAvg(), logDir)
	return nil
}

// runOne runs one invocation's benchmark with the built test binary in
// the package directory (the tests read testdata relative to it).
func runOne(bin, dir string, in invocation, logPath string) outcome {
	o := outcome{load0: loadAvg(), log: logPath}
	args := []string{"-test.run", "^$", "-test.bench", pattern(in), "-test.benchtime", in.Benchtime,
		"-test.count", "1", "-test.timeout", in.Timeout}
	for _, a := range in.Args {
		args = append(args, "-"+strings.TrimLeft(a, "-"))
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for _, e := range in.Env {
		if k, _, _ := strings.Cut(e, "="); os.Getenv(k) == "" {
			cmd.Env = append(cmd.Env, e)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	o.elapsed = time.Since(start)
	o.load1 = loadAvg()
	os.WriteFile(logPath, out.Bytes(), 0o644)
	o.results = parseResults(bytes.NewReader(out.Bytes()), in.Bench)
	if err != nil {
		o.err = "failed: " + firstFailure(out.String(), err) + " (log: " + logPath + ")"
	}
	return o
}

var failLine = regexp.MustCompile(`(?m)^\s*(--- FAIL.*|panic:.*|\S+_test\.go:\d+:.*)$`)

// firstFailure returns the first line of out that says what failed.
func firstFailure(out string, err error) string {
	if m := failLine.FindAllString(out, 3); len(m) > 0 {
		return strings.Join(strings.Fields(strings.Join(m, " ")), " ")
	}
	return err.Error()
}

// printTable writes the markdown table and, below it, the command of each
// benchmark.
func printTable(w io.Writer, sel []row, inv map[string]invocation, done map[string]*outcome) {
	fmt.Fprintln(w, "| work | ours | anchor (same run) | ratio | goal | met? | load (1 min) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, r := range sel {
		o := done[r.inv()]
		var lines []metrics
		if r.Key != "" {
			for _, res := range o.results {
				if hasMetric(res, r.Key) {
					lines = append(lines, metrics{line: res, all: o.results})
				}
			}
		} else if len(o.results) > 0 {
			lines = []metrics{{line: pickLine(r, o.results), all: o.results}}
		}
		load := ""
		if o.load0 != "" {
			load = strings.Fields(o.load0)[0] + " → " + strings.Fields(o.load1)[0]
		}
		if len(lines) == 0 {
			msg := o.err
			if msg == "" {
				msg = "no result line for " + r.Bench
			}
			fmt.Fprintf(w, "| %s | %s | | | %s | | %s |\n", cell(r.Work), cell(msg), cell(r.Goal), load)
			continue
		}
		for _, m := range lines {
			work := r.Work
			if r.Key != "" && m.line.Sub != "" {
				work += " (" + m.line.Sub + ")"
			}
			ours, ok1 := fill(r.Ours, m)
			anchor, ok2 := fill(r.Anchor, m)
			if !ok1 || !ok2 {
				missing := missingMetrics(r, m)
				ours += " (not reported: " + strings.Join(missing, ", ") + ")"
			}
			if o.err != "" {
				ours += " — " + o.err
			}
			rs := ""
			if v, ok := ratio(r.Ratio, m); ok {
				rs = num(v) + "x"
			}
			met := ""
			if r.Met != nil {
				if yes, known := r.Met(m); !known {
					met = "?"
				} else if yes {
					met = "yes"
				} else {
					met = "no"
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", cell(work), cell(ours), cell(anchor), rs, cell(r.Goal), met, load)
		}
	}
	fmt.Fprintln(w, "\nEach benchmark alone (the rows above come from one run of each):")
	fmt.Fprintln(w)
	seen := map[string]bool{}
	for _, r := range sel {
		if seen[r.inv()] {
			continue
		}
		seen[r.inv()] = true
		var ids []string
		for _, s := range sel {
			if s.inv() == r.inv() {
				ids = append(ids, s.ID)
			}
		}
		fmt.Fprintf(w, "- `scripts/bench %s`: `%s`\n", strings.Join(ids, " "), command(inv[r.inv()]))
	}
}

func hasMetric(res result, name string) bool {
	_, ok := res.Metrics[name]
	return ok
}

// pickLine returns the result line that reports the most of the row's
// metrics (the first such line).
func pickLine(r row, all []result) result {
	names := placeholder.FindAllStringSubmatch(r.Ours+r.Anchor+r.Ratio, -1)
	best, bestN := result{}, -1
	for _, res := range all {
		n := 0
		for _, p := range names {
			if hasMetric(res, p[1]) {
				n++
			}
		}
		if n > bestN {
			best, bestN = res, n
		}
	}
	return best
}

// missingMetrics lists the placeholders of a row the run did not report.
func missingMetrics(r row, m metrics) []string {
	var out []string
	for _, p := range placeholder.FindAllStringSubmatch(r.Ours+r.Anchor, -1) {
		if _, ok := m.get(p[1]); !ok && !slices.Contains(out, p[1]) {
			out = append(out, p[1])
		}
	}
	return out
}

// benchExists reports whether a _test.go file of dir declares the
// benchmark function.
func benchExists(dir, bench string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return false, err
	}
	decl := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(bench) + `\(b \*testing\.B\)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if decl.Match(data) {
			return true, nil
		}
	}
	return false, nil
}

// repoRoot is the module root: the nearest directory upwards with go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// loadAvg is the 1-, 5- and 15-minute load average ("" off Linux).
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func commit(root string) string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
