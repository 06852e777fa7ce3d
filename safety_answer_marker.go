package engine

// EnglishRemovedLinkMarker is the removed-link marker for English pages
// (WithRemovedLinkMarker); SanitizeAnswer's own is German,
// "[Link entfernt]".
const EnglishRemovedLinkMarker = "[link removed]"

// SanitizeOption configures SanitizeAnswerWith.
type SanitizeOption func(*sanitizeConfig)

type sanitizeConfig struct{ marker string }

// WithRemovedLinkMarker sets the text that replaces a removed link or URL
// (default "[Link entfernt]"); an empty marker keeps the default.
func WithRemovedLinkMarker(marker string) SanitizeOption {
	return func(c *sanitizeConfig) {
		if marker != "" {
			c.marker = marker
		}
	}
}

// SanitizeAnswerWith is SanitizeAnswer with options: the same removals,
// the removed links replaced by the marker WithRemovedLinkMarker sets.
func SanitizeAnswerWith(answer string, allowedURLs []string, opts ...SanitizeOption) string {
	c := sanitizeConfig{marker: removedLinkMarker}
	for _, o := range opts {
		o(&c)
	}
	out, _ := sanitizeAnswerLoop(answer, allowedURLs, false, c.marker)
	return out
}
