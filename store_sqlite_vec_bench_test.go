package engine

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkDotKernels compares the int8 kernel of SQLiteStore's scan with
// the float32 kernel of LocalvecStore's, per 1024-dimension row.
func BenchmarkDotKernels(b *testing.B) {
	const dim, rows = 1024, 4096
	r := rand.New(rand.NewPCG(1, 1))
	f := make([]float32, dim*rows)
	q8 := make([]int8, dim*rows)
	for i := range f {
		f[i] = r.Float32() - 0.5
		q8[i] = int8(r.IntN(255) - 127)
	}
	b.Run("float32", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for i := range rows {
				s += localvecDot(f[:dim], f[i*dim:(i+1)*dim])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
	b.Run("int8", func(b *testing.B) {
		var s int32
		for b.Loop() {
			for i := range rows {
				s += dotInt8(q8[:dim], q8[i*dim:(i+1)*dim])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
	})
}
