package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRowsNameBenchmarksThatExist keeps scripts/bench's rows true: every
// row's benchmark is declared in its package's _test.go files and has an
// invocation, every row ID is unique and named in scripts/bench's header,
// and every placeholder is well formed. A renamed benchmark fails here.
func TestRowsNameBenchmarksThatExist(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(filepath.Join(root, "scripts", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	inv := invocations()
	ids := map[string]bool{}
	for _, r := range rows {
		if ids[r.ID] {
			t.Errorf("row %s twice", r.ID)
		}
		ids[r.ID] = true
		if r.Group != "issue" && r.Group != "more" {
			t.Errorf("row %s: group %q, want issue or more", r.ID, r.Group)
		}
		if !regexp.MustCompile(`(?m)^#.*\b` + regexp.QuoteMeta(r.ID) + `\b`).Match(header) {
			t.Errorf("row %s is not named in scripts/bench's header", r.ID)
		}
		in, ok := inv[r.inv()]
		if !ok {
			t.Errorf("row %s: no invocation for %s", r.ID, r.inv())
			continue
		}
		if in.Pkg != r.Pkg || in.Bench != r.Bench {
			t.Errorf("row %s: invocation %s in %s, row says %s in %s", r.ID, in.Bench, in.Pkg, r.Bench, r.Pkg)
		}
		exists, err := benchExists(filepath.Join(root, r.Pkg), r.Bench)
		if err != nil {
			t.Fatal(err)
		}
		if !exists && !landing[r.Bench] {
			t.Errorf("row %s: %s is not declared in %s/*_test.go", r.ID, r.Bench, r.Pkg)
		}
		if strings.Count(r.Ours+r.Anchor+r.Ratio, "{") != strings.Count(r.Ours+r.Anchor+r.Ratio, "}") {
			t.Errorf("row %s: unbalanced braces in its templates", r.ID)
		}
		if n := len(placeholder.FindAllString(r.Ratio, -1)); r.Ratio != "" && n != 1 && n != 2 {
			t.Errorf("row %s: ratio %q, want {a} or {a}/{b}", r.ID, r.Ratio)
		}
		if r.Key != "" && !strings.Contains(r.Ours+r.Anchor+r.Ratio, "{"+r.Key+"}") {
			t.Errorf("row %s: key %s is not one of its metrics", r.ID, r.Key)
		}
	}
	for bench := range inv {
		used := false
		for _, r := range rows {
			used = used || r.inv() == bench
		}
		if !used {
			t.Errorf("invocation %s: no row uses it", bench)
		}
	}
}

// sampleOutput is go test -bench output of two benchmarks, one with
// sub-benchmarks per store size.
const sampleOutput = `goos: linux
BenchmarkPgvecKeywordSearch/rows=50000/postings-2         	       3	  12345 ns/op	        19.10 ours_p50_ms	       42.00 ours_p95_ms	         0.6300 gin_p50_ms	       189.0 gin_p95_ms	         0.2222 p95_ratio	     50000 rows
BenchmarkPgvecKeywordSearch/rows=100000/postings-2        	       3	  12345 ns/op	        25.00 ours_p50_ms	       90.00 ours_p95_ms	         1.000 gin_p50_ms	       200.0 gin_p95_ms	         0.4500 p95_ratio	    100000 rows
BenchmarkPgvecKeywordSearch/rows=100000/tsvector-2        	       3	  12345 ns/op	       174.5 p50-ms	       374.7 p95-ms	    100000 rows
--- BENCH: BenchmarkPgvecKeywordSearch
    search_sql_bench_test.go:99: a log line 1 2 3
BenchmarkExtractPDF/engine-2         	      30	  79536290 ns/op	   1.00 MB/s	       542.0 pages/s	        79.50 cpu-ms/op
BenchmarkExtractPDF/pdftotext-2      	      30	 146000000 ns/op	       242.0 pages/s	       146.0 cpu-ms/op
PASS
`

func TestTableFromOutput(t *testing.T) {
	kw, _ := rowByID("pg-keyword")
	pdf, _ := rowByID("pdf")
	kernel, _ := rowByID("kernel")
	inv := invocations()
	done := map[string]*outcome{
		kw.Bench:     {results: parseResults(strings.NewReader(sampleOutput), kw.Bench), load0: "0.10 0.2 0.3", load1: "0.50 0.2 0.3"},
		pdf.Bench:    {results: parseResults(strings.NewReader(sampleOutput), pdf.Bench), load0: "1.00 0 0", load1: "1.10 0 0"},
		kernel.Bench: {err: "missing: BenchmarkDotKernels is not in . yet"},
	}
	if n := len(done[kw.Bench].results); n != 3 {
		t.Fatalf("%d keyword result lines, want 3", n)
	}
	var out bytes.Buffer
	printTable(&out, []row{kw, pdf, kernel}, inv, done)
	got := out.String()
	for _, want := range []string{
		"| PostgreSQL keyword search, p50 / p95 (rows=50000/postings) | 19.1 / 42.0 ms | `tsvector @@` AND + GIN: 0.63 / 189 ms | 0.222x | p95 <= 50 ms at 50k, <= 80 ms at 100k | yes | 0.10 → 0.50 |",
		"| PostgreSQL keyword search, p50 / p95 (rows=100000/postings) | 25.0 / 90.0 ms | `tsvector @@` AND + GIN: 1.00 / 200 ms | 0.45x | p95 <= 50 ms at 50k, <= 80 ms at 100k | no | 0.10 → 0.50 |",
		"| PDF `ExtractParagraphs`, 100-page fixture, CPU per file | 79.5 ms (542 pages/s) | `pdftotext`: 146 ms (242 pages/s) | 0.545x |",
		"| int8 vector kernel, per 1024-dimension row | missing: BenchmarkDotKernels is not in . yet | |",
		"- `scripts/bench pg-keyword`: `ASKYOURDOCS_BENCH_KW_ROWS=",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks\n%s\ngot:\n%s", want, got)
		}
	}
	if strings.Contains(got, "tsvector)") {
		t.Errorf("a line without the row's key metric became a row:\n%s", got)
	}
}

func TestSelectRows(t *testing.T) {
	sel, err := selectRows(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sel {
		if r.Group != "issue" {
			t.Errorf("default selection has %s of group %s", r.ID, r.Group)
		}
	}
	if len(sel) == 0 {
		t.Fatal("no default rows")
	}
	sel, err = selectRows([]string{"serve", "kernel"})
	if err != nil || len(sel) != 2 || sel[0].ID != "kernel" || sel[1].ID != "serve" {
		t.Errorf("selectRows(serve kernel) = %v, %v; want kernel, serve in table order", sel, err)
	}
	if _, err := selectRows([]string{"no-such-row"}); err == nil {
		t.Error("an unknown row was accepted")
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{12514: "12514", 124.4: "124", 19.14: "19.1", 1.614: "1.61", 0.0099: "0.0099", 0.345: "0.345", 0: "0"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
