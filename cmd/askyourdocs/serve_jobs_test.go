package main

import (
	"regexp"
	"strings"
	"testing"
)

// Every index name gets a valid River namespace of its own.
func TestJobNamespace(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]string{}
	for _, name := range []string{"askyourdocs", "docs2", "My Docs", "my-docs", "A", "a", "", "___", "x/y",
		strings.Repeat("long", 20), "test/TestX/0a1b"} {
		ns := jobNamespace(name)
		if !valid.MatchString(ns) || len(ns) > 50 {
			t.Errorf("jobNamespace(%q) = %q: not a valid namespace", name, ns)
		}
		if prev, ok := seen[ns]; ok {
			t.Errorf("%q and %q share namespace %q", prev, name, ns)
		}
		seen[ns] = name
	}
	if got := jobNamespace("askyourdocs"); got != "askyourdocs" {
		t.Errorf("the default name's namespace is %q", got)
	}
}
