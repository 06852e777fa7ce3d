//go:build !amd64 || purego

package engine

// dotInt8HaveAsm reports whether an assembly kernel exists for this
// build: none on this architecture or with the purego tag.
const dotInt8HaveAsm = false

// dotInt8UseAsm has no effect here; tests set it on every architecture.
var dotInt8UseAsm = false

// dotInt8 returns the dot product of a and b (len(b) >= len(a)).
func dotInt8(a, b []int8) int32 {
	return dotInt8Go(a, b)
}
