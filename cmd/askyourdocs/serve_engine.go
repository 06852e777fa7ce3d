package main

// This file is the one place where serve touches the engine's app blocks
// whose signatures the spec fixes (docs/compat.md: JobStore,
// FeedbackStore, the conversation helpers, NewRandomHexID): the rest of
// serve goes through these small functions.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// newID returns a random 128-bit hex ID (feedback entries, sessions, CSRF
// tokens, upload directories).
func newID() string { return askyourdocs.NewRandomHexID(0) }

// jobView is what serve shows of a job, independent of the engine's Job
// layout.
type jobView struct {
	ID       string
	Kind     string
	Status   string
	Progress []string
	Result   any
	Error    string
	Finished bool
	Created  time.Time
}

// viewJob converts an engine Job. A durable store's result is JSON: an
// index or crawl job's is decoded back into its *indexReport.
func viewJob(j askyourdocs.Job) jobView {
	result := j.Result
	if raw, ok := result.(json.RawMessage); ok && (j.Kind == "index" || j.Kind == "crawl") {
		var rep indexReport
		if json.Unmarshal(raw, &rep) == nil {
			result = &rep
		}
	}
	return jobView{ID: j.ID, Kind: j.Kind, Status: string(j.Status), Progress: j.ProgressLog, Result: result,
		Error: j.Error, Finished: j.EndedAt != nil, Created: j.CreatedAt}
}

// listJobs returns the newest limit jobs, newest first.
func listJobs(jobs askyourdocs.JobQueue, limit int) []jobView {
	all := jobs.List(limit)
	out := make([]jobView, len(all))
	for i, j := range all {
		out[i] = viewJob(j)
	}
	return out
}

// getJob returns one job.
func getJob(jobs askyourdocs.JobQueue, id string) (jobView, bool) {
	j, ok := jobs.Get(id)
	if !ok {
		return jobView{}, false
	}
	return viewJob(j), true
}

// runFlowAsJob enqueues a job of the given kind (registered with
// handleFlowJobs for its flow, see handleJobKinds) on input in, and
// returns the job's ID; the error wraps ErrJobQueueFull when too many jobs
// are pending. Any serve process on the same job database may run it.
func runFlowAsJob[In any](ctx context.Context, jobs askyourdocs.JobQueue, kind string, in In) (string, error) {
	j, err := jobs.EnqueueInput(ctx, kind, in)
	if err != nil {
		return "", err
	}
	return j.ID, nil
}

// Feedback ratings as serve stores and accepts them.
const (
	ratingUp   = askyourdocs.RatingUp
	ratingDown = askyourdocs.RatingDown
)

// errFeedbackNotFound is returned by rateFeedback for an unknown ID.
var errFeedbackNotFound = errors.New("no logged answer with that id")

// feedbackLog is the feedback log as the handlers use it.
type feedbackLog = askyourdocs.FeedbackLog[feedbackEntry]

// rateFeedback stores "up" or "down" for the entry id.
func rateFeedback(fb feedbackLog, id, rating string) error {
	found, err := fb.Rate(id, rating)
	if err != nil {
		return err
	}
	if !found {
		return errFeedbackNotFound
	}
	return nil
}

// feedbackEntries returns every logged entry.
func feedbackEntries(fb feedbackLog) ([]feedbackEntry, error) { return fb.All() }

// historyMaxChars is the most characters of history a follow-up is
// condensed with (the turns are the library's default, 6).
const historyMaxChars = 6000

// trimHistory keeps the recent turns a follow-up needs.
func trimHistory(h []askyourdocs.QATurn) []askyourdocs.QATurn {
	return askyourdocs.TrimHistoryWithOptions(h, &askyourdocs.ConversationOptions{MaxChars: historyMaxChars})
}

// englishLabels are the conversation options of the CLI's English output.
var englishLabels = &askyourdocs.ConversationOptions{Labels: askyourdocs.EnglishLabels}

// condenseFollowUp rewrites a follow-up into a standalone question with
// the LLM (English speaker labels), falling back to the engine's fallback
// question.
func condenseFollowUp(ctx context.Context, p ai.Prompt, m ai.Model, cfg any, question string, h []askyourdocs.QATurn) string {
	return askyourdocs.CondenseFollowUpWithOptions(ctx, p, m, cfg, question, h, englishLabels)
}

// fallbackQuestion is the retrieval query for a follow-up without an LLM:
// the follow-up with the conversation's topic words when it has few of its
// own.
func fallbackQuestion(question string, h []askyourdocs.QATurn) string {
	return askyourdocs.TopicStandaloneQuestion(question, h, 0)
}
