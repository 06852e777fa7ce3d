//go:build windows

package engine

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile opens (creating) the lock file at path and locks it exclusively
// with LockFileEx: waiting for other holders when block is set, else
// returning ok false at once if it is held.
func lockFile(path string, block bool) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !block {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	err = windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f, true, nil
}

// unlockFile releases a lock taken by lockFile.
func unlockFile(f *os.File) error {
	if f == nil {
		return nil
	}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
	return f.Close()
}
