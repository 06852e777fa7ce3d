package engine

// localvecDotGo returns the dot product of a and b (len(b) >= len(a)) in
// plain Go, with four accumulators so the additions pipeline: the float32
// kernel on architectures without an assembly one, under the purego build
// tag, and on amd64 CPUs without AVX2 and FMA.
func localvecDotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
