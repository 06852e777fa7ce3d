//go:build !amd64 || purego

package engine

// localvecDotHaveAsm reports whether an assembly float32 kernel exists for
// this build: none on this architecture or with the purego tag.
const localvecDotHaveAsm = false

// localvecDotUseAsm has no effect here; tests set it on every architecture.
var localvecDotUseAsm = false

// localvecDot returns the dot product of a and b (len(b) >= len(a)).
func localvecDot(a, b []float32) float32 {
	return localvecDotGo(a, b)
}
