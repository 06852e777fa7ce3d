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
// for bit, with v (scratch space of q's length) decoded into. A sparse
// blob's norm is summed over its non-zero elements while they are
// decoded, in order (a zero element adds an exact zero), so the vector is
// passed over once more for the dot product only. A malformed blob is an
// error, as sqliteDecodeVecInto's.
func sqliteCosine(b []byte, q []float32, qinv float32, v []float32) (float32, error) {
	dim, sparse := sqliteVecDim(b)
	if !sparse || dim != len(v) {
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
	clear(v)
	var sq float64
	for j, m := range mask {
		for m != 0 {
			i := j*8 + bits.TrailingZeros8(m)
			m &= m - 1
			if i >= dim || len(vals) < 4 {
				return 0, fmt.Errorf("sparse vector of %d bytes is malformed", len(b))
			}
			x := math.Float32frombits(binary.LittleEndian.Uint32(vals))
			vals = vals[4:]
			v[i] = x
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
	return localvecDot(q, v) * qinv * inv, nil
}
