//go:build amd64 && !purego

package engine

import "golang.org/x/sys/cpu"

// localvecDotHaveAsm reports whether this CPU runs the AVX2/FMA float32
// kernel.
var localvecDotHaveAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// localvecDotUseAsm selects the assembly kernel; tests clear it to run the
// Go one.
var localvecDotUseAsm = localvecDotHaveAsm

// localvecDotAVX2 returns the dot product of the n float32 at a and b; n
// must be a positive multiple of 8 (store_localvec_dot_amd64.s).
//
//go:noescape
func localvecDotAVX2(a, b *float32, n int) float32

// localvecDot returns the dot product of a and b (len(b) >= len(a)): with
// AVX2 and FMA when the CPU has them (32 products per step in four
// accumulators, the last len(a)%8 in Go), else with localvecDotGo. The
// kernels sum in different orders, so their results may differ in the
// last bits, as they already did between amd64 and arm64 (where Go fuses
// the multiply-adds).
func localvecDot(a, b []float32) float32 {
	b = b[:len(a)]
	if !localvecDotUseAsm || len(a) < 8 {
		return localvecDotGo(a, b)
	}
	n := len(a) &^ 7
	s := localvecDotAVX2(&a[0], &b[0], n)
	for i := n; i < len(a); i++ {
		s += a[i] * b[i]
	}
	return s
}
