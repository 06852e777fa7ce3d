package main

// This file is the one place where serve touches the engine's app blocks
// whose signatures are being aligned with the original engine (JobStore,
// FeedbackStore, the conversation helpers, NewRandomHexID): the rest of
// serve goes through these small functions.

import (
	"context"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// newID returns a random 128-bit hex ID (feedback entries, sessions, CSRF
// tokens, upload directories).
func newID() string { return askyourdocs.NewRandomHexID() }

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
	Started  time.Time
}

// viewJob converts an engine Job.
func viewJob(j askyourdocs.Job) jobView {
	return jobView{ID: j.ID, Kind: j.Kind, Status: string(j.Status), Progress: j.Progress, Result: j.Result,
		Error: j.Error, Finished: j.Status.Finished(), Started: j.CreatedAt}
}

// newJobs returns the server's job store.
func newJobs() *askyourdocs.JobStore { return askyourdocs.NewJobStore(nil) }

// listJobs returns the newest limit jobs, newest first.
func listJobs(jobs *askyourdocs.JobStore, limit int) []jobView {
	all := jobs.List()
	out := make([]jobView, 0, min(limit, len(all)))
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, viewJob(all[i]))
	}
	return out
}

// getJob returns one job.
func getJob(jobs *askyourdocs.JobStore, id string) (jobView, bool) {
	j, ok := jobs.Get(id)
	if !ok {
		return jobView{}, false
	}
	return viewJob(j), true
}

// runFlowAsJob runs a progress flow as a job of the given kind with the
// server's long-lived ctx and returns the job's ID.
func runFlowAsJob[In, Out any](ctx context.Context, jobs *askyourdocs.JobStore, kind string, flow *core.Flow[In, Out, string], in In) (string, error) {
	return askyourdocs.RunStreamingFlowAsJob(ctx, jobs, kind, flow, in), nil
}

// Feedback ratings as serve stores and accepts them.
const (
	ratingUp   = "up"
	ratingDown = "down"
)

// feedbackLog is the FeedbackStore of serve's entries.
type feedbackLog = askyourdocs.FeedbackStore[feedbackEntry]

// openFeedback opens (or prepares) the feedback log at path.
func openFeedback(path string) (*feedbackLog, error) {
	return askyourdocs.NewFeedbackStore(path,
		func(e feedbackEntry) string { return e.ID },
		func(e *feedbackEntry, rating int) {
			switch rating {
			case askyourdocs.RatingUp:
				e.Rating = ratingUp
			case askyourdocs.RatingDown:
				e.Rating = ratingDown
			default:
				e.Rating = ""
			}
		})
}

// rateFeedback stores "up" or "down" for the entry id.
func rateFeedback(fb *feedbackLog, id, rating string) error {
	r := askyourdocs.RatingDown
	if rating == ratingUp {
		r = askyourdocs.RatingUp
	}
	return fb.Rate(id, r)
}

// feedbackEntries returns every logged entry.
func feedbackEntries(fb *feedbackLog) ([]feedbackEntry, error) { return fb.Entries(), nil }

// Conversation limits: the turns and characters of history a follow-up
// is condensed with.
const (
	historyMaxTurns = 6
	historyMaxChars = 6000
)

// trimHistory keeps the recent turns a follow-up needs.
func trimHistory(h []askyourdocs.QATurn) []askyourdocs.QATurn {
	return askyourdocs.TrimHistory(h, historyMaxTurns, historyMaxChars)
}

// condenseFollowUp rewrites a follow-up into a standalone question with
// the LLM, falling back to the engine's fallback question.
func condenseFollowUp(ctx context.Context, p ai.Prompt, m ai.Model, cfg any, question string, h []askyourdocs.QATurn) string {
	return askyourdocs.CondenseFollowUp(ctx, p, m, cfg, h, question, askyourdocs.WithLanguage("en"))
}

// fallbackQuestion is the retrieval query for a follow-up without an LLM.
func fallbackQuestion(question string, h []askyourdocs.QATurn) string {
	return askyourdocs.FallbackStandaloneQuestion(h, question)
}

// excerptMaxChars caps a citation's excerpt.
const excerptMaxChars = 240

// bestExcerpt is the short verbatim quote of a citation: the part of the
// passage that best matches the answer (an LLM's answer) or the question
// (an extractive answer).
func bestExcerpt(passage, match string) string {
	return askyourdocs.BestExcerpt(passage, match, excerptMaxChars)
}
