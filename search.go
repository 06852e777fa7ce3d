package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
)

// quotePairs maps each opening quotation mark ExtractQuotedPhrases knows to
// the closing marks it accepts: ASCII "..." and '...', German „...“ (also
// closed by ” or ") and ‚...‘, English “...” and ‘...’, and guillemets
// «...» and »...«.
var quotePairs = map[rune]string{
	'"':      `"`,
	'„':      `“”"`,
	'“':      `”“`,
	'«':      `»`,
	'»':      `«`,
	'\'':     `'`,
	'\u2018': "\u2019\u2018", // ‘...’
	'\u201A': "\u2018\u2019", // ‚...‘
	'「':      "」",            // Japanese and Chinese corner brackets
	'『':      "』",
	'〝':      "〟〞",
}

// singleQuotes are the marks that double as apostrophes ("don't",
// "Peter's"): they open a phrase only at the start of a word and close it
// only at the end of one.
const singleQuotes = "'\u2018\u2019\u201A"

// ExtractQuotedPhrases returns the phrases enclosed in quotation marks in
// text, lower-cased, in order of appearance: ASCII "..." and '...', German
// „...“ and ‚...‘, English “...” and ‘...’, guillemets «...» or »...«,
// and the CJK corner brackets 「...」 and 『...』 (and 〝...〟).
// A phrase is the text between an opening mark and the first closing mark
// that matches it, with runs of white space collapsed to one space and
// trimmed. A single quote counts only at a word boundary (before the
// phrase's first word, after its last), so apostrophes ("don't", "o'neil")
// are not quotes. Empty phrases and an opening mark without a closing one
// are ignored; a phrase quoted twice is returned once. It returns nil when
// text contains no phrase.
func ExtractQuotedPhrases(text string) []string {
	phrases, _ := splitQuoted(text)
	return phrases
}

// isWordRune reports whether r is part of a word for the single-quote
// boundary rule.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// quoteCloser returns the byte offset in inner of the first mark closing a
// phrase opened by a mark with the given closers, or -1.
func quoteCloser(inner, closers string, single bool) int {
	for j, c := range inner {
		if !strings.ContainsRune(closers, c) {
			continue
		}
		if single {
			next, _ := utf8.DecodeRuneInString(inner[j+utf8.RuneLen(c):])
			if next != utf8.RuneError && isWordRune(next) {
				continue // an apostrophe inside a word
			}
		}
		return j
	}
	return -1
}

// splitQuoted returns the quoted phrases of text (as ExtractQuotedPhrases)
// and text with the quoted parts, marks included, replaced by a space.
func splitQuoted(text string) (phrases []string, rest string) {
	var b strings.Builder
	seen := make(map[string]bool)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		closers, isOpener := quotePairs[r]
		single := strings.ContainsRune(singleQuotes, r)
		if isOpener && single {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			// An opening single quote follows no word and precedes one.
			isOpener = (i == 0 || !isWordRune(prev)) && isWordRune(next)
		}
		if !isOpener {
			b.WriteString(text[i : i+size])
			i += size
			continue
		}
		inner := text[i+size:]
		end := quoteCloser(inner, closers, single)
		if end < 0 {
			// Unclosed: the mark is not a quote; keep the rest as words.
			b.WriteByte(' ')
			i += size
			continue
		}
		if p := strings.ToLower(strings.Join(strings.Fields(inner[:end]), " ")); p != "" && !seen[p] {
			seen[p] = true
			phrases = append(phrases, p)
		}
		_, csize := utf8.DecodeRuneInString(inner[end:])
		b.WriteByte(' ')
		i += size + end + csize
	}
	return phrases, b.String()
}

// keywordMinRunes is the shortest word ExtractKeywords keeps
// (docs/compat.md): shorter words ("an", "im", "of") match almost every
// chunk as substrings.
const keywordMinRunes = 3

// ExtractKeywords returns the keywords of text: its words lower-cased, in
// order of first appearance, each once, without the words in stopWords.
//
// A word is a maximal run of Unicode letters, digits and combining marks;
// everything else (spaces, punctuation, hyphens, apostrophes, SQL or regular
// expression metacharacters such as % _ ' \ * ?) separates words, so
// "E-Mail-Adresse" gives "mail" and "adresse" and "100%" gives "100".
// Words shorter than three runes are dropped, but for a word of Han, kana
// or Hangul characters two are enough ("密码", "設定": such scripts write
// many words in two characters). stopWords holds lower-case words
// to drop (a nil map drops none); the caller chooses the language, for
// example German articles plus its own meta-query words such as "finde".
// It returns nil when no keyword is left.
func ExtractKeywords(text string, stopWords map[string]bool) []string {
	var out []string
	seen := make(map[string]bool)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
	for _, w := range words {
		n := utf8.RuneCountInString(w)
		if n < keywordMinRunes && (n < 2 || !isCJKRune(firstRune(w))) || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Long keywords are also searched by a prefix of keywordPrefixRunes runes so
// that inflected forms match ("Rechnungen" finds "Rechnung", "Protokolls"
// finds "Protokoll"): a bridge over inflections a stemmer would miss.
const (
	keywordPrefixMinRunes = 8
	keywordPrefixRunes    = 7
)

// keywordPlan is the analysis of a keyword query shared by both backends'
// three-stage search (LocalvecKeywordSearch and KeywordSearchSQL):
//
//  1. phrases: quoted phrases, matched exactly as case-insensitive
//     substrings (ILIKE '%phrase%'); a match always ranks first;
//  2. prefixes: truncated prefixes of the long keywords, matched as
//     case-insensitive substrings (ILIKE '%prefix%');
//  3. keywords: all keywords outside the quotes, for substring or
//     full-text scoring of the rest.
//
// Words inside quotes are not keywords: quoting asks for that exact text.
// All strings are lower-case. A plan with no phrases and no keywords (a
// query of stop words or punctuation only) matches nothing.
type keywordPlan struct {
	phrases  []string
	prefixes []string
	keywords []string
}

// newKeywordPlan analyses query with the caller's stop words.
func newKeywordPlan(query string, stopWords map[string]bool) keywordPlan {
	phrases, rest := splitQuoted(query)
	var p keywordPlan
	for _, ph := range phrases {
		if lp := strings.ToLower(ph); !slices.Contains(p.phrases, lp) {
			p.phrases = append(p.phrases, lp)
		}
	}
	p.keywords = ExtractKeywords(rest, stopWords)
	for _, k := range p.keywords {
		if utf8.RuneCountInString(k) < keywordPrefixMinRunes {
			continue
		}
		pre := string([]rune(k)[:keywordPrefixRunes])
		if !slices.Contains(p.prefixes, pre) {
			p.prefixes = append(p.prefixes, pre)
		}
	}
	return p
}

// empty reports whether the plan can match nothing.
func (p keywordPlan) empty() bool { return len(p.phrases) == 0 && len(p.keywords) == 0 }

// keywordLikePattern returns the ILIKE pattern matching s anywhere in a text,
// with the LIKE metacharacters %, _ and the escape character \ in s escaped,
// so that s matches literally (for the default escape character \).
func keywordLikePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// keywordNormalize returns text lower-cased with runs of white space
// collapsed to one space, the form phrases are matched against.
func keywordNormalize(text string) string {
	lower := strings.ToLower(text)
	prevSpace := true // a leading space also needs normalising
	for _, r := range lower {
		if unicode.IsSpace(r) {
			if r != ' ' || prevSpace {
				return strings.Join(strings.Fields(lower), " ")
			}
			prevSpace = true
		} else {
			prevSpace = false
		}
	}
	if prevSpace && lower != "" {
		return strings.TrimRightFunc(lower, unicode.IsSpace)
	}
	return lower
}

// LocalvecKeywordSearch searches the documents of the localvec database file
// at dbPath (the __db_<name>.json file written by LocalvecStore or by
// Genkit's localvec plugin) for query, ranked in three stages: documents
// containing more of the query's quoted phrases first, then documents
// containing every other keyword, then documents containing any; within a
// stage by BM25F score over the terms a LocalvecStore of these documents
// ranks by (English stems, or no stemming when most documents carry
// another detected language: keywordLanguageFor; docs/retrieval.md,
// docs/api-reference.md). Words in stopWords are left
// out of the query unless the corpus makes them content. Results are
// deduplicated by text and capped at maxResults (no cap when <= 0).
//
// filter, when non-nil, keeps only documents whose metadata it accepts. A
// query of punctuation only returns no documents and no error. It reads
// the whole file and builds the index on every call; an app holding a
// LocalvecStore should call its KeywordSearch method instead. A missing
// file is an error wrapping fs.ErrNotExist.
func LocalvecKeywordSearch(dbPath string, query string, maxResults int, stopWords map[string]bool, filter func(meta map[string]any) bool) ([]*ai.Document, error) {
	f, err := os.Open(dbPath)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer f.Close()
	var data map[string]struct {
		Doc *ai.Document `json:"doc"`
	}
	if err := json.NewDecoder(f).Decode(&data); err != nil {
		return nil, fmt.Errorf("keyword search: parse %s: %w", dbPath, err)
	}
	ids := make([]string, 0, len(data))
	langs := map[string]int{}
	for id, v := range data {
		ids = append(ids, id)
		langs[documentLanguage(v.Doc)]++
	}
	an := analyzerForLanguages(langs)
	plan := newBM25Plan(an, query, stopWords)
	if plan.blank() {
		return nil, nil
	}
	slices.Sort(ids)
	docs := make([]*ai.Document, len(ids))
	for i, id := range ids {
		docs[i] = data[id].Doc
	}
	return newLocalvecBM25(an, docs).search(context.Background(), plan, docs, ids, maxResults, filter)
}

// keywordPatterns returns the ILIKE patterns (keywordLikePattern) of terms.
func keywordPatterns(terms []string) []string {
	out := make([]string, len(terms))
	for i, s := range terms {
		out[i] = keywordLikePattern(s)
	}
	return out
}
