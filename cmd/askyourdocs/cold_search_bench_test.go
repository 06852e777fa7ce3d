//go:build linux

package main

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
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
// BenchmarkIndexPgVsEmbedded) into the embedded store once, then runs
// `askyourdocs search` in a new process per question, as a user's shell
// does, and reports the median wall time and the median and largest peak
// RSS of those processes (the kernel's ru_maxrss; issue 37: a cold search
// within 60 MB at about 11k chunks).
//
//	go test -run '^$' -bench BenchmarkColdSearch -benchtime 1x ./cmd/askyourdocs
func BenchmarkColdSearch(b *testing.B) {
	bin := buildCLI(b)
	manual := benchManual()
	data := filepath.Join(b.TempDir(), "index")
	if code := run(context.Background(), []string{"index", "--data", data, manual}, nil, io.Discard, io.Discard); code != exitOK {
		b.Fatalf("askyourdocs index %s: exit %d", manual, code)
	}
	be, err := benchApp().open(context.Background(), &commonFlags{data: data, name: storeName}, openOptions{})
	if err != nil {
		b.Fatal(err)
	}
	chunks, err := be.store.chunkCount(context.Background())
	be.Close()
	if err != nil {
		b.Fatal(err)
	}
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
}
