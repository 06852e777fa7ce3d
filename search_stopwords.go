package engine

import "strings"

// questionStopWords is the word list of QuestionStopWords.
const questionStopWords = `
a about above after again all also am an and any are as at be because been before being below between both
but by can cannot could did do does doing done down during each either else ever every few for from further
get gets getting give go goes had has have having he her here hers him his how however i if in into is it its
itself just least less let like may me might more most much must my need no nor not now of off on once only or
other our out over own per please same shall she should so some such than that the their them then there these
they this those through to too under until up upon us use used using very via was way we were what when where
whether which while who whom whose why will with within without would yes yet you your
tell show explain describe find want know mean means
der die das den dem des ein eine einen einem einer eines und oder aber auch als am an auf aus bei bin bis da
dass du er es für hat habe haben ich ihr im in ist ja kann können man mit nach nicht noch nur ob sie sind so
über um von vor war was welche welcher welches wenn wer wie wir wird wo zu zum zur
`

// QuestionStopWords returns the English and German question words and
// function words ("how", "does", "the", "wie", "der", ...) that keyword
// search should leave out of a question, so that "how do I ..." does not
// match every chunk containing "do". Pass it as the stopWords argument of
// KeywordSearch, KeywordSearchSQL or LocalvecKeywordSearch. The reference
// CLI uses it. Each call returns a new map the caller may change.
func QuestionStopWords() map[string]bool {
	words := strings.Fields(questionStopWords)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
