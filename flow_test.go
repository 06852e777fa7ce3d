package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/genkit"
)

type flowTestInput struct {
	Steps int `json:"steps"`
}

type flowTestOutput struct {
	Done int `json:"done"`
}

func newProgressTestFlow(t *testing.T) (*genkit.Genkit, func(context.Context, flowTestInput, func(string)) (flowTestOutput, error)) {
	t.Helper()
	g := genkit.Init(t.Context())
	fn := func(ctx context.Context, in flowTestInput, progress func(string)) (flowTestOutput, error) {
		for i := range in.Steps {
			progress(fmt.Sprintf("step %d/%d", i+1, in.Steps))
		}
		if in.Steps < 0 {
			return flowTestOutput{}, fmt.Errorf("negative steps %d", in.Steps)
		}
		return flowTestOutput{Done: in.Steps}, nil
	}
	return g, fn
}

func TestDefineProgressFlowRun(t *testing.T) {
	g, fn := newProgressTestFlow(t)
	flow := DefineProgressFlow(g, "progressRun", fn)
	out, err := flow.Run(t.Context(), flowTestInput{Steps: 5})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Done != 5 {
		t.Fatalf("Run = %+v, want Done=5", out)
	}
	if _, err := flow.Run(t.Context(), flowTestInput{Steps: -1}); err == nil {
		t.Fatal("Run with failing fn: want error, got nil")
	}
}

func TestDefineProgressFlowStream(t *testing.T) {
	g, fn := newProgressTestFlow(t)
	flow := DefineProgressFlow(g, "progressStream", fn)
	if flow.Name() != "progressStream" {
		t.Fatalf("Name() = %q", flow.Name())
	}
	var got []string
	var out *flowTestOutput
	for v, err := range flow.Stream(t.Context(), flowTestInput{Steps: 200}) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if out != nil {
			t.Fatal("stream value after the result")
		}
		if v.Done {
			o := v.Output
			out = &o
			continue
		}
		got = append(got, v.Stream)
	}
	if out == nil || out.Done != 200 {
		t.Fatalf("result = %+v, want Done=200", out)
	}
	if len(got) != 200 {
		t.Fatalf("got %d progress messages, want 200", len(got))
	}
	for i, msg := range got {
		if want := fmt.Sprintf("step %d/200", i+1); msg != want {
			t.Fatalf("message %d = %q, want %q", i, msg, want)
		}
	}
}

func TestDefineProgressFlowStreamError(t *testing.T) {
	g, fn := newProgressTestFlow(t)
	flow := DefineProgressFlow(g, "progressStreamErr", fn)
	var msgs int
	var gotErr error
	for v, err := range flow.Stream(t.Context(), flowTestInput{Steps: -1}) {
		if err != nil {
			gotErr = err
			continue
		}
		if v.Done {
			t.Fatal("got a result from a failing flow")
		}
		msgs++
	}
	if gotErr == nil {
		t.Fatal("want the flow's error at the end of the stream")
	}
}

// Progress reported from several goroutines arrives complete, and the
// messages of each goroutine keep their order.
func TestDefineProgressFlowConcurrentProgress(t *testing.T) {
	g := genkit.Init(t.Context())
	const workers, each = 8, 50
	flow := DefineProgressFlow(g, "progressConcurrent", func(ctx context.Context, in flowTestInput, progress func(string)) (flowTestOutput, error) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					progress(fmt.Sprintf("%d %d", w, i))
				}
			})
		}
		wg.Wait()
		return flowTestOutput{Done: workers * each}, nil
	})
	next := make([]int, workers)
	var n int
	for v, err := range flow.Stream(t.Context(), flowTestInput{}) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Done {
			break
		}
		var w, i int
		if _, err := fmt.Sscanf(v.Stream, "%d %d", &w, &i); err != nil {
			t.Fatalf("bad message %q", v.Stream)
		}
		if i != next[w] {
			t.Fatalf("worker %d: message %d arrived, want %d", w, i, next[w])
		}
		next[w]++
		n++
	}
	if n != workers*each {
		t.Fatalf("got %d messages, want %d", n, workers*each)
	}
}

// When the stream's context is cancelled, fn's context is cancelled too and
// the flow ends with an error instead of running on.
func TestDefineProgressFlowCancelStopsFn(t *testing.T) {
	g := genkit.Init(t.Context())
	fnCtxErr := make(chan error, 1)
	flow := DefineProgressFlow(g, "progressCancel", func(ctx context.Context, in flowTestInput, progress func(string)) (flowTestOutput, error) {
		for i := 0; ; i++ {
			progress(fmt.Sprint(i))
			if err := ctx.Err(); err != nil {
				fnCtxErr <- err
				return flowTestOutput{Done: i}, err
			}
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var msgs []string
	var gotErr error
	for v, err := range flow.Stream(ctx, flowTestInput{}) {
		if err != nil {
			gotErr = err
			continue
		}
		msgs = append(msgs, v.Stream)
		if len(msgs) == 10 {
			cancel()
		}
	}
	if gotErr == nil || !errors.Is(<-fnCtxErr, context.Canceled) {
		t.Fatalf("want cancellation to reach fn and end the stream with an error, got %v", gotErr)
	}
	if !slices.Equal(msgs[:3], []string{"0", "1", "2"}) || len(msgs) > 11 {
		t.Fatalf("messages = %v..., want 0,1,2,... and at most one after cancel", msgs[:min(len(msgs), 12)])
	}
}
