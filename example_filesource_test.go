package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// NewFileSource accepts a file of a format the engine reads and refuses
// anything else before reading it, with a *DocumentError (a directory and
// a legacy .doc wrap ErrUnsupportedFormat, a missing file its
// *fs.PathError); Source groups a folder's files for DeleteBySource.
func ExampleNewFileSource() {
	dir, err := os.MkdirTemp("", "filesource")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, text := range map[string]string{"notes.md": "# Notes\n\nThe boathouse opens at eight.\n", "old.doc": "binary"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}

	src, err := askyourdocs.NewFileSource(filepath.Join(dir, "notes.md"))
	if err != nil {
		log.Fatal(err)
	}
	src.Source = dir // the folder the user indexed
	paras, err := src.Fetch(context.Background())
	fmt.Println(len(paras), paras[1].Breadcrumb, "|", paras[1].Text, err)

	for _, name := range []string{"old.doc", "missing.pdf", "."} {
		_, err := askyourdocs.NewFileSource(filepath.Join(dir, name))
		var de *askyourdocs.DocumentError
		fmt.Println(name, errors.As(err, &de), errors.Is(err, askyourdocs.ErrUnsupportedFormat), errors.Is(err, fs.ErrNotExist))
	}
	// Output:
	// 2 Notes | The boathouse opens at eight. <nil>
	// old.doc true true false
	// missing.pdf true false true
	// . true true false
}
