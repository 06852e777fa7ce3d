package engine

import (
	"slices"
	"strings"
)

// topicMaxTerms caps the topic words carried from turn to turn, so a long
// conversation does not drown the follow-up in old words.
const topicMaxTerms = 8

// defaultTopicMinTerms is the number of content words a follow-up needs to
// count as a question of its own in TopicStandaloneQuestion: with fewer it
// is read as continuing the conversation's topic.
const defaultTopicMinTerms = 4

// TopicStandaloneQuestion is a retrieval query for a follow-up without a
// language model that keeps the conversation's topic over several turns,
// unlike FallbackStandaloneQuestion, which only prepends the previous
// question (and so loses the topic when that question was itself a short
// follow-up: "and how do I activate it?").
//
// It walks the questions of history, oldest first, then question. A
// question with at least minTerms content words (ExtractKeywords with
// QuestionStopWords) starts a new topic of those words; one with fewer
// continues the current topic, adding its own words to it (at most the
// 8 most recent words are kept). The result is question preceded by the
// topic words it does not contain itself, or question unchanged when it
// starts a topic or history has none. minTerms <= 0 means 4.
func TopicStandaloneQuestion(question string, history []QATurn, minTerms int) string {
	if minTerms <= 0 {
		minTerms = defaultTopicMinTerms
	}
	stop := QuestionStopWords()
	var topic []string
	step := func(q string) (carried []string) {
		own := ExtractKeywords(q, stop)
		if len(own) >= minTerms || len(topic) == 0 {
			topic = own
			if len(topic) > topicMaxTerms {
				topic = topic[len(topic)-topicMaxTerms:]
			}
			return nil
		}
		for _, t := range topic {
			if !slices.Contains(own, t) {
				carried = append(carried, t)
			}
		}
		topic = append(carried, own...)
		if len(topic) > topicMaxTerms {
			topic = topic[len(topic)-topicMaxTerms:]
		}
		return carried
	}
	for _, t := range history {
		if q := strings.TrimSpace(t.Question); q != "" {
			step(q)
		}
	}
	question = strings.TrimSpace(question)
	carried := step(question)
	if len(carried) == 0 {
		return question
	}
	return strings.Join(carried, " ") + " " + question
}
