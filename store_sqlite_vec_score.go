package engine

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// sqliteCosine returns the cosine similarity of the query q (qinv: its
// localvecInvNorm) and the vector blob b, as
// localvecDot(q, v) * qinv * localvecInvNorm(v) of the decoded v, bit
// for bit. A sparse blob is scored from its non-zero elements alone, each
// added to the accumulator the dense sums would add it to, in the same
// order (a zero element adds an exact zero to either sum); a dense blob,
// or a query with a non-finite element (finite false: its product with a
// zero is not zero), is decoded into v (scratch space of q's length) and
// scored so.
// A malformed blob is an error, as sqliteDecodeVecInto's.
func sqliteCosine(b []byte, q []float32, qinv float32, finite bool, v []float32) (float32, error) {
	dim, sparse := sqliteVecDim(b)
	if !sparse || dim != len(q) || !finite {
		if err := sqliteDecodeVecInto(b, v); err != nil {
			return 0, err
		}
		return localvecDot(q, v) * qinv * localvecInvNorm(v), nil
	}
	nb := (dim + 7) / 8
	if len(b) < 8+nb {
		return 0, fmt.Errorf("sparse vector of %d bytes is truncated", len(b))
	}
	mask, vals := b[8:8+nb], b[8+nb:]
	// localvecDot's four accumulators take element i by i%4 up to the
	// last multiple of four, the first one the rest.
	var s [4]float32
	var sq float64
	n4 := dim &^ 3
	for j, m := range mask {
		for m != 0 {
			i := j*8 + bits.TrailingZeros8(m)
			m &= m - 1
			if i >= dim || len(vals) < 4 {
				return 0, fmt.Errorf("sparse vector of %d bytes is malformed", len(b))
			}
			x := math.Float32frombits(binary.LittleEndian.Uint32(vals))
			vals = vals[4:]
			acc := 0
			if i < n4 {
				acc = i & 3
			}
			s[acc] += q[i] * x
			sq += float64(x) * float64(x)
		}
	}
	if len(vals) != 0 {
		return 0, fmt.Errorf("sparse vector of %d bytes has %d bytes left over", len(b), len(vals))
	}
	var inv float32
	if sq != 0 {
		inv = float32(1 / math.Sqrt(sq))
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) * qinv * inv, nil
}

// finiteFloats reports whether no element of v is infinite or NaN.
func finiteFloats(v []float32) bool {
	for _, x := range v {
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			return false
		}
	}
	return true
}
