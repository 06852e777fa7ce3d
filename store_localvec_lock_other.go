//go:build !unix && !windows

package engine

import "os"

// lockFile opens the lock file at path; platforms without flock or
// LockFileEx get no inter-process exclusion (one writer at a time is then
// the caller's responsibility).
func lockFile(path string, block bool) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	return f, true, nil
}

// unlockFile closes a file opened by lockFile.
func unlockFile(f *os.File) error {
	if f == nil {
		return nil
	}
	return f.Close()
}
