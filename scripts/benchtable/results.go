package main

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// result is one result line of `go test -bench` output.
type result struct {
	// Sub is the benchmark's name below the top-level function ("" for
	// the function itself), without the -GOMAXPROCS suffix.
	Sub     string
	Metrics map[string]float64
}

// metrics is what one table row reads: its own result line (line) and
// every line of the run by sub-benchmark (all).
type metrics struct {
	line result
	all  []result
}

// get returns a metric: "name" from the row's line, "sub:name" from the
// sub-benchmark sub's line.
func (m metrics) get(key string) (float64, bool) {
	if sub, name, ok := strings.Cut(key, ":"); ok {
		for _, r := range m.all {
			if r.Sub == sub {
				v, ok := r.Metrics[name]
				return v, ok
			}
		}
		return 0, false
	}
	v, ok := m.line.Metrics[key]
	return v, ok
}

var rowsInName = regexp.MustCompile(`rows=(\d+)`)

// size returns the store size the line measured: its "rows" metric or
// rows=N in its name.
func (m metrics) size() (float64, bool) {
	if v, ok := m.line.Metrics["rows"]; ok {
		return v, true
	}
	if s := rowsInName.FindStringSubmatch(m.line.Sub); s != nil {
		v, err := strconv.ParseFloat(s[1], 64)
		return v, err == nil
	}
	return 0, false
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseResults returns the result lines of bench (a top-level benchmark
// function name) in go test output, in order.
func parseResults(out io.Reader, bench string) []result {
	var res []result
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// name, iterations, then value-unit pairs.
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		name := procsSuffix.ReplaceAllString(f[0], "")
		if name != bench && !strings.HasPrefix(name, bench+"/") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		r := result{Sub: strings.TrimPrefix(strings.TrimPrefix(name, bench), "/"), Metrics: map[string]float64{}}
		ok := true
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			r.Metrics[f[i+1]] = v
		}
		if ok {
			res = append(res, r)
		}
	}
	return res
}

var placeholder = regexp.MustCompile(`\{([^{}]+)\}`)

// fill replaces the placeholders of a template by the metrics, "?" where
// one is missing, and reports whether all were there.
func fill(tmpl string, m metrics) (string, bool) {
	all := true
	s := placeholder.ReplaceAllStringFunc(tmpl, func(p string) string {
		v, ok := m.get(p[1 : len(p)-1])
		if !ok {
			all = false
			return "?"
		}
		return num(v)
	})
	return s, all
}

// ratio evaluates a Ratio expression: {a} or {a}/{b}.
func ratio(expr string, m metrics) (float64, bool) {
	ps := placeholder.FindAllStringSubmatch(expr, -1)
	switch len(ps) {
	case 1:
		return m.get(ps[0][1])
	case 2:
		a, aok := m.get(ps[0][1])
		b, bok := m.get(ps[1][1])
		if !aok || !bok || b == 0 {
			return 0, false
		}
		return a / b, true
	}
	return 0, false
}

// num formats a figure with about three significant digits, without an
// exponent.
func num(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
