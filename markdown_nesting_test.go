package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestMarkdownNestingLimit checks that a line opening more than 1,000 block
// quotes or list items is refused: goldmark parses such a line in time
// quadratic in its nesting (64,000 "- " markers, a 128 KB file, took 11 s;
// a 64 MiB one, days). Up to the limit, and for lines that only look like
// markers, the file reads as before.
func TestMarkdownNestingLimit(t *testing.T) {
	for name, in := range map[string]string{
		"list items":   strings.Repeat("- ", 64_000) + "x\n",
		"block quotes": "# T\n\ntext\n\n" + strings.Repeat(">", 64_000) + " x\n",
		"mixed":        strings.Repeat("> 1. * ", 400) + "x\n",
	} {
		if _, err := extractMarkdown([]byte(in)); !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "nested more than 1000") {
			t.Errorf("%s: err = %v, want ErrDocumentTooLarge for the nesting", name, err)
		}
	}
	for name, in := range map[string]string{
		"at the limit":       strings.Repeat("> ", 1000) + "deep\n",
		"markers later":      "text " + strings.Repeat("- ", 2000) + "\n\n-5 degrees " + strings.Repeat("> ", 2000) + "\n",
		"many lines":         strings.Repeat("> - quoted item\n", 5000),
		"numbers, no marker": strings.Repeat("1.5 ", 2000) + "\n",
	} {
		paras, err := extractMarkdown([]byte(in))
		if err != nil || len(paras) == 0 {
			t.Errorf("%s: %d paragraphs, err %v", name, len(paras), err)
		}
	}
}
