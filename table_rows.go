package engine

import "strings"

// tableRowTexts returns one paragraph text per data row of a table given as
// rows of cell texts, in the shape HTMLToStructuredText gives data tables:
// when header is true the first row labels the columns and every later cell
// is written "Label: value" (cells joined with " | "); otherwise cells are
// joined with " | ". Empty cells are left out, and so are rows without
// text. A table whose only row is its header gives that row.
func tableRowTexts(rows [][]string, header bool) []string {
	var labels []string
	if header && len(rows) > 0 {
		labels, rows = rows[0], rows[1:]
		if len(rows) == 0 {
			if t := labelledRow(nil, labels); t != "" {
				return []string{t}
			}
			return nil
		}
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if t := labelledRow(labels, r); t != "" {
			out = append(out, t)
		}
	}
	return out
}

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
