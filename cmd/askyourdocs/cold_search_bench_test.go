//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// coldSearchQuestions are the questions of BenchmarkColdSearch (and of
// scripts/bench-stores cold): Django topics asked as users ask them.
var coldSearchQuestions = []string{
	"how do I configure the output format", "what does the cache framework do", "sort objects by a field",
	"send email", "database transactions", "custom template tags", "How do I test a view", "timezone support",
	"password hashing", "upload files",
}

// BenchmarkColdSearch indexes one whole folder (-cli-index-manual, as
// BenchmarkIndexPgVsEmbedded) into the embedded store once, with the CLI
// binary, then runs
// `askyourdocs search` in a new process per question, as a user's shell
// does, and reports the median wall time and the median and largest peak
// RSS of those processes (the kernel's ru_maxrss; issue 37: a cold search
// within 60 MB at about 11k chunks), and this process's own peak, a lower
// bound of every child's ru_maxrss.
//
//	go test -run '^$' -bench BenchmarkColdSearch -benchtime 1x ./cmd/askyourdocs
func BenchmarkColdSearch(b *testing.B) {
	bin := buildCLI(b)
	manual := benchManual()
	data := filepath.Join(b.TempDir(), "index")
	// The index is built by a process of its own: a child's ru_maxrss
	// includes the peak of the process it was started from (Linux charges
	// the parent's memory at exec), so this process must stay small.
	index := exec.Command(bin, "--data", data, "index", manual)
	index.Env = cliEnv()
	out, err := index.CombinedOutput()
	if err != nil {
		b.Fatalf("askyourdocs index %s: %v\n%s", manual, err, out)
	}
	m := regexp.MustCompile(`Indexed \d+ sources?: (\d+) chunks?`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("askyourdocs index %s: no chunk count in its output:\n%s", manual, out)
	}
	chunks, _ := strconv.Atoi(string(m[1]))
	parent := selfPeakRSSkB(b)
	var walls []time.Duration
	var rss []int64 // kB
	for b.Loop() {
		for _, q := range coldSearchQuestions {
			cmd := exec.Command(bin, "--data", data, "search", q)
			cmd.Env = cliEnv()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("search %q: %v\n%s", q, err, out)
			}
			walls = append(walls, time.Since(start))
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				b.Fatal("no rusage of the search process")
			}
			rss = append(rss, ru.Maxrss)
		}
	}
	slices.Sort(walls)
	slices.Sort(rss)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "wall_p50_ms")
	b.ReportMetric(float64(rss[len(rss)/2])/1024, "rss_p50_mb")
	b.ReportMetric(float64(rss[len(rss)-1])/1024, "rss_max_mb")
	b.ReportMetric(float64(chunks), "chunks")
	// The bound the figures carry: a search's ru_maxrss is at least this.
	b.ReportMetric(float64(parent)/1024, "bench_process_mb")
}

// selfPeakRSSkB returns this process's peak resident set (VmHWM, kB).
func selfPeakRSSkB(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		b.Fatal("no VmHWM in /proc/self/status")
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}
