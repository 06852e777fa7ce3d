package engine

import (
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// DocText returns the concatenated text of all text parts of doc ("" for a
// nil document).
func DocText(doc *ai.Document) string {
	if doc == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range doc.Content {
		if p != nil && p.IsText() {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
