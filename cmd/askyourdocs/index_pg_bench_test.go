package main

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var benchIndexManual = flag.String("cli-index-manual", "", "folder the index --pg and cold search benchmarks index (default: Django's HTML manual of python-django-doc, else testdata/cli/docs)")

// benchManual returns the folder of -cli-index-manual, by default Django's
// HTML manual when python-django-doc is installed, else the CLI's test
// documents.
func benchManual() string {
	if *benchIndexManual != "" {
		return *benchIndexManual
	}
	if _, err := os.Stat("/usr/share/doc/python-django-doc/html"); err == nil {
		return "/usr/share/doc/python-django-doc/html"
	}
	return "../../testdata/cli/docs"
}

// BenchmarkIndexPgVsEmbedded runs the CLI's `index` of one whole folder
// twice per iteration, in this process and as a user runs it: into a new
// --data directory (the embedded SQLiteStore) and with --pg into a new
// database of ASKYOURDOCS_TEST_DSN, and reports both wall times and their
// ratio (issue 37: `index --pg` at most 2x the embedded index). Both read,
// OCR and embed the same files; the difference is the store's writes and
// index builds.
//
//	go test -run '^$' -bench BenchmarkIndexPgVsEmbedded -benchtime 1x ./cmd/askyourdocs
func BenchmarkIndexPgVsEmbedded(b *testing.B) {
	dsn := cliTestDSN(b)
	manual := benchManual()
	ctx := context.Background()
	index := func(args ...string) time.Duration {
		start := time.Now()
		if code := run(ctx, append([]string{"index"}, args...), nil, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("askyourdocs index %v: exit %d", args, code)
		}
		return time.Since(start)
	}
	var embedded, pg time.Duration
	runs := 0
	for b.Loop() {
		embedded += index("--data", filepath.Join(b.TempDir(), "index"), manual)
		pg += index("--data", b.TempDir(), "--pg", cliTestFreshDB(b, dsn), manual)
		runs++
	}
	b.ReportMetric(embedded.Seconds()/float64(runs), "embedded-s")
	b.ReportMetric(pg.Seconds()/float64(runs), "pg-s")
	b.ReportMetric(pg.Seconds()/embedded.Seconds(), "pg_over_embedded")
}
