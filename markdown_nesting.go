package engine

import "fmt"

// mdMaxNesting bounds the block quotes and list items a Markdown line may
// open: goldmark's block parser takes time quadratic in that nesting (a
// line of 64,000 "- " markers, 128 KB, took 11 s to parse, so a file at the
// 64 MiB limit would take days). Real documents nest a handful deep.
const mdMaxNesting = 1000

// markdownCheckNesting returns an error wrapping ErrDocumentTooLarge when a
// line of src starts with more than mdMaxNesting container markers ('>',
// '-', '*', '+' or "1." / "1)" followed by a space), counted as goldmark
// would open them, or more. Indented code is counted too (an upper bound).
func markdownCheckNesting(src []byte) error {
	depth, start := 0, true
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\n' {
			depth, start = 0, true
			continue
		}
		if !start {
			continue
		}
		switch {
		case c == ' ' || c == '\t':
			continue
		case c == '>':
			depth++
		case (c == '-' || c == '*' || c == '+') && (i+1 == len(src) || src[i+1] == ' ' || src[i+1] == '\t' || src[i+1] == '\n'):
			depth++
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && j-i < 9 && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			if j < len(src) && (src[j] == '.' || src[j] == ')') && (j+1 == len(src) || src[j+1] == ' ' || src[j+1] == '\t' || src[j+1] == '\n') {
				depth++
				i = j
			} else {
				start = false
			}
		default:
			start = false
		}
		if depth > mdMaxNesting {
			return fmt.Errorf("%w: block quotes or list items nested more than %d deep on one line", ErrDocumentTooLarge, mdMaxNesting)
		}
	}
	return nil
}
