package engine

import (
	"maps"
	"slices"
	"strings"
)

// questionStopWordsEnglish are the English question and function words of
// QuestionStopWords.
const questionStopWordsEnglish = `
a about above after again all also am an and any are as at be because been before being below between both
but by can cannot could did do does doing done down during each either else ever every few for from further
get gets getting give go goes had has have having he her here hers him his how however i if in into is it its
itself just least less let like may me might more most much must my need no nor not now of off on once only or
other our out over own per please same shall she should so some such than that the their them then there these
they this those through to too under until up upon us use used using very via was way we were what when where
whether which while who whom whose why will with within without would yes yet you your
tell show explain describe find want know mean means
`

// questionStopWordsGerman are the German ones.
const questionStopWordsGerman = `
der die das den dem des ein eine einen einem einer eines und oder aber auch als am an auf aus bei bin bis da
dass du er es für hat habe haben ich ihr im in ist ja kann können man mit nach nicht noch nur ob sie sind so
über um von vor war was welche welcher welches wenn wer wie wir wird wo zu zum zur
`

// stopWordLanguage is a language whose stop words count only in an index
// that holds text of that language: its words that are not English stop
// words, and marker, a function word nearly every paragraph of the
// language holds and other languages' text does not.
type stopWordLanguage struct {
	code   string
	marker string
	words  map[string]bool
}

// stopWordMarkerShare is the share of an index's chunks that must hold a
// language's marker for that language's stop words to count: a German
// manual's chunks nearly all hold "und", an English manual's almost none.
const stopWordMarkerShare = 0.005

// stopWordLanguages are the languages of QuestionStopWords beside English,
// in a fixed order: their words are stop words only where the index holds
// the language ("des" is a German article and OpenSSL's DES cipher, "man"
// German's "one" and the Unix manual). A French list gated the same way
// lost on the French dev set (docs/retrieval.md), so there is none.
var stopWordLanguages = func() []stopWordLanguage {
	english := stopWordSet(questionStopWordsEnglish)
	var out []stopWordLanguage
	for _, l := range []struct{ code, marker, words string }{
		{"de", "und", questionStopWordsGerman},
	} {
		words := stopWordSet(l.words)
		maps.DeleteFunc(words, func(w string, _ bool) bool { return english[w] })
		out = append(out, stopWordLanguage{code: l.code, marker: l.marker, words: words})
	}
	return out
}()

// stopWordSet returns the words of list as a set.
func stopWordSet(list string) map[string]bool {
	words := strings.Fields(list)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// QuestionStopWords returns the English and German question words and
// function words ("how", "does", "the", "wie", "der", ...) that keyword
// search should leave out of a question, so that "how do I ..." does not
// match every chunk containing "do". Pass it as the stopWords argument of
// KeywordSearch, KeywordSearchSQL or LocalvecKeywordSearch. The reference
// CLI uses it. Each call returns a new map the caller may change.
//
// The keyword ranking of every store applies the German words (those that
// are not English stop words too) only when its index holds German text,
// told by how many chunks hold "und": in an English manual "des" (the DES
// cipher) and "man" are content. ExtractKeywords and PgvecStore's
// tsvector stages take the list as given.
func QuestionStopWords() map[string]bool {
	m := stopWordSet(questionStopWordsEnglish)
	maps.Copy(m, stopWordSet(questionStopWordsGerman))
	return m
}

// noteLanguageStop records word, a stop-listed word of the query, in
// p.langStops when it is a stop word of stopWordLanguages only.
func (p *bm25Plan) noteLanguageStop(word string) {
	var mask uint8
	for i, l := range stopWordLanguages {
		if l.words[word] {
			mask |= 1 << i
		}
	}
	if mask == 0 {
		return
	}
	if p.langStops == nil {
		p.langStops = map[string]uint8{}
	}
	p.langStops[word] = mask
}

// languageMarkers returns the terms of the markers of the languages in
// mask, in stopWordLanguages' order.
func (p bm25Plan) languageMarkers(mask uint8) []string {
	var out []string
	for i, l := range stopWordLanguages {
		if mask&(1<<i) != 0 {
			if ts := p.an.terms(l.marker); len(ts) > 0 {
				out = append(out, ts[0])
			}
		}
	}
	return out
}

// statTerms returns the terms whose document frequencies keepStopWords
// reads: the plan's stop-listed terms, then the markers of the languages
// its language-only stop words belong to.
func (p bm25Plan) statTerms() []string {
	var mask uint8
	for _, m := range p.langStops {
		mask |= m
	}
	out := slices.Clone(p.stops)
	for _, t := range p.languageMarkers(mask) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// dropForeignStops makes p again without the stop words of languages the
// index does not hold: a language is held when at least
// stopWordMarkerShare of the n chunks (and at least one) hold its marker.
// A word of several languages stays a stop word when one is held.
func (p *bm25Plan) dropForeignStops(n int, df func(term string) int) {
	if len(p.langStops) == 0 || n <= 0 {
		return
	}
	held := map[string]bool{}
	var content []string
	for w, mask := range p.langStops {
		keep := false
		for _, t := range p.languageMarkers(mask) {
			h, ok := held[t]
			if !ok {
				d := df(t)
				h = d > 0 && float64(d) >= stopWordMarkerShare*float64(n)
				held[t] = h
			}
			keep = keep || h
		}
		if !keep {
			content = append(content, w)
		}
	}
	p.langStops = nil
	if len(content) == 0 {
		return
	}
	sw := maps.Clone(p.stopWords)
	for _, w := range content {
		delete(sw, w)
	}
	q := newBM25Plan(p.an, p.query, sw)
	q.langStops = nil
	q.freed = len(content)
	*p = q
}
