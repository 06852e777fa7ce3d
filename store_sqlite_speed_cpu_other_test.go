//go:build !unix

package engine

import "time"

// sqliteSpeedCPU returns 0: the process's CPU time is read on Unix only.
func sqliteSpeedCPU() time.Duration { return 0 }
