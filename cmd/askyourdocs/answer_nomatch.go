package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// An answer is a no-match when retrieval found nothing, or when words of
// the question occur nowhere in the indexed documents: the passages shown
// are then only the closest ones, and the answer says so first, in the
// page, the API and MCP alike.

// missingTerms returns the question's keywords of 5 or more letters that
// occur in none of the passages and nowhere in the index (shorter words
// are often question phrasing, "how long"), when they are at least half
// of its keywords; else nil (one unknown word, "large", does not make a
// question unanswerable).
func (b *backend) missingTerms(ctx context.Context, question string, passages []string) []string {
	kws := askyourdocs.ExtractKeywords(question, cliStopWords)
	var missing []string
	lower := make([]string, len(passages))
	for i, p := range passages {
		lower[i] = strings.ToLower(p)
	}
next:
	for _, k := range kws {
		if utf8.RuneCountInString(k) < 5 {
			continue
		}
		p := keywordPrefix(k)
		for _, l := range lower {
			if strings.Contains(l, p) {
				continue next
			}
		}
		if docs, err := b.store.SearchText(ctx, k, 1, nil); err == nil && len(docs) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing)*2 < len(kws) {
		return nil
	}
	return missing
}

// noMatchText is the first line of a no-match answer: what matches
// nothing, and whether closest passages follow.
func noMatchText(question string, missing []string, closest bool) string {
	what := fmt.Sprintf("%q", strings.TrimSpace(question))
	if len(missing) > 0 {
		q := make([]string, len(missing))
		for i, m := range missing {
			q[i] = fmt.Sprintf("%q", m)
		}
		what = strings.Join(q, ", ")
	}
	if !closest {
		return "Nothing in the index matches " + what + "."
	}
	return "Nothing in the index matches " + what + "; closest:"
}
