package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Jobs in a database through River: a job kind registered with its work,
// enqueued with a JSON input, run by whichever process sharing the
// database has a free worker, and read back from another store on the
// same file, as a second process would.
func ExampleDurableJobStore() {
	dir, err := os.MkdirTemp("", "durable-jobs-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.sqlite") // or NewDurableJobStorePg(ctx, dsn, opts)
	ctx := context.Background()

	jobs, err := askyourdocs.NewDurableJobStoreSQLite(ctx, path, &askyourdocs.DurableJobStoreOptions{
		MaxAttempts: 3, // runs of a job whose process died, then failed with the reason
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer jobs.Close()

	// Every process registers the same kinds before Start.
	type indexIn struct{ Files []string }
	jobs.HandleKind("index", func(ctx context.Context, raw json.RawMessage, progress func(string)) (any, error) {
		var in indexIn
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		for _, f := range in.Files {
			progress("indexed " + f)
		}
		return map[string]int{"files": len(in.Files)}, nil
	})
	if err := jobs.Start(); err != nil {
		fmt.Println(err)
		return
	}
	job, err := jobs.EnqueueInput(ctx, "index", indexIn{Files: []string{"a.pdf", "b.docx"}})
	if err != nil { // ErrJobQueueFull: answer 503 and let the client retry
		fmt.Println(err)
		return
	}

	// Another process (here: another store on the same file) sees the job.
	other, err := askyourdocs.NewDurableJobStoreSQLite(ctx, path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer other.Close()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done, err := other.Wait(waitCtx, job.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	result, _ := json.Marshal(done.Result)
	fmt.Println(done.Kind, done.Status, string(result))
	for _, msg := range done.ProgressLog {
		fmt.Println(msg)
	}
	// Output:
	// index done {"files":2}
	// indexed a.pdf
	// indexed b.docx
}
