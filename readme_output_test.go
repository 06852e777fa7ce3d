package engine

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeHappyPathOutput keeps README's sentence on what the happy path
// prints ("It prints `...`, `...` and `...`, one a line.") equal to the
// Output of Example_askYourDocuments, which the tests run.
func TestReadmeHappyPathOutput(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "<!-- example: Example_askYourDocuments -->")
	if !ok {
		t.Fatal("README.md has no Example_askYourDocuments block")
	}
	_, after, ok = strings.Cut(after, "\nIt prints ")
	if !ok {
		t.Fatal(`README.md: no "It prints" sentence after the happy path`)
	}
	sentence, _, _ := strings.Cut(after, "\n\n")
	sentence = strings.ReplaceAll(sentence, "\n", " ")
	var said []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(sentence, -1) {
		said = append(said, m[1])
	}
	src, err := os.ReadFile("example_readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, out, ok := strings.Cut(string(src), "// Output:\n")
	if !ok {
		t.Fatal("Example_askYourDocuments has no Output")
	}
	var want []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "//") {
			break
		}
		want = append(want, strings.TrimSpace(strings.TrimPrefix(l, "//")))
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Errorf("README says the happy path prints %q; Example_askYourDocuments prints %q", said, want)
	}
}
