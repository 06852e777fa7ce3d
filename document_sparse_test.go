package engine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestExtractHugeFilesRefusedUnread checks that a 1 GiB file (sparse, so
// the test costs no disk) is refused from its size or its first bytes:
// text files are over their 64 MiB limit by their size (reading up to the
// limit first allocated 256 MB), and a PDF without a %PDF- header is not a
// PDF whatever follows (it was read whole first, 1 GiB). The zip readers
// look at the end of the file only.
func TestExtractHugeFilesRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string]error{
		"huge.txt": ErrDocumentTooLarge, "huge.md": ErrDocumentTooLarge, "huge": ErrDocumentTooLarge,
		"huge.pdf": ErrInvalidDocument, "huge.docx": ErrInvalidDocument, "huge.epub": ErrInvalidDocument,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, 1<<30); err != nil {
				t.Skipf("no sparse file: %v", err)
			}
			defer os.Remove(path)
			var err error
			n := allocatedBy(func() { _, err = ExtractParagraphs(path) })
			var de *DocumentError
			if !errors.As(err, &de) || !errors.Is(err, want) {
				t.Errorf("err = %v, want a *DocumentError wrapping %v", err, want)
			}
			if n > 16<<20 {
				t.Errorf("allocated %d MB refusing it", n>>20)
			}
		})
	}
	// A symbolic link loop is an operating-system failure, reported as such.
	loop := filepath.Join(dir, "loop.md")
	if err := os.Symlink(loop, loop); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	_, err := ExtractParagraphs(loop)
	var de *DocumentError
	var pe *fs.PathError
	if !errors.As(err, &de) || !errors.As(err, &pe) {
		t.Errorf("symlink loop: err = %v, want a *DocumentError with the *fs.PathError", err)
	}
}
