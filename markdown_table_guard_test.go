package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestMarkdownTableCellBudget checks that a small Markdown file cannot make
// goldmark build millions of table cells: a 4,000-column header over 1,000
// one-cell rows (19 KB) allocated 900 MB, as every row is padded to the
// header's width. Such a document is refused with ErrDocumentTooLarge; a
// table within the budget reads as before.
func TestMarkdownTableCellBudget(t *testing.T) {
	bomb := "# Data\n\n|" + strings.Repeat("a|", 4000) + "\n|" + strings.Repeat("-|", 4000) + "\n" + strings.Repeat("|b|\n", 1000)
	var err error
	n := allocatedBy(func() { _, err = extractMarkdown([]byte(bomb)) })
	if !errors.Is(err, ErrDocumentTooLarge) || !strings.Contains(err.Error(), "cells") {
		t.Errorf("err = %v, want ErrDocumentTooLarge for the table cells", err)
	}
	if n > 32<<20 {
		t.Errorf("allocated %d MB refusing a %d KB file", n>>10>>10, len(bomb)>>10)
	}
	// Many tables add up.
	small := "|" + strings.Repeat("a|", 100) + "\n|" + strings.Repeat("-|", 100) + "\n" + strings.Repeat("|b|\n", 100) + "\n"
	if _, err := extractMarkdown([]byte(strings.Repeat(small, 120))); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("120 tables of 10,100 cells: err = %v, want ErrDocumentTooLarge", err)
	}
	paras, err := extractMarkdown([]byte(strings.Repeat(small, 90) + "| Name | Age |\n|:--|--:|\n| Alice | 42 |\n"))
	if err != nil {
		t.Fatal(err)
	}
	if last := paras[len(paras)-1].Text; last != "Name: Alice | Age: 42" {
		t.Errorf("last row %q", last)
	}
}
