package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// A long-running operation written once as a progress flow, run in the
// background by a JobStore and polled for its status.
func ExampleRunStreamingFlowAsJob() {
	ctx := context.Background()
	g := genkit.Init(ctx)

	type crawlIn struct{ Pages int }
	crawl := askyourdocs.DefineProgressFlow(g, "crawlWeb",
		func(ctx context.Context, in crawlIn, progress func(string)) (int, error) {
			for i := 1; i <= in.Pages; i++ {
				progress(fmt.Sprintf("page %d/%d", i, in.Pages))
			}
			return in.Pages, nil
		})

	jobs := askyourdocs.NewJobStore(nil) // starts the single background worker
	defer jobs.Close()

	// Enqueue with the app's long-lived context, not a request's.
	id := askyourdocs.RunStreamingFlowAsJob(ctx, jobs, "crawl", crawl, crawlIn{Pages: 3})

	// An HTTP handler would return id and let the client poll jobs.Get(id).
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	job, err := jobs.Wait(waitCtx, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(job.Status, job.Result)
	for _, msg := range job.Progress {
		fmt.Println(msg)
	}
	// Output:
	// done 3
	// page 1/3
	// page 2/3
	// page 3/3
}

// Plain functions can be enqueued too; jobs run one at a time, in order.
func ExampleJobStore() {
	jobs := askyourdocs.NewJobStore(&askyourdocs.JobStoreOptions{MaxHistory: 50})
	defer jobs.Close()

	id := jobs.Enqueue(context.Background(), "reindex", func(ctx context.Context, progress func(string)) (any, error) {
		progress("reindexing 2 documents")
		return "2 documents", nil
	})
	job, _ := jobs.Wait(context.Background(), id)
	fmt.Println(job.Kind, job.Status, job.Result, job.Progress)
	// Output:
	// reindex done 2 documents [reindexing 2 documents]
}

// An app logs every answered question with its own entry type and lets users
// rate answers later; the file doubles as an eval dataset source.
func ExampleFeedbackStore() {
	type entry struct {
		ID       string `json:"id"`
		Question string `json:"question"`
		Answer   string `json:"answer"`
		Thumbs   string `json:"thumbs,omitempty"`
	}
	dir, err := os.MkdirTemp("", "feedback")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	log, err := askyourdocs.NewFeedbackStore(filepath.Join(dir, "feedback.json"),
		func(e entry) string { return e.ID },
		func(e *entry, rating int) {
			e.Thumbs = map[int]string{askyourdocs.RatingUp: "up", askyourdocs.RatingDown: "down"}[rating]
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	id := askyourdocs.NewRandomHexID()
	if err := log.Append(entry{ID: id, Question: "Who signs the form?", Answer: "The dean."}); err != nil {
		fmt.Println(err)
		return
	}
	if err := log.Rate(id, askyourdocs.RatingUp); err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range log.Entries() {
		fmt.Println(e.Question, e.Thumbs)
	}
	// Output:
	// Who signs the form? up
}
