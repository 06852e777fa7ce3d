package main

import (
	"os"
	"path/filepath"
	"strings"
)

// defaultDataDir is the name of the index directory.
const defaultDataDir = ".askyourdocs"

// dataEnv names the index directory when --data is not given.
const dataEnv = "ASKYOURDOCS_DATA"

// resolveData settles cf.data: --data when given, else $ASKYOURDOCS_DATA,
// else the nearest .askyourdocs directory in the working directory or one
// of its parents (as git finds .git), else ./.askyourdocs (which only
// index creates). a.dataFrom records how the directory was found, for
// doctor and mcp.
func (a *cliApp) resolveData(cf *commonFlags, explicit bool) error {
	switch {
	case explicit:
		a.dataFrom = "--data"
	case strings.TrimSpace(a.getenv(dataEnv)) != "":
		cf.data = strings.TrimSpace(a.getenv(dataEnv))
		a.dataFrom = "$" + dataEnv
	default:
		if dir, ok := findDataDirUp(); ok {
			cf.data = dir
			a.dataFrom = "nearest " + defaultDataDir + " upwards"
		} else {
			cf.data = defaultDataDir
			a.dataFrom = "default ./" + defaultDataDir + " (none found upwards)"
		}
	}
	if abs, err := filepath.Abs(cf.data); err == nil {
		cf.data = abs
	}
	return nil
}

// findDataDirUp returns the nearest .askyourdocs directory in the working
// directory or its parents.
func findDataDirUp() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for dir := wd; ; {
		p := filepath.Join(dir, defaultDataDir)
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
