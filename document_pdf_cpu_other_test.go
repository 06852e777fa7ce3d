//go:build !unix

package engine

// pdfCPUSeconds is not measured on this platform; cpu-ms/op reads 0.
func pdfCPUSeconds() float64 { return 0 }
