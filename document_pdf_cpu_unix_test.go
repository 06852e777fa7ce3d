//go:build unix

package engine

import "syscall"

// pdfCPUSeconds returns the user plus system CPU time of this process.
func pdfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
