//go:build !unix

package engine

import "errors"

// makeFIFO fails: named pipes in the file system are a Unix feature.
func makeFIFO(string) error { return errors.New("named pipes need Unix") }
