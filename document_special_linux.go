//go:build linux

package engine

import "syscall"

// statfsSpecial returns the name of the pseudo filesystem statfs reports
// for path (proc, sysfs and friends mounted elsewhere than their usual
// place), or "" for any other filesystem or when statfs fails. devtmpfs
// reports tmpfs's magic number and is recognised by its /dev prefix only.
func statfsSpecial(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	switch uint64(st.Type) {
	case 0x9fa0:
		return "proc"
	case 0x62656572:
		return "sysfs"
	case 0x1cd1:
		return "devpts"
	case 0x64626720:
		return "debugfs"
	case 0x74726163:
		return "tracefs"
	case 0x73636673:
		return "securityfs"
	case 0x27e0eb, 0x63677270:
		return "cgroup"
	case 0xcafe4a11:
		return "bpf"
	}
	return ""
}
