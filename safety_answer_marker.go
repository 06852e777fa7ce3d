package engine

// SanitizeOptions configure SanitizeAnswerWithOptions. A nil pointer or a zero field
// means the default; the struct is not retained.
type SanitizeOptions struct {
	// RemovedLinkMarker replaces a removed link or URL; "" means
	// "[Link entfernt]".
	RemovedLinkMarker string
}

// CleanAnswer is SanitizeAnswerWithOptions.
//
// Deprecated: Use SanitizeAnswerWithOptions (the same function).
func CleanAnswer(answer string, allowedURLs []string, o *SanitizeOptions) string {
	return SanitizeAnswerWithOptions(answer, allowedURLs, o)
}

// SanitizeOption configures SanitizeAnswerWith.
//
// Deprecated: use SanitizeOptions.
type SanitizeOption func(*sanitizeConfig)

type sanitizeConfig struct{ marker string }

// WithRemovedLinkMarker sets the text that replaces a removed link or URL
// (default "[Link entfernt]"); an empty marker keeps the default.
//
// Deprecated: use SanitizeOptions.RemovedLinkMarker.
func WithRemovedLinkMarker(marker string) SanitizeOption {
	return func(c *sanitizeConfig) {
		if marker != "" {
			c.marker = marker
		}
	}
}

// SanitizeAnswerWith is SanitizeAnswer with options: the same removals,
// the removed links replaced by the marker WithRemovedLinkMarker sets.
//
// Deprecated: use SanitizeAnswerWithOptions.
func SanitizeAnswerWith(answer string, allowedURLs []string, opts ...SanitizeOption) string {
	c := sanitizeConfig{}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return SanitizeAnswerWithOptions(answer, allowedURLs, &SanitizeOptions{RemovedLinkMarker: c.marker})
}
