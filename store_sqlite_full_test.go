//go:build linux

package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"modernc.org/sqlite"
)

// sqliteFullEnv makes TestSQLiteStoreFullDiskChild run: the database path.
const sqliteFullEnv = "ASKYOURDOCS_SQLITE_FULL_CHILD"

// TestSQLiteStoreFullDisk runs a child process whose files cannot grow past
// a limit (RLIMIT_FSIZE stands in for a full disk): its write fails, SQLite
// rolls the transaction back itself, and the error must say what failed
// once, without a second failure from our own ROLLBACK ("roll back: cannot
// rollback - no transaction is active"), which the CLI printed for every
// file on a full disk.
func TestSQLiteStoreFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteStoreFullDiskChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), sqliteFullEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "write failed:") {
		t.Fatalf("the child's write did not fail:\n%s", out)
	}
}

// TestSQLiteStoreFullDiskChild is the child of TestSQLiteStoreFullDisk.
func TestSQLiteStoreFullDiskChild(t *testing.T) {
	path := os.Getenv(sqliteFullEnv)
	if path == "" {
		t.Skip("child process of TestSQLiteStoreFullDisk")
	}
	ctx := t.Context()
	s, err := NewSQLiteStore(ctx, nil, newTestEmbedder(64), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := IndexSource(ctx, s, &ingestTestSource{url: "u:first", texts: ingestTestTexts("first", 3)}, 500, 50, nil); err != nil {
		t.Fatal(err)
	}
	// No file of this process may grow past 64 KiB more than the largest
	// now (the signal that would end the process is ignored by Go).
	var limit int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			limit = max(limit, fi.Size())
		}
	}
	lim := &syscall.Rlimit{Cur: uint64(limit + 64<<10), Max: uint64(limit + 64<<10)}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	big := make([]string, 600)
	for i := range big {
		big[i] = fmt.Sprintf("big chunk %d %s", i, strings.Repeat("filler words to grow the database ", 30))
	}
	_, _, err = IndexSource(ctx, s, &ingestTestSource{url: "u:big", texts: big}, 2000, 50, nil)
	var se *sqlite.Error
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a SQLite error", err)
	}
	fmt.Println("write failed:", err)
	if strings.Contains(err.Error(), "roll back") || strings.Contains(err.Error(), "no transaction is active") {
		t.Errorf("error reports a spurious rollback failure: %v", err)
	}
	// The store still works and holds the first source only.
	n, err := s.countScope(ctx, replaceScope{urls: []string{"u:big"}})
	if err != nil || n != 0 {
		t.Errorf("failed run left %d chunks (%v)", n, err)
	}
	if n, err := s.countScope(ctx, replaceScope{urls: []string{"u:first"}}); err != nil || n != 3 {
		t.Errorf("first source: %d chunks (%v), want 3", n, err)
	}
}
