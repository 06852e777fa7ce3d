//go:build amd64 && !purego

package engine

import "golang.org/x/sys/cpu"

// dotInt8HaveAsm reports whether this CPU runs the AVX2 kernel.
var dotInt8HaveAsm = cpu.X86.HasAVX2

// dotInt8UseAsm selects the AVX2 kernel; tests clear it to run the Go one.
var dotInt8UseAsm = dotInt8HaveAsm

// dotInt8AVX2 returns the dot product of the n int8 at a and b
// (store_sqlite_vec_amd64.s).
//
//go:noescape
func dotInt8AVX2(a, b *int8, n int) int32

// dotInt8 returns the dot product of a and b (len(b) >= len(a)), with AVX2
// when the CPU has it, else with dotInt8Go; both give the same int32.
func dotInt8(a, b []int8) int32 {
	b = b[:len(a)]
	if dotInt8UseAsm && len(a) > 0 {
		return dotInt8AVX2(&a[0], &b[0], len(a))
	}
	return dotInt8Go(a, b)
}
