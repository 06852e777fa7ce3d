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

	jobs := askyourdocs.NewJobStoreWithOptions(nil) // starts the single background worker
	defer jobs.Close()

	// The job runs with the app's long-lived context, not a request's.
	job, err := jobs.EnqueueContext(ctx, "crawl", func(ctx context.Context, progress func(string)) (any, error) {
		return askyourdocs.RunStreamingFlowAsJob(ctx, crawl, crawlIn{Pages: 3}, progress)
	})
	if err != nil { // ErrJobQueueFull: answer 503 and let the client retry
		fmt.Println(err)
		return
	}

	// An HTTP handler would return job.ID and let the client poll jobs.Get.
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done, err := jobs.Wait(waitCtx, job.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(done.Status, done.Result, "latest:", done.Progress)
	for _, msg := range done.ProgressLog {
		fmt.Println(msg)
	}
	// Output:
	// done 3 latest: page 3/3
	// page 1/3
	// page 2/3
	// page 3/3
}

// Plain functions can be enqueued too; jobs run one at a time, in order.
func ExampleJobStore() {
	jobs := askyourdocs.NewJobStoreWithOptions(&askyourdocs.JobStoreOptions{MaxHistory: 50, MaxQueue: 10})
	defer jobs.Close()

	queued, err := jobs.EnqueueContext(context.Background(), "reindex", func(ctx context.Context, progress func(string)) (any, error) {
		progress("reindexing 2 documents")
		return "2 documents", nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(queued.Status)
	job, _ := jobs.Wait(context.Background(), queued.ID)
	fmt.Println(job.Kind, job.Status, job.Result, job.Progress)
	// Output:
	// pending
	// reindex done 2 documents reindexing 2 documents
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

	log, err := askyourdocs.OpenFeedbackStore(filepath.Join(dir, "feedback.json"),
		func(e entry) string { return e.ID },
		func(e *entry, rating string) { e.Thumbs = rating }) // "up", "down" or "" (cleared)
	if err != nil {
		fmt.Println(err)
		return
	}
	id := askyourdocs.NewRandomHexID(16)
	if err := log.Append(entry{ID: id, Question: "Who signs the form?", Answer: "The dean."}); err != nil {
		fmt.Println(err)
		return
	}
	if found, err := log.Rate(id, "up"); err != nil || !found {
		fmt.Println(found, err)
		return
	}
	all, err := log.All() // reads the file
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range all {
		fmt.Println(e.Question, e.Thumbs)
	}
	// Output:
	// Who signs the form? up
}
