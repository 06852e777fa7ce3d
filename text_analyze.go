package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	snowball "github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/arabic"
	"github.com/blevesearch/snowballstem/danish"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/finnish"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/hungarian"
	"github.com/blevesearch/snowballstem/irish"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/norwegian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/romanian"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
	"github.com/blevesearch/snowballstem/swedish"
	"github.com/blevesearch/snowballstem/tamil"
	"github.com/blevesearch/snowballstem/turkish"
)

// defaultTextSearchLanguage is the language LocalvecStore's keyword ranking
// uses unless LocalvecOptions.KeywordLanguage sets another.
const defaultTextSearchLanguage = "english"

// textStemmers maps the language names newTextAnalyzer accepts (Postgres'
// text search configuration names) to their Snowball stemmers.
var textStemmers = map[string]func(*snowball.Env) bool{
	"arabic": arabic.Stem, "danish": danish.Stem, "dutch": dutch.Stem, "english": english.Stem,
	"finnish": finnish.Stem, "french": french.Stem, "german": german.Stem, "hungarian": hungarian.Stem,
	"irish": irish.Stem, "italian": italian.Stem, "norwegian": norwegian.Stem, "portuguese": portuguese.Stem,
	"romanian": romanian.Stem, "russian": russian.Stem, "spanish": spanish.Stem, "swedish": swedish.Stem,
	"tamil": tamil.Stem, "turkish": turkish.Stem,
}

// textSearchLanguages returns the language names newTextAnalyzer accepts,
// sorted: "simple" (no stemming) and every language with a Snowball stemmer.
func textSearchLanguages() []string {
	out := []string{"simple"}
	for l := range textStemmers {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// textStemCacheMax bounds the number of stems a textAnalyzer remembers.
const textStemCacheMax = 1 << 18

// textAnalyzer turns text into the terms that keyword ranking indexes and
// queries: lower-cased words, stemmed by the Snowball stemmer of its
// language, and symbol tokens. It is safe for concurrent use.
//
// Text is NFKC-normalised first. A run of Han, kana or Hangul characters
// gives its overlapping bigrams (cjkBigrams). A word is a maximal run of
// other Unicode letters, digits and combining marks;
// single letters ("C", "R") and numbers are kept, and a word directly
// followed by "++" or "#" keeps them ("c++", "c#"). Only words of letters
// alone are stemmed. A symbol token is a maximal run of the operator
// characters + - * / % = < > ! & | ^ ~ @ $ \ (as in "-22 // 10" or "->"),
// except a single - or / joining two words ("e-mail", "and/or"), which
// separates them. Other punctuation separates tokens and is dropped.
// Identifiers ("max_log_file_size", "filepath.Join", "--allow-private",
// "HashMap") give their parts and, as one more term, the whole
// (text_analyze_ident.go).
type textAnalyzer struct {
	lang  string
	stem  func(*snowball.Env) bool
	cache sync.Map // word -> stem
	size  atomic.Int64
}

// newTextAnalyzer returns the analyzer of language: "simple" (no
// stemming) or one of textSearchLanguages, case-insensitive, with or
// without Postgres' "pg_catalog." prefix; "" means
// defaultTextSearchLanguage. Any other name is an error wrapping
// ErrUnknownLanguage.
func newTextAnalyzer(language string) (*textAnalyzer, error) {
	l := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(language)), "pg_catalog.")
	if l == "" {
		l = defaultTextSearchLanguage
	}
	if l == "simple" {
		return &textAnalyzer{lang: l}, nil
	}
	stem, ok := textStemmers[l]
	if !ok {
		return nil, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownLanguage, language, strings.Join(textSearchLanguages(), ", "))
	}
	return &textAnalyzer{lang: l, stem: stem}, nil
}

// sharedAnalyzers caches one textAnalyzer per language name (with its
// stem cache) for every store and the SQLite terms function.
var sharedAnalyzers sync.Map

// sharedAnalyzer returns the shared analyzer of language ("" means
// defaultTextSearchLanguage).
func sharedAnalyzer(language string) (*textAnalyzer, error) {
	if a, ok := sharedAnalyzers.Load(language); ok {
		return a.(*textAnalyzer), nil
	}
	an, err := newTextAnalyzer(language)
	if err != nil {
		return nil, err
	}
	if an.language() == localvecDefaultAnalyzer.language() {
		an = localvecDefaultAnalyzer // share its stem cache
	}
	a, _ := sharedAnalyzers.LoadOrStore(language, an)
	return a.(*textAnalyzer), nil
}

// language returns the analyzer's language name ("simple", "english", ...).
func (a *textAnalyzer) language() string { return a.lang }

// terms returns the terms of text in order, repeats included.
func (a *textAnalyzer) terms(text string) []string {
	var out []string
	a.tokens(text, func(_, term string) { out = append(out, term) })
	return out
}

// isTextOperator reports whether r is one of the characters symbol tokens
// are made of.
func isTextOperator(r rune) bool {
	return strings.ContainsRune(`+-*/%=<>!&|^~@$\`, r)
}

// isTextWordRune reports whether r belongs to a word (of a language
// written with spaces: CJK characters are not word runes, isCJKRune).
func isTextWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) && !isCJKRune(r)
}

// isCJKRune reports whether r belongs to a script written without spaces
// between words, which the analyzer cuts into overlapping bigrams: Han
// (kanji, hanzi, hanja), Hiragana, Katakana with its prolonged sound mark
// "ー", and Hangul.
func isCJKRune(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return r == 0x30FC || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// cjkJoinable reports whether a line break next to r joins without a
// space: Chinese and Japanese characters (Han, kana) and their
// punctuation and full-width forms, written without spaces. Hangul is not:
// Korean puts spaces between words, and a line break is one of them.
func cjkJoinable(r rune) bool {
	switch {
	case r < 0x3000:
		return false
	case r <= 0x303F, r >= 0xFF01 && r <= 0xFF60:
		return true
	}
	return isCJKRune(r) && !unicode.Is(unicode.Hangul, r)
}

// cjkKeywords returns keywords (lower-case words, as ExtractKeywords gives
// them) with each word that holds CJK characters replaced by the bigrams
// of its CJK runs (cjkBigrams; a lone character is left out) and its other
// runs of three letters or more, every term once. A Chinese or Japanese
// question's keyword is a whole clause, which no text holds as it is; its
// bigrams are what the excerpt and confidence rules look for.
func cjkKeywords(keywords []string) []string {
	out := make([]string, 0, len(keywords))
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, w := range keywords {
		if !strings.ContainsFunc(w, isCJKRune) {
			add(w)
			continue
		}
		for len(w) > 0 {
			cjk := isCJKRune(firstRune(w))
			end := strings.IndexFunc(w, func(r rune) bool { return isCJKRune(r) != cjk })
			if end < 0 {
				end = len(w)
			}
			part := w[:end]
			w = w[end:]
			switch n := utf8.RuneCountInString(part); {
			case cjk && n >= 2:
				// Bigrams of hiragana alone are Japanese grammar (particles,
				// endings: "ます", "すか"), unless the run has nothing else.
				kanaOnly := !strings.ContainsFunc(part, func(r rune) bool { return !unicode.Is(unicode.Hiragana, r) })
				cjkBigrams(part, func(bg, _ string, _ bool) {
					if kanaOnly || strings.ContainsFunc(bg, func(r rune) bool { return !unicode.Is(unicode.Hiragana, r) }) {
						add(bg)
					}
				})
			case !cjk && n >= 3:
				add(part)
			}
		}
	}
	return out
}

// textNFKC returns text in Unicode normalization form NFKC: full-width
// "ＡＢＣ１２３" reads "ABC123", half-width kana full-width, the ligature
// "ﬁ" "fi". ASCII text and text already in NFKC are returned as they are,
// without a copy.
func textNFKC(text string) string {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			// From the ASCII character before: a combining mark composes
			// with it.
			i = max(i-1, 0)
			if norm.NFKC.IsNormalString(text[i:]) {
				return text
			}
			return text[:i] + norm.NFKC.String(text[i:])
		}
	}
	return text
}

// cjkBigrams calls fn with the terms of run, a run of CJK characters
// (isCJKRune): every two adjacent characters as one term ("受験者数" gives
// "受験", "験者", "者数"), or the character itself when the run has one, as
// Lucene's CJKBigramFilter does. Any substring of two characters or more of
// a text is then a run of its terms, so a query matches inside a longer
// clause. The terms count as extra (no word pairs are formed from them:
// the overlapping bigrams hold the adjacency already).
func cjkBigrams(run string, fn func(word, term string, extra bool)) {
	_, first := utf8.DecodeRuneInString(run)
	if first == len(run) {
		fn(run, run, true)
		return
	}
	for i := 0; i+first < len(run); {
		_, second := utf8.DecodeRuneInString(run[i+first:])
		bg := run[i : i+first+second]
		fn(bg, bg, true)
		i += first
		first = second
	}
}

// tokens calls fn for every token of text with the lower-cased surface
// word and its term (the stem, for a stemmed word; else the word), the
// extra terms of identifiers included (tokenize).
func (a *textAnalyzer) tokens(text string, fn func(word, term string)) {
	a.tokenize(text, func(word, term string, _ bool) { fn(word, term) })
}

// tokenize calls fn for every token of text with the lower-cased surface
// word, its term (the stem, for a stemmed word; else the word) and
// whether it is an extra term of an identifier (a whole identifier after
// its parts, or a CamelCase word's parts after the word; see
// text_analyze_ident.go). Term pairs are formed from the other tokens.
// Text is analysed in NFKC (textNFKC), and a run of CJK characters gives
// its bigrams (cjkBigrams, extra terms).
func (a *textAnalyzer) tokenize(text string, fn func(word, term string, extra bool)) {
	var env *snowball.Env
	text = textNFKC(text)
	lower := strings.ToLower(text)
	camel := len(lower) == len(text) // byte offsets agree: the case of text is at hand
	prevWord := false                // the rune before i ended a word
	identStart, identEnd := 0, 0     // the identifier whose whole term is due at identEnd
	for i := 0; i < len(lower); {
		if identEnd > 0 && i >= identEnd {
			env = a.identTerms(lower[identStart:identEnd], env, fn)
			identEnd = 0
		}
		r, size := utf8.DecodeRuneInString(lower[i:])
		switch {
		case isCJKRune(r):
			j := textRunEnd(lower, i+size, isCJKRune)
			cjkBigrams(lower[i:j], fn)
			i, prevWord = j, false
		case isTextWordRune(r):
			if identEnd == 0 {
				if s, e, ok := textIdentSpan(lower, i); ok {
					identStart, identEnd = s, e
				}
			}
			j := i + size
			letters := unicode.IsLetter(r)
			for j < len(lower) {
				r2, s2 := utf8.DecodeRuneInString(lower[j:])
				if !isTextWordRune(r2) {
					break
				}
				letters = letters && (unicode.IsLetter(r2) || unicode.Is(unicode.Mn, r2))
				j += s2
			}
			word := lower[i:j]
			if rest := lower[j:]; strings.HasPrefix(rest, "++") || strings.HasPrefix(rest, "#") {
				suffix := "#"
				if rest[0] == '+' {
					suffix = "++"
				}
				if after := rest[len(suffix):]; after == "" || !isTextWordRune(firstRune(after)) {
					fn(word+suffix, word+suffix, false)
					i, prevWord = j+len(suffix), false
					continue
				}
			}
			term := word
			if a.stem != nil && letters && j-i > 2 {
				term, env = a.stemWord(word, env)
			}
			fn(word, term, false)
			if camel {
				textCamelParts(text[i:j], func(part string) {
					pw := strings.ToLower(part)
					pt := pw
					if a.stem != nil && len(pw) > 2 && textASCIILetters(pw) {
						pt, env = a.stemWord(pw, env)
					}
					fn(pw, pt, true)
				})
			}
			i, prevWord = j, true
		case isTextOperator(r):
			j := textRunEnd(lower, i+size, isTextOperator)
			sym := lower[i:j]
			joiner := prevWord && (sym == "-" || sym == "/") && j < len(lower) && isTextWordRune(firstRune(lower[j:]))
			if !joiner {
				fn(sym, sym, false)
			}
			i, prevWord = j, false
		default:
			i, prevWord = i+size, false
		}
	}
	if identEnd > 0 {
		a.identTerms(lower[identStart:identEnd], env, fn)
	}
}

// textASCIILetters reports whether s holds ASCII letters only.
func textASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// firstRune returns the first rune of s.
func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// stemWord returns the stem of word, from the cache or computed with env
// (created when nil and returned for reuse).
func (a *textAnalyzer) stemWord(word string, env *snowball.Env) (string, *snowball.Env) {
	if s, ok := a.cache.Load(word); ok {
		return s.(string), env
	}
	if env == nil {
		env = snowball.NewEnv(word)
	} else {
		env.SetCurrent(word)
	}
	a.stem(env)
	s := env.Current()
	if a.size.Load() < textStemCacheMax {
		if _, loaded := a.cache.LoadOrStore(strings.Clone(word), s); !loaded {
			a.size.Add(1)
		}
	}
	return s, env
}
