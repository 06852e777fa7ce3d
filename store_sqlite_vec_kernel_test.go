package engine

import (
	"math/rand/v2"
	"testing"
)

// dotInt8Naive is the reference: one product at a time, int32 wrapping.
func dotInt8Naive(a, b []int8) int32 {
	var s int32
	for i := range a {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

// dotInt8Paths runs fn once per int8 kernel this build has (the assembly
// one when the CPU runs it, then the Go one), selecting it through
// dotInt8UseAsm, and restores the selection. Callers must not run in
// parallel with other tests that scan int8 vectors.
func dotInt8Paths(t testing.TB, fn func(name string)) {
	saved := dotInt8UseAsm
	defer func() { dotInt8UseAsm = saved }()
	if dotInt8HaveAsm {
		dotInt8UseAsm = true
		fn("asm")
	} else {
		t.Logf("no assembly int8 kernel in this build or on this CPU; testing the Go kernel only")
	}
	dotInt8UseAsm = false
	fn("go")
}

// dotInt8Check compares dotInt8 (the selected kernel) and dotInt8Go with
// the reference on a and b.
func dotInt8Check(t testing.TB, path, what string, a, b []int8) {
	t.Helper()
	want := dotInt8Naive(a, b)
	if got := dotInt8(a, b); got != want {
		t.Fatalf("%s kernel, %s, n=%d: dotInt8 = %d, want %d", path, what, len(a), got, want)
	}
	if got := dotInt8Go(a, b); got != want {
		t.Fatalf("%s, n=%d: dotInt8Go = %d, want %d", what, len(a), got, want)
	}
}

func TestDotInt8KernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	lengths := []int{1024, 1000, 1536, 4097}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	fill := map[string]func(i int) int8{
		"random":    func(int) int8 { return int8(r.IntN(256) - 128) },
		"all -128":  func(int) int8 { return -128 },
		"all 127":   func(int) int8 { return 127 },
		"-128, 127": func(i int) int8 { return [2]int8{-128, 127}[i%2] },
		"extremes":  func(int) int8 { return [4]int8{-128, 127, -1, 0}[r.IntN(4)] },
	}
	dotInt8Paths(t, func(path string) {
		for what, fa := range fill {
			for _, n := range lengths {
				// Offsets 0..3 into larger buffers: the kernels must not
				// assume alignment, and must ignore b past len(a).
				bufA, bufB := make([]int8, n+8), make([]int8, n+8)
				for i := range bufA {
					bufA[i], bufB[i] = fa(i), fill["random"](i)
				}
				for off := range 4 {
					a, b := bufA[off:off+n], bufB[off:]
					dotInt8Check(t, path, what+" x random", a, b)
					dotInt8Check(t, path, what+" x itself", a, bufA[off:])
				}
			}
		}
	})
}

// TestDotInt8KernelsWrap checks that a sum past int32 (137,000 products of
// -128 x -128) wraps the same way in every kernel.
func TestDotInt8KernelsWrap(t *testing.T) {
	a := make([]int8, 137_000+13)
	for i := range a {
		a[i] = -128
	}
	if s := int64(len(a)) * 128 * 128; s <= 1<<31-1 {
		t.Fatalf("test vector too short to overflow int32: %d", s)
	}
	dotInt8Paths(t, func(path string) {
		dotInt8Check(t, path, "all -128, past int32", a, a)
	})
}

func FuzzDotInt8(f *testing.F) {
	f.Add([]byte{}, 0)
	f.Add([]byte{0x80, 0x7f, 0x80, 0x7f}, 1)
	seed := make([]byte, 2*1024+5)
	for i := range seed {
		seed[i] = byte(i * 37)
	}
	f.Add(seed, 3)
	f.Fuzz(func(t *testing.T, data []byte, off int) {
		v := make([]int8, len(data))
		for i, x := range data {
			v[i] = int8(x)
		}
		n := len(v) / 2
		o := 0
		if n > 0 {
			o = (off%n + n) % n
		}
		a, b := v[:n], v[n:]
		dotInt8Paths(t, func(path string) {
			dotInt8Check(t, path, "fuzz", a, b)
			dotInt8Check(t, path, "fuzz, offset", a[o:], b[o:])
		})
	})
}
