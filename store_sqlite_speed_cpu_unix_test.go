//go:build unix

package engine

import (
	"syscall"
	"time"
)

// sqliteSpeedCPU returns the process's user + system CPU time so far (0
// when the platform cannot tell).
func sqliteSpeedCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
