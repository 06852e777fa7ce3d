package engine

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"
)

// localvecDotPaths runs fn once per float32 kernel this build has (the
// assembly one when the CPU runs it, then the Go one), selecting it
// through localvecDotUseAsm, and restores the selection. Callers must not
// run in parallel with other tests that score float32 vectors.
func localvecDotPaths(t testing.TB, fn func(name string)) {
	saved := localvecDotUseAsm
	defer func() { localvecDotUseAsm = saved }()
	if localvecDotHaveAsm {
		localvecDotUseAsm = true
		fn("asm")
	} else {
		t.Logf("no assembly float32 kernel in this build or on this CPU; testing the Go kernel only")
	}
	localvecDotUseAsm = false
	fn("go")
}

// localvecDotRef is the reference: float64 products and sum, and the sum
// of the products' magnitudes (the scale of the rounding error).
func localvecDotRef(a, b []float32) (dot, mag float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		mag += math.Abs(p)
	}
	return dot, mag
}

func TestLocalvecDotKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 6))
	lengths := []int{384, 768, 1000, 1024, 1536, 4097}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	localvecDotPaths(t, func(path string) {
		for _, n := range lengths {
			// Random values: within float32 rounding of the float64 sum.
			a, b := make([]float32, n), make([]float32, n+3) // b may be longer
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for i := range b {
				b[i] = float32(r.NormFloat64())
			}
			want, mag := localvecDotRef(a, b[:n])
			got := localvecDot(a, b)
			if tol := float64(n+1) * 0x1p-23 * mag; math.Abs(float64(got)-want) > tol {
				t.Fatalf("%s kernel, random, n=%d: %v, want %v (tolerance %v)", path, n, got, want, tol)
			}
			// Small integers: every partial sum is exact, so every kernel
			// gives the exact dot product whatever its order.
			for i := range a {
				a[i] = float32(r.IntN(17) - 8)
			}
			for i := range b {
				b[i] = float32(r.IntN(17) - 8)
			}
			want, _ = localvecDotRef(a, b[:n])
			if got := localvecDot(a, b); float64(got) != want {
				t.Fatalf("%s kernel, integers, n=%d: %v, want %v", path, n, got, want)
			}
			// Each element on its own: the kernel reads every position once.
			for j := range n {
				clear(a)
				a[j] = 1
				if got := localvecDot(a, b); got != b[j] {
					t.Fatalf("%s kernel, unit vector %d of %d: %v, want %v", path, j, n, got, b[j])
				}
			}
		}
	})
}

var benchDotRows = flag.Int("localvec-dot-rows", 0, "rows BenchmarkLocalvecDot scores (0: 6000)")

// BenchmarkLocalvecDot scores a 6,000 x 768 matrix (LocalvecStore's
// benchmark size) with each float32 kernel, reporting ns per row.
func BenchmarkLocalvecDot(b *testing.B) {
	rows, dim := 6000, 768
	if *benchDotRows > 0 {
		rows = *benchDotRows
	}
	m := benchQueryVectors(rows, dim)
	flat := make([]float32, 0, rows*dim)
	for _, v := range m {
		flat = append(flat, v...)
	}
	q := m[0]
	localvecDotPaths(b, func(path string) {
		b.Run(path, func(b *testing.B) {
			var sink float32
			for b.Loop() {
				for i := range rows {
					sink += localvecDot(q, flat[i*dim:(i+1)*dim])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
			if sink == 0 {
				b.Log("sum 0")
			}
		})
	})
}
