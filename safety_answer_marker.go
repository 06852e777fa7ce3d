package engine

// SanitizeOptions configure SanitizeAnswerWithOptions. A nil pointer or a zero field
// means the default; the struct is not retained.
//
// Deprecated: Use ConversationOptions, whose Labels.RemovedLink is the
// marker (EnglishLabels has the English one), with
// SanitizeAnswerWithOptions and AnswerOptions.Labels.
type SanitizeOptions struct {
	// RemovedLinkMarker replaces a removed link or URL; "" means
	// "[Link entfernt]".
	RemovedLinkMarker string
}

// conversation returns the ConversationOptions with o's marker.
func (o *SanitizeOptions) conversation() *ConversationOptions {
	if o == nil {
		return nil
	}
	return &ConversationOptions{Labels: ConversationLabels{RemovedLink: o.RemovedLinkMarker}}
}

// CleanAnswer is SanitizeAnswerWithOptions with o's marker.
//
// Deprecated: Use SanitizeAnswerWithOptions (the same function) with
// &ConversationOptions{Labels: ConversationLabels{RemovedLink: marker}}.
func CleanAnswer(answer string, allowedURLs []string, o *SanitizeOptions) string {
	return SanitizeAnswerWithOptions(answer, allowedURLs, o.conversation())
}

// SanitizeOption configures SanitizeAnswerWith.
//
// Deprecated: use SanitizeOptions.
type SanitizeOption func(*sanitizeConfig)

type sanitizeConfig struct{ marker string }

// WithRemovedLinkMarker sets the text that replaces a removed link or URL
// (default "[Link entfernt]"); an empty marker keeps the default.
//
// Deprecated: use ConversationOptions.Labels.RemovedLink.
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
	return SanitizeAnswerWithOptions(answer, allowedURLs, &ConversationOptions{Labels: ConversationLabels{RemovedLink: c.marker}})
}
