//go:build !unix

package engine

import "errors"

func evalMkfifo(string) error { return errors.New("no FIFOs on this platform") }
