package engine

import "strings"

// labelledRow returns the text of one table row: its non-empty cells joined
// with " | ", each prefixed with "label: " when labels has a non-empty label
// for its column that differs from the cell's text.
func labelledRow(labels, cells []string) string {
	var sb strings.Builder
	for i, c := range cells {
		c = NormalizeSpaces(c)
		if c == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString(" | ")
		}
		if i < len(labels) {
			if l := NormalizeSpaces(labels[i]); l != "" && l != c {
				sb.WriteString(l)
				sb.WriteString(": ")
			}
		}
		sb.WriteString(c)
	}
	return sb.String()
}

// headingTrail tracks the headings above the current position by level,
// for the readers that build breadcrumbs from leveled headings.
type headingTrail struct {
	levels []int
	texts  []string
}

// push records a heading of the given level (1 = top) and returns its
// breadcrumb: the headings above it of lower levels and itself.
func (h *headingTrail) push(level int, text string) string {
	for len(h.levels) > 0 && h.levels[len(h.levels)-1] >= level {
		h.levels = h.levels[:len(h.levels)-1]
		h.texts = h.texts[:len(h.texts)-1]
	}
	h.levels = append(h.levels, level)
	h.texts = append(h.texts, text)
	return h.crumb()
}

// crumb returns the current breadcrumb.
func (h *headingTrail) crumb() string {
	return strings.Join(h.texts, " > ")
}
