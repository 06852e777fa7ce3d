//go:build !unix

package engine

import "os"

// mapFile reads the file at path into memory (platforms without mmap
// through package syscall) and returns its bytes and a no-op release.
func mapFile(path string) ([]byte, func() error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
