package engine

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/logger"
)

// QATurn is one earlier question and answer of a conversation.
type QATurn struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// ConversationLabels are the words the library puts into text for the
// reader: FormatHistory's speaker labels, ConfidenceLabel's three levels
// and the marker SanitizeAnswerWithOptions (and Answer) leaves where it
// removed a link.
type ConversationLabels struct {
	User, Assistant   string
	High, Medium, Low string
	RemovedLink       string
}

// The built-in label sets for ConversationOptions.Labels; GermanLabels is
// the default.
var (
	// GermanLabels: "Nutzer"/"Assistent", "hoch"/"mittel"/"niedrig",
	// "[Link entfernt]".
	GermanLabels = ConversationLabels{User: "Nutzer", Assistant: "Assistent", High: "hoch", Medium: "mittel", Low: "niedrig",
		RemovedLink: removedLinkMarker}
	// EnglishLabels: "User"/"Assistant", "high"/"medium"/"low",
	// "[link removed]" (EnglishRemovedLinkMarker).
	EnglishLabels = ConversationLabels{User: "User", Assistant: "Assistant", High: "high", Medium: "medium", Low: "low",
		RemovedLink: EnglishRemovedLinkMarker}
)

// LabelOption changes the labels FormatHistory, CondenseFollowUpWith and
// ConfidenceLabelWith use.
//
// Deprecated: use ConversationOptions.Labels.
type LabelOption func(*ConversationLabels)

// ConversationOptions configure the helpers that take them: the multi-turn
// ones (CondenseFollowUpWithOptions, FormatHistoryWithOptions,
// TrimHistoryWithOptions, ConfidenceLabelWithOptions) and the answer
// sanitiser (SanitizeAnswerWithOptions). A nil pointer or a zero field
// means the default; the struct is not retained.
type ConversationOptions struct {
	// Labels are the words put into text: speaker and confidence labels,
	// the removed-link marker. Empty fields are German (GermanLabels); use
	// EnglishLabels for English.
	Labels ConversationLabels
	// MaxTurns is the most turns TrimHistoryWithOptions keeps: 0 means 6,
	// a negative value no limit.
	MaxTurns int
	// MaxChars is the most characters of questions and answers together
	// TrimHistoryWithOptions keeps (the newest turn is always kept); <= 0: no limit.
	MaxChars int
}

// labels returns o's labels with empty fields filled from GermanLabels.
func (o *ConversationOptions) labels() ConversationLabels {
	l := GermanLabels
	if o != nil {
		mergeLabels(&l, o.Labels)
	}
	return l
}

// mergeLabels sets the fields of l that custom has.
func mergeLabels(l *ConversationLabels, custom ConversationLabels) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&l.User, custom.User}, {&l.Assistant, custom.Assistant},
		{&l.High, custom.High}, {&l.Medium, custom.Medium}, {&l.Low, custom.Low},
		{&l.RemovedLink, custom.RemovedLink},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
}

// WithLanguage selects the built-in labels for lang: "de" (the default) or
// "en" (case and a region suffix such as "en-US" are ignored). Other
// languages keep the German labels; use WithLabels for them.
//
// Deprecated: use ConversationOptions{Labels: EnglishLabels}.
func WithLanguage(lang string) LabelOption {
	return func(l *ConversationLabels) {
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(lang)), "-")
		base, _, _ = strings.Cut(base, "_")
		switch base {
		case "en":
			*l = EnglishLabels
		case "de":
			*l = GermanLabels
		}
	}
}

// WithLabels sets custom labels; empty fields keep the current ones.
//
// Deprecated: use ConversationOptions.Labels.
func WithLabels(custom ConversationLabels) LabelOption {
	return func(l *ConversationLabels) { mergeLabels(l, custom) }
}

func conversationLabels(opts []LabelOption) ConversationLabels {
	l := GermanLabels
	for _, o := range opts {
		if o != nil {
			o(&l)
		}
	}
	return l
}

// MaxHistoryTurns is the number of most recent turns TrimHistory keeps.
//
// Deprecated: Leave ConversationOptions.MaxTurns zero for this default (6
// turns); TrimHistoryWithOptions(history, nil) keeps that many.
const MaxHistoryTurns = historyMaxTurns

// historyMaxTurns is the number of most recent turns TrimHistoryWithOptions
// keeps when ConversationOptions.MaxTurns is 0.
const historyMaxTurns = 6

// TrimHistory returns the last 6 turns of history, in the original order,
// as a new slice; history is not modified.
//
// Deprecated: Use TrimHistoryWithOptions(history, nil), the same function
// (ConversationOptions can also cap the characters).
func TrimHistory(history []QATurn) []QATurn {
	return TrimHistoryWithOptions(history, nil)
}

// LimitHistory is TrimHistoryWithOptions.
//
// Deprecated: Use TrimHistoryWithOptions, the same function under the name
// that says which spec function it extends.
func LimitHistory(history []QATurn, o *ConversationOptions) []QATurn {
	return TrimHistoryWithOptions(history, o)
}

// TrimHistoryWithOptions returns the most recent turns of history within o's MaxTurns
// and MaxChars (nil: the last 6 turns). The
// newest turn is always kept, whole, even if it alone exceeds MaxChars: a
// follow-up without its immediate context cannot be understood. The result
// is a new slice in the original order; history is not modified.
func TrimHistoryWithOptions(history []QATurn, o *ConversationOptions) []QATurn {
	if o == nil {
		return trimHistory(history, historyMaxTurns, 0)
	}
	turns := o.MaxTurns
	switch {
	case turns == 0:
		turns = historyMaxTurns
	case turns < 0:
		turns = 0
	}
	return trimHistory(history, turns, o.MaxChars)
}

// TrimHistoryWith returns the most recent turns of history that fit both
// limits: at most maxTurns turns (<= 0: no limit) and at most maxChars
// characters of questions and answers together (<= 0: no limit). The
// newest turn is always kept, whole, even if it alone exceeds maxChars:
// a follow-up without its immediate context cannot be understood. The
// result is a new slice in the original order; history is not modified.
//
// Deprecated: use TrimHistoryWithOptions.
func TrimHistoryWith(history []QATurn, maxTurns, maxChars int) []QATurn {
	return trimHistory(history, maxTurns, maxChars)
}

// trimHistory implements TrimHistoryWith.
func trimHistory(history []QATurn, maxTurns, maxChars int) []QATurn {
	start := len(history)
	chars := 0
	for i := len(history) - 1; i >= 0; i-- {
		if maxTurns > 0 && len(history)-i > maxTurns {
			break
		}
		n := utf8.RuneCountInString(history[i].Question) + utf8.RuneCountInString(history[i].Answer)
		if maxChars > 0 && chars+n > maxChars && i != len(history)-1 {
			break
		}
		chars += n
		start = i
	}
	return append([]QATurn(nil), history[start:]...)
}

// FormatHistory renders history for a prompt, oldest first, one line per
// question and answer and a blank line between turns:
//
//	Nutzer: <question>
//	Assistent: <answer>
//
// The result ends without a trailing newline. The labels are German
// (opts, deprecated LabelOptions, may select others).
// Line breaks inside a question or answer are kept; "" for an empty
// history.
//
// Deprecated: Use FormatHistoryWithOptions(history, nil), the same function
// (ConversationOptions.Labels selects other labels).
func FormatHistory(history []QATurn, opts ...LabelOption) string {
	return formatHistory(history, conversationLabels(opts))
}

// FormatTurns is FormatHistoryWithOptions.
//
// Deprecated: Use FormatHistoryWithOptions (the same function).
func FormatTurns(history []QATurn, o *ConversationOptions) string {
	return FormatHistoryWithOptions(history, o)
}

// FormatHistoryWithOptions renders history for a prompt, oldest first, one
// line per question and answer and a blank line between turns, labelled
// with o's labels (nil: German):
//
//	Nutzer: <question>
//	Assistent: <answer>
//
// The result ends without a trailing newline. Line breaks inside a
// question or answer are kept; "" for an empty history.
func FormatHistoryWithOptions(history []QATurn, o *ConversationOptions) string {
	return formatHistory(history, o.labels())
}

// formatHistory implements FormatHistory with the labels l.
func formatHistory(history []QATurn, l ConversationLabels) string {
	var b strings.Builder
	for i, t := range history {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(l.User + ": " + strings.TrimSpace(t.Question) + "\n")
		b.WriteString(l.Assistant + ": " + strings.TrimSpace(t.Answer))
	}
	return b.String()
}

// CondenseFollowUp rewrites a follow-up question into a standalone one; it
// is CondenseFollowUpWithOptions with the German labels.
//
// Deprecated: Use CondenseFollowUpWithOptions(…, nil), the same function
// (ConversationOptions.Labels selects the history's labels).
func CondenseFollowUp(ctx context.Context, condensePrompt ai.Prompt, model ai.Model, config any, question string, history []QATurn) string {
	return CondenseFollowUpWithOptions(ctx, condensePrompt, model, config, question, history, nil)
}

// CondenseFollowUpWith is CondenseFollowUpWithOptions with label options.
//
// Deprecated: use CondenseFollowUpWithOptions.
func CondenseFollowUpWith(ctx context.Context, condensePrompt ai.Prompt, model ai.Model, config any, question string, history []QATurn, opts ...LabelOption) string {
	return condense(ctx, condensePrompt, model, config, question, history, conversationLabels(opts))
}

// Condense is CondenseFollowUpWithOptions.
//
// Deprecated: Use CondenseFollowUpWithOptions (the same function).
func Condense(ctx context.Context, condensePrompt ai.Prompt, model ai.Model, config any, question string, history []QATurn, o *ConversationOptions) string {
	return CondenseFollowUpWithOptions(ctx, condensePrompt, model, config, question, history, o)
}

// CondenseFollowUpWithOptions rewrites a follow-up question into a standalone one by
// executing condensePrompt with the input {"history": FormatHistoryWithOptions(history, o),
// "question": question}; the formatted history is also passed as
// "conversation". In a dotprompt template write {{this.history}} or
// {{conversation}}: a bare {{history}} is dotprompt's built-in message
// history helper and renders nothing here. It returns question unchanged when history is
// empty (no model call). When the call fails, the reply is empty, or
// IsReliableCondense rejects it, it returns FallbackStandaloneQuestion and
// logs a warning. It never fails. The history's labels are o's (nil:
// German); o's history limits are not applied (see TrimHistoryWithOptions).
func CondenseFollowUpWithOptions(ctx context.Context, condensePrompt ai.Prompt, model ai.Model, config any, question string, history []QATurn, o *ConversationOptions) string {
	return condense(ctx, condensePrompt, model, config, question, history, o.labels())
}

// condense implements CondenseFollowUpWithOptions with the labels l.
func condense(ctx context.Context, condensePrompt ai.Prompt, model ai.Model, config any, question string, history []QATurn, l ConversationLabels) string {
	if len(history) == 0 || condensePrompt == nil {
		return question
	}
	log := logger.FromContext(ctx)
	formatted := formatHistory(history, l)
	input := map[string]any{"history": formatted, "conversation": formatted, "question": question}
	resp, err := condensePrompt.Execute(ctx, PromptOptions(model, config, input)...)
	if err != nil {
		log.Warn("condensing the follow-up failed, using a fallback question", "err", err)
		return FallbackStandaloneQuestion(question, history)
	}
	condensed := cleanCondensed(resp.Text())
	if !IsReliableCondense(question, condensed, history) {
		log.Warn("condensed question rejected, using a fallback question")
		log.Debug("condensed question rejected", "question", question, "condensed", condensed)
		return FallbackStandaloneQuestion(question, history)
	}
	log.Debug("condensed question", "question", question, "condensed", condensed)
	return condensed
}

// cleanCondensed strips quotes and a leading label a model may add.
func cleanCondensed(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range []string{"Standalone question:", "Eigenständige Frage:", "Frage:", "Question:"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			s = strings.TrimSpace(s[len(p):])
		}
	}
	return strings.TrimSpace(strings.Trim(s, "\"'„“”«»"))
}

// numberPattern matches numbers: digit runs with inner separators
// ("2024", "3,5", "1.000", "12:30").
var numberPattern = lazyRegexp(`\d+(?:[.,:/]\d+)*`)

// conversationNumbers returns the numbers in s in a normalised form (each
// number once as written with "," read as ".", and once digits only).
func conversationNumbers(s string) map[string]bool {
	out := make(map[string]bool)
	for _, m := range numberPattern().FindAllString(s, -1) {
		out[strings.ReplaceAll(m, ",", ".")] = true
		out[digitsOnly(m)] = true
	}
	return out
}

func digitsOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// IsReliableCondense reports whether condensed is an acceptable standalone
// version of the follow-up question. The question itself, unchanged
// (ignoring surrounding white space), always is. Any other rewrite must not
// be empty, not much longer than the conversation warrants (at most 3
// times the question plus 300 characters), invent no number (each number
// in it appears in the question or the history) and drop none of the
// question's (each number in the question appears in it). And
// (docs/compat.md), when the question names no number or date of its own,
// a rewrite must keep at least one of the conversation's (if it has any):
// "Und wann wird sie fällig?" after a turn about "Lindenstraße 12" must
// not become a question that no longer says which flat.
func IsReliableCondense(question, condensed string, history []QATurn) bool {
	condensed = strings.TrimSpace(condensed)
	if condensed == "" {
		return false
	}
	if condensed == strings.TrimSpace(question) {
		return true
	}
	if utf8.RuneCountInString(condensed) > 3*utf8.RuneCountInString(question)+300 {
		return false
	}
	known := conversationNumbers(question)
	for _, t := range history {
		for n := range conversationNumbers(t.Question + "\n" + t.Answer) {
			known[n] = true
		}
	}
	for _, m := range numberPattern().FindAllString(condensed, -1) {
		if !known[strings.ReplaceAll(m, ",", ".")] && !known[digitsOnly(m)] {
			return false
		}
	}
	have := conversationNumbers(condensed)
	own := numberPattern().FindAllString(question, -1)
	for _, m := range own {
		if !have[strings.ReplaceAll(m, ",", ".")] && !have[digitsOnly(m)] {
			return false
		}
	}
	if len(own) > 0 {
		return true
	}
	// No anchor of its own: keep one of the conversation's.
	anchors := false
	for _, t := range history {
		for _, m := range numberPattern().FindAllString(t.Question+"\n"+t.Answer, -1) {
			anchors = true
			if have[strings.ReplaceAll(m, ",", ".")] || have[digitsOnly(m)] {
				return true
			}
		}
	}
	return !anchors
}

// FallbackStandaloneQuestion returns a retrieval query for a follow-up
// when no reliable condensed question is available: the previous question
// followed by the follow-up, so retrieval sees the topic the follow-up
// refers to. With an empty history it returns question unchanged.
func FallbackStandaloneQuestion(question string, history []QATurn) string {
	question = strings.TrimSpace(question)
	for i := len(history) - 1; i >= 0; i-- {
		if prev := strings.TrimSpace(history[i].Question); prev != "" {
			if question == "" {
				return prev
			}
			return prev + " " + question
		}
	}
	return question
}

// ConfidenceLabel returns a coarse German confidence label for an answer
// from the reranker's top score (0-10): "hoch" for 8 and above, "mittel"
// for 5 to 7, "niedrig" below 5 or when usedFallback is set (the answer
// was drawn from a fallback, not from well-ranked sources).
//
// Deprecated: Use ConfidenceLabelWithOptions(topScore, usedFallback, nil),
// the same function (ConversationOptions.Labels selects other labels).
func ConfidenceLabel(topScore int, usedFallback bool) string {
	return ConfidenceLabelWithOptions(topScore, usedFallback, nil)
}

// LabelConfidence is ConfidenceLabelWithOptions.
//
// Deprecated: Use ConfidenceLabelWithOptions (the same function).
func LabelConfidence(topScore int, usedFallback bool, o *ConversationOptions) string {
	return ConfidenceLabelWithOptions(topScore, usedFallback, o)
}

// ConfidenceLabelWithOptions returns a coarse confidence label for an answer
// from the reranker's top score (0-10) in o's labels (nil: German, "hoch",
// "mittel", "niedrig"): high for 8 and above, medium for 5 to 7, low below 5
// or when usedFallback is set (the answer was drawn from a fallback, not
// from well-ranked sources).
func ConfidenceLabelWithOptions(topScore int, usedFallback bool, o *ConversationOptions) string {
	if usedFallback {
		return o.labels().Low
	}
	return rerankLevel(topScore).labelIn(o.labels())
}

// ConfidenceLabelWith is ConfidenceLabel without a fallback flag and with
// label options: the same thresholds (>= 8 high, >= 5 medium, else low),
// German unless an option selects other labels.
//
// Deprecated: use ConfidenceLabelWithOptions.
func ConfidenceLabelWith(topScore int, opts ...LabelOption) string {
	return rerankLevel(topScore).labelIn(conversationLabels(opts))
}

// bestExcerptMaxChars is BestExcerptWithOptions' default length.
const bestExcerptMaxChars = 300

// bestExcerptCutChars is the length BestExcerpt cuts its sentence to
// (docs/compat.md).
const bestExcerptCutChars = 220

// BestExcerpt returns a short verbatim quote from chunkText for a
// citation of answer: the one sentence of chunkText that shares the most
// words with answer (ties: the earliest; no shared word: the first
// sentence), cut at a word boundary to at most 220 characters, ending in
// "…" when cut. A line break ends a sentence too (chunks join paragraphs
// with one). Words match as in BestExcerptWithOptions. Whitespace runs are
// collapsed; "" for an empty chunkText.
func BestExcerpt(chunkText, answer string) string {
	var sentences []string
	for _, line := range strings.Split(chunkText, "\n") {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			sentences = append(sentences, SplitSentences(line)...)
		}
	}
	if len(sentences) == 0 {
		return ""
	}
	return cutExcerpt(sentences[bestExcerptSentence(sentences, excerptTerms(answer))], bestExcerptCutChars)
}

// BestExcerptFor is BestExcerptWithOptions with the question and length as parameters.
//
// Deprecated: use BestExcerptWithOptions.
func BestExcerptFor(text, question string, maxChars int) string {
	return BestExcerptWithOptions(text, &ExcerptOptions{Query: question, MaxChars: maxChars})
}

// ExcerptOptions say what BestExcerptWithOptions quotes; the zero value quotes the start
// of the text, up to 300 characters.
type ExcerptOptions struct {
	// Query is the text the quote should share words with: the question
	// (or the answer) the citation is for.
	Query string
	// MaxChars is the most characters of the quote (with Heading, the
	// heading line comes on top); <= 0 means 300.
	MaxChars int
	// Heading quotes from the text below the section headings (short
	// lines without closing punctuation) and puts the heading of the
	// quote's section on a line of its own above it, as SearchHit.Excerpt;
	// the quote then ends where its section does.
	Heading bool
}

// Excerpt is BestExcerptWithOptions with the options by value.
//
// Deprecated: Use BestExcerptWithOptions(text, &o).
func Excerpt(text string, o ExcerptOptions) string {
	return BestExcerptWithOptions(text, &o)
}

// BestExcerptWithOptions is BestExcerpt with o's options (nil: no query,
// the default length): a short verbatim quote from text for a citation,
// the sentence sharing the most of o.Query's words of 3 or more letters
// (ties: the earliest), extended by the following sentences while it stays
// within o.MaxChars characters. A sentence longer than that is cut at a word boundary and
// ends in "…". Words match case-insensitively, and words of 5 or more
// letters also by their first 5 letters (so inflections match). When no
// word matches, the excerpt starts at the beginning of text. Whitespace
// runs are collapsed; otherwise the quote is verbatim.
func BestExcerptWithOptions(text string, opts *ExcerptOptions) string {
	var o ExcerptOptions
	if opts != nil {
		o = *opts
	}
	if o.Heading {
		return excerptWithHeading(text, o.Query, o.MaxChars)
	}
	question, maxChars := o.Query, o.MaxChars
	if maxChars <= 0 {
		maxChars = bestExcerptMaxChars
	}
	text = joinFields(text)
	if text == "" {
		return ""
	}
	sentences := SplitSentences(text)
	best := bestExcerptSentence(sentences, excerptTerms(question))
	out := sentences[best]
	for j := best + 1; j < len(sentences); j++ {
		sep := " "
		if n := len(out); n >= 3 && cjkSentenceEnd(out[n-3:]) > 0 {
			sep = "" // CJK text has no space between sentences
		}
		next := out + sep + sentences[j]
		if utf8.RuneCountInString(next) > maxChars {
			break
		}
		out = next
	}
	return cutExcerpt(out, maxChars)
}

// joinFields returns strings.Join(strings.Fields(s), " ") without the
// slice of fields: s's words (runs of runes unicode.IsSpace does not
// report, invalid UTF-8 kept as it is) one ASCII space apart; s itself
// when it is so already.
func joinFields(s string) string {
	if fieldsJoined(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); {
		c, n := rune(s[i]), 1
		if c >= utf8.RuneSelf {
			c, n = utf8.DecodeRuneInString(s[i:])
		}
		if unicode.IsSpace(c) {
			pending = b.Len() > 0
		} else {
			if pending {
				b.WriteByte(' ')
				pending = false
			}
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// fieldsJoined reports whether joinFields(s) is s: no space but single
// ASCII spaces between words.
func fieldsJoined(s string) bool {
	prevSpace := true
	for i := 0; i < len(s); {
		c, n := rune(s[i]), 1
		if c >= utf8.RuneSelf {
			c, n = utf8.DecodeRuneInString(s[i:])
		}
		if unicode.IsSpace(c) {
			if c != ' ' || prevSpace {
				return false
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
		i += n
	}
	return !prevSpace || s == ""
}

// bestExcerptSentence returns the index of the sentence matching the most
// terms, the earliest on ties, 0 when none matches.
func bestExcerptSentence(sentences, terms []string) int {
	ts := make([]excerptTerm, len(terms))
	for i, t := range terms {
		ts[i] = excerptTerm{word: t, prefix: excerptPrefix(t), cjk: isCJKRune(firstRune(t))}
	}
	hit := make([]bool, len(terms))
	best, bestScore := 0, 0
	for i, s := range sentences {
		if sc := excerptScoreTerms(s, ts, hit); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	return best
}

// cutExcerpt cuts s to at most maxChars runes at a word boundary, ending
// in "…" when cut.
func cutExcerpt(s string, maxChars int) string {
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	runes := []rune(s)[:maxChars-1]
	cut := string(runes)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// SplitSentences splits text after ".", "!" or "?" followed by a space,
// not after a single letter ("z. B."), and after the CJK sentence ends
// "。", "！" and "？" (followed by a space or not), as the excerpt functions
// do; the sentences keep their end punctuation.
func SplitSentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text)-1; i++ {
		if n := cjkSentenceEnd(text[i:]); n > 0 {
			end := i + n
			if strings.TrimSpace(text[start:end]) != "" {
				out = append(out, strings.TrimLeft(text[start:end], " "))
			}
			if end < len(text) && text[end] == ' ' {
				end++
			}
			start, i = end, end-1
			continue
		}
		if (text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i+1] == ' ' {
			// Not after a single digit or letter (1. / z. B.).
			if i >= 1 && (i < 2 || text[i-2] == ' ') && unicode.IsLetter(rune(text[i-1])) {
				continue
			}
			out = append(out, text[start:i+1])
			start = i + 2
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// cjkSentenceEnd returns the length of the CJK sentence end ("。", "！",
// "？", the ideographic full stop and full-width marks) s starts with, or 0.
func cjkSentenceEnd(s string) int {
	if len(s) < 3 || s[0] < 0xE3 || s[0] > 0xEF {
		return 0
	}
	for _, end := range []string{"。", "！", "？"} {
		if strings.HasPrefix(s, end) {
			return len(end)
		}
	}
	return 0
}

// excerptTerms returns the lower-cased words of question with 3 or more
// letters, once each; a run of CJK characters gives its bigrams
// (cjkKeywords), which excerptScoreTerms finds inside a sentence's runs.
func excerptTerms(question string) []string {
	words := strings.FieldsFunc(strings.ToLower(textNFKC(question)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return cjkKeywords(slices.DeleteFunc(words, func(w string) bool {
		return utf8.RuneCountInString(w) < 3 && !strings.ContainsFunc(w, isCJKRune)
	}))
}

// excerptTerm is a term of excerptScoreTerms with its excerptPrefix; a
// CJK bigram (cjk) matches anywhere inside a sentence.
type excerptTerm struct {
	word, prefix string
	cjk          bool
}

// excerptScoreTerms counts the terms that occur in sentence, their
// prefixes computed once; hit (one per term, overwritten) is its scratch space. A word of
// the sentence is a run of letters and digits of the lower-cased sentence.
func excerptScoreTerms(sentence string, terms []excerptTerm, hit []bool) int {
	clear(hit)
	lower := strings.ToLower(sentence)
	score := 0
	for k, t := range terms {
		if t.cjk && strings.Contains(lower, t.word) {
			hit[k] = true
			score++
		}
	}
	match := func(w string) {
		wp := excerptPrefix(w)
		for k, t := range terms {
			if !hit[k] && (w == t.word || (t.prefix != "" && wp == t.prefix)) {
				hit[k] = true
				score++
			}
		}
	}
	start := -1
	for i, r := range lower {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			match(lower[start:i])
			start = -1
		}
	}
	if start >= 0 {
		match(lower[start:])
	}
	return score
}

// excerptPrefix returns the first 5 runes of a word of 5 or more runes.
func excerptPrefix(w string) string {
	n := 0
	for i := range w {
		if n == 5 {
			return w[:i]
		}
		n++
	}
	if n == 5 {
		return w
	}
	return ""
}
