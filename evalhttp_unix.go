//go:build unix

package engine

import "syscall"

// evalOpenNonblock makes opening a FIFO return at once instead of waiting
// for a writer; it does not change reads of a regular file.
const evalOpenNonblock = syscall.O_NONBLOCK
