package engine

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSpecialFilesystemRefused: /proc/self/environ is a regular file to
// os.Stat, but the readers refuse it (and a symlink to it) as not a
// document, with ErrUnsupportedFormat, before reading a byte.
func TestSpecialFilesystemRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	link := filepath.Join(t.TempDir(), "env.txt")
	if err := os.Symlink("/proc/self/environ", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/self/environ", link} {
		_, err := ExtractParagraphs(p)
		var de *DocumentError
		if !errors.Is(err, ErrUnsupportedFormat) || !errors.As(err, &de) {
			t.Errorf("ExtractParagraphs(%s) = %v, want a *DocumentError wrapping ErrUnsupportedFormat", p, err)
		}
		src := &FileSource{Path: p}
		if _, err := src.Fetch(t.Context()); !errors.Is(err, ErrUnsupportedFormat) {
			t.Errorf("FileSource(%s).Fetch = %v, want ErrUnsupportedFormat", p, err)
		}
	}
	if got := specialFilesystem(link); got != "proc" {
		t.Errorf("specialFilesystem(link to /proc/self/environ) = %q, want proc", got)
	}
	plain := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(plain, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := specialFilesystem(plain); got != "" {
		t.Errorf("specialFilesystem(%s) = %q, want \"\"", plain, got)
	}
}
