package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSQLiteCosineMatchesDecoded checks that sqliteCosine, which sums a
// sparse blob's norm from its non-zero elements, gives bit for bit the
// score of the decoded vector (localvecDot times both inverse norms), for
// sparse and dense blobs, dimensions that are and are not multiples of
// four, signed zeros and a query with a NaN; and that it refuses the blobs
// sqliteDecodeVecInto refuses.
func TestSQLiteCosineMatchesDecoded(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 44))
	sparse := 0
	for n := range 3000 {
		dim := []int{1, 3, 4, 7, 64, 1023, 1024}[n%7]
		v := make([]float32, dim)
		fill := []float64{0.05, 0.25, 0.5, 1}[r.IntN(4)]
		for i := range v {
			if r.Float64() < fill {
				v[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
			}
			if r.IntN(50) == 0 {
				v[i] = float32(math.Copysign(0, -1))
			}
		}
		q := make([]float32, dim)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		if n%97 == 0 {
			q[r.IntN(dim)] = float32(math.NaN())
		}
		b := sqliteEncodeVec(v)
		if _, sp := sqliteVecDim(b); sp {
			sparse++
		}
		qinv := localvecInvNorm(q)
		want := localvecDot(q, v) * qinv * localvecInvNorm(v)
		got, err := sqliteCosine(b, q, qinv, make([]float32, dim))
		if err != nil {
			t.Fatal(err)
		}
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("dim %d, %d bytes: score %v (%#x), decoded %v (%#x)", dim, len(b), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	if sparse < 1000 {
		t.Fatalf("only %d sparse blobs: the comparison tells little", sparse)
	}
	q := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	good := sqliteEncodeVec([]float32{0, 0, 1, 0, 0, 0, 0, 0})
	for _, bad := range [][]byte{good[:9], good[:len(good)-1], append(append([]byte{}, good...), 0, 0, 0, 0), {1, 2, 3}} {
		_, err := sqliteCosine(bad, q, 1, make([]float32, len(q)))
		if (err == nil) != (sqliteDecodeVecInto(bad, make([]float32, len(q))) == nil) || err == nil {
			t.Errorf("blob %x: sqliteCosine error %v, want an error as the decoder's", bad, err)
		}
	}
}
