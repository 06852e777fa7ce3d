package engine

import (
	"path/filepath"
	"strings"
)

// specialFSRoots are the mount points of the kernel's pseudo filesystems
// on Linux: what lies below them is process and device state (a process's
// environment, memory maps, device nodes), never a document.
var specialFSRoots = []string{"/proc", "/sys", "/dev"}

// specialFilesystem returns the name of the pseudo filesystem that path
// lies on once its symlinks are resolved ("proc", "sys", "dev", or on
// Linux the kind statfs reports, such as "debugfs" or "cgroup"), or ""
// for an ordinary filesystem. The readers refuse such files
// (ErrUnsupportedFormat): `/proc/self/environ` is a regular file to
// os.Stat, but holds the reading process's environment, API keys
// included. A path that cannot be resolved is judged as written.
func specialFilesystem(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = filepath.Clean(path)
	}
	for _, root := range specialFSRoots {
		if real == root || strings.HasPrefix(real, root+"/") {
			return strings.TrimPrefix(root, "/")
		}
	}
	return statfsSpecial(real)
}
