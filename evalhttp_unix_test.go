//go:build unix

package engine

import "syscall"

func evalMkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
