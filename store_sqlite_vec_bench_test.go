package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkDotKernels scans a 100,000 x 1024 matrix for its 80 best rows
// (k 10 x Rescore 8), as one SQLiteStore vector query does, three ways in
// each iteration: the int8 matrix with dotInt8 (the kernel this build and
// CPU select: AVX2 assembly on amd64), the same with the Go kernel
// (dotInt8Go), and a plain float32 matrix of the same vectors with
// localvecDot, LocalvecStore's scan, as the anchor. All three use
// localvecScanTopK (one part per CPU). It reports ns per row of each
// (int8_ns_per_row, int8_go_ns_per_row, f32_ns_per_row) and the ratios to
// the float32 scan (ratio, ratio_go); ns/op is one round of all three.
func BenchmarkDotKernels(b *testing.B) {
	const dim, rows, k = 1024, 100_000, 80
	r := rand.New(rand.NewPCG(1, 1))
	f := make([]float32, dim*rows)
	for i := range f {
		f[i] = r.Float32() - 0.5
	}
	inv := make([]float32, rows)
	m := &sqliteMatrix{dim: dim, rids: make([]int64, rows), scales: make([]float32, rows), q: make([]int8, dim*rows)}
	qb := make([]byte, dim)
	for i := range rows {
		v := f[i*dim : (i+1)*dim]
		inv[i] = localvecInvNorm(v)
		m.rids[i] = int64(i + 1)
		m.scales[i] = quantizeUnit(v, qb)
		for j, x := range qb {
			m.q[i*dim+j] = int8(x)
		}
	}
	q := append([]float32(nil), f[:dim]...)
	for i := range q {
		q[i] = q[i]*0.5 + r.Float32() - 0.5
	}
	quantizeUnit(q, qb)
	qq := make([]int8, dim)
	for i, x := range qb {
		qq[i] = int8(x)
	}
	qinv := localvecInvNorm(q)
	for i := range q {
		q[i] *= qinv
	}

	saved := dotInt8UseAsm
	defer func() { dotInt8UseAsm = saved }()
	var tInt8, tGo, tF32 time.Duration
	var sink float32
	for b.Loop() {
		t0 := time.Now()
		dotInt8UseAsm = saved
		h := m.candidates(qq, k)
		t1 := time.Now()
		dotInt8UseAsm = false
		hg := m.candidates(qq, k)
		t2 := time.Now()
		hf := localvecScanTopK(rows, dim, k, func(i int) float32 {
			return localvecDot(q, f[i*dim:(i+1)*dim]) * inv[i]
		})
		t3 := time.Now()
		tInt8, tGo, tF32 = tInt8+t1.Sub(t0), tGo+t2.Sub(t1), tF32+t3.Sub(t2)
		sink += h[0].score + hg[0].score + hf[0].score
	}
	n := float64(b.N) * rows
	b.ReportMetric(float64(tInt8.Nanoseconds())/n, "int8_ns_per_row")
	b.ReportMetric(float64(tGo.Nanoseconds())/n, "int8_go_ns_per_row")
	b.ReportMetric(float64(tF32.Nanoseconds())/n, "f32_ns_per_row")
	b.ReportMetric(float64(tInt8)/float64(tF32), "ratio")
	b.ReportMetric(float64(tGo)/float64(tF32), "ratio_go")
	if sink == 0 {
		b.Log("all best scores 0")
	}
}
