package engine

import (
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"github.com/firebase/genkit/go/ai"
)

// metaLanguage is the metadata key IndexSource writes on every chunk: the
// ISO 639-1 code of the language its text is written in ("en", "de",
// "ja", "zh", "ko"), detected by detectLanguage, when one could be told.
// SearchHit.Language reads it. A chunk that already has the key keeps it.
const metaLanguage = "language"

// languageSampleBytes is how much of a text detectLanguage reads: the
// trigram detector's cost grows with the text, its answer stops changing
// long before.
const languageSampleBytes = 2048

// languageMinLetters is the fewest letters of a script written with
// spaces that detectLanguage judges; shorter text gives "".
const languageMinLetters = 24

// detectLanguage returns the ISO 639-1 code of the language of text, ""
// when it cannot tell. Chinese, Japanese and Korean are told by script
// (Hangul is Korean, Han with kana Japanese, Han alone Chinese) when CJK
// characters carry at least half of the text's letters (one CJK
// character counts as three letters, a word's worth); other text goes to
// the trigram detector of github.com/abadojack/whatlanggo (84 languages,
// pure Go, 0.5 MB), whose answer counts only when it calls itself
// reliable. Only the first languageSampleBytes of text are read.
//
// Measured on 925 chunks of 40 to 300 characters from the dev sets'
// manuals (scripts/dev-eval), the detector was right on 0.92 of English,
// 0.86 of German and 0.86 of French chunks, at 0.19 ms a chunk; lingua-go
// did 0.97, 0.91 and 0.86 at 2 ms a chunk and adds 131 MB to a binary, so
// it was not taken. The script rule is right on every Japanese, Chinese
// and Korean chunk of that sample.
func detectLanguage(text string) string {
	text = languageSample(text)
	c := countScripts(text)
	if c.cjkDominant() {
		switch {
		case c.hangul >= c.han+c.kana:
			return "ko"
		case c.kana*20 >= c.han+c.kana: // Japanese writes kana in nearly every sentence
			return "ja"
		}
		return "zh"
	}
	if c.letters < languageMinLetters {
		return ""
	}
	info := whatlanggo.Detect(text)
	if info.Lang < 0 || !info.IsReliable() {
		return ""
	}
	return info.Lang.Iso6391()
}

// cjkLanguage reports whether code is Chinese, Japanese or Korean.
func cjkLanguage(code string) bool { return code == "zh" || code == "ja" || code == "ko" }

// annotateLanguages writes metaLanguage on the chunks of docs that lack
// it. The language of a document (the chunks sharing a MetaURL) is
// detected once, from the start of its first chunks; a chunk gets its own
// detection only when its script class differs from the document's (a
// Japanese manual's English appendix), so a manual costs one trigram
// detection and a script count per chunk. A chunk whose language cannot be
// told gets its document's; a document whose language cannot be told
// leaves its chunks without the key.
func annotateLanguages(docs []*ai.Document) {
	type group struct {
		sample []byte
		lang   string
		done   bool
	}
	groups := map[string]*group{}
	var order []*group
	byDoc := make([]*group, len(docs))
	for i, d := range docs {
		if d == nil {
			continue
		}
		u := metaString(d.Metadata, MetaURL)
		g := groups[u]
		if g == nil {
			g = &group{}
			groups[u] = g
			order = append(order, g)
		}
		byDoc[i] = g
		if len(g.sample) < languageSampleBytes {
			t := DocText(d)
			g.sample = append(g.sample, t[:min(len(t), languageSampleBytes-len(g.sample))]...)
			g.sample = append(g.sample, '\n')
		}
	}
	for _, g := range order {
		g.lang = detectLanguage(string(g.sample))
		g.sample = nil
	}
	for i, d := range docs {
		if d == nil || byDoc[i] == nil {
			continue
		}
		if _, ok := d.Metadata[metaLanguage]; ok {
			continue
		}
		lang := byDoc[i].lang
		t := DocText(d)
		if cjk := countScripts(languageSample(t)).cjkDominant(); cjk != cjkLanguage(lang) {
			if own := detectLanguage(t); own != "" {
				lang = own
			}
		}
		if lang == "" {
			continue
		}
		if d.Metadata == nil {
			d.Metadata = map[string]any{}
		}
		d.Metadata[metaLanguage] = lang
	}
}

// languageSample returns the first languageSampleBytes of text, cut at a
// character boundary.
func languageSample(text string) string {
	if len(text) <= languageSampleBytes {
		return text
	}
	cut := languageSampleBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// scriptCounts counts the letters of a text by script.
type scriptCounts struct {
	han, kana, hangul int
	letters           int // letters of every other script
}

func countScripts(text string) scriptCounts {
	var c scriptCounts
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
				c.letters++
			}
		case unicode.Is(unicode.Hangul, r):
			c.hangul++
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			c.kana++
		case unicode.Is(unicode.Han, r):
			c.han++
		case unicode.IsLetter(r):
			c.letters++
		}
	}
	return c
}

// cjkDominant reports whether CJK characters carry at least half of the
// letters, one CJK character counting as three letters (a word's worth):
// a Japanese sentence naming max_log_file_size is Japanese.
func (c scriptCounts) cjkDominant() bool {
	w := 3 * (c.han + c.kana + c.hangul)
	return w > 0 && w >= c.letters
}

// keywordLanguageFor returns the keyword language a store whose language
// follows its documents (SQLiteOptions.KeywordLanguage and
// PgvecOptions.TextSearchConfig empty for a new store, LocalvecStore without
// LocalvecOptions.KeywordLanguage) uses for chunks whose metaLanguage values are counted
// in counts (code -> chunks; the count of "" is ignored):
// "english" (English stems) when English is the most common language (a
// tie included) or none is known, else "simple" (no stemming), whatever
// the language.
//
// Measured on the dev sets (docs/retrieval.md, "Stemming"): no stemming
// ranks at least as well as English stems on every non-English set, and the
// language's own Snowball stemmer (german, french) ranked below both; the
// sets' questions repeat the page's words as written.
func keywordLanguageFor(counts map[string]int) string {
	most := 0
	for code, n := range counts {
		if code != "" {
			most = max(most, n)
		}
	}
	if most == 0 || counts["en"] == most {
		return defaultTextSearchLanguage
	}
	return "simple"
}

// analyzerForLanguages returns the shared analyzer keywordLanguageFor
// chooses for counts (the stores that keep no record of a choice:
// LocalvecStore, LocalvecKeywordSearch).
func analyzerForLanguages(counts map[string]int) *textAnalyzer {
	an, err := sharedAnalyzer(keywordLanguageFor(counts))
	if err != nil { // keywordLanguageFor gives only known names
		return localvecDefaultAnalyzer
	}
	return an
}

// documentLanguage returns the metaLanguage value of d ("" when it has
// none).
func documentLanguage(d *ai.Document) string {
	if d == nil {
		return ""
	}
	return metaString(d.Metadata, metaLanguage)
}
