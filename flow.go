package engine

import (
	"context"
	"sync"

	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"
)

// DefineProgressFlow defines and registers a Genkit streaming flow named name
// whose stream carries human-readable progress messages, and returns it.
//
// fn is written against a plain progress func(string); DefineProgressFlow
// turns each call into one stream chunk (core.StreamCallback[string]). The
// returned flow is used like any other Genkit flow: Run returns the result
// and discards the progress messages; Stream delivers every message, in the
// order fn reported them, and then the result (or the error).
//
// progress is safe for concurrent use: calls from several goroutines are
// serialised. Calls made after fn has returned are ignored. When the stream
// callback fails (the Stream caller's context ended), fn's context is
// cancelled with that failure as its cause and further progress calls are
// dropped, so a long crawl or index run stops promptly when nobody listens
// any more. To stop a streaming run, cancel its context: with Genkit v1.4.0,
// breaking out of the range loop over Stream before the final value makes
// Genkit's iterator call the loop body again, which panics.
//
// Use it for flows that report progress on the way to one result (indexing,
// crawling, re-indexing); a flow that streams its actual output, such as an
// answer streamed token by token, calls genkit.DefineStreamingFlow directly.
func DefineProgressFlow[In, Out any](g *genkit.Genkit, name string, fn func(ctx context.Context, input In, progress func(string)) (Out, error)) *core.Flow[In, Out, string] {
	return genkit.DefineStreamingFlow(g, name, func(ctx context.Context, input In, send core.StreamCallback[string]) (Out, error) {
		if send == nil { // Run: nobody listens to the stream.
			return fn(ctx, input, func(string) {})
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		var (
			mu      sync.Mutex
			stopped bool
		)
		progress := func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			if err := send(ctx, msg); err != nil {
				stopped = true
				cancel(err)
			}
		}
		out, err := fn(ctx, input, progress)
		mu.Lock()
		stopped = true
		mu.Unlock()
		return out, err
	})
}
