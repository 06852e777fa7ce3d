//go:build !unix

package engine

// evalOpenNonblock is 0 where there are no FIFOs to block on open.
const evalOpenNonblock = 0
