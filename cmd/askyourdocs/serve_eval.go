package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Dataset files the eval routes write into the server's eval directory
// (and EvalDatasetHandler serves from it).
const (
	generatedDataset = "eval_dataset_generated.json"
	feedbackDataset  = "eval_dataset_feedback.json"
	injectionDataset = "eval_dataset_injection.json"
)

// errNoLLMForEval is the error of a generated eval set without a model.
var errNoLLMForEval = errors.New("generating questions needs an LLM: start serve with LLM_MODEL set")

// errNoFeedback is the error of a feedback eval set from an empty log.
var errNoFeedback = errors.New("the feedback log is empty: ask some questions on the Ask page first")

// defineFlows registers the app's Genkit flows: "ask" streams the answer
// text and returns the answer with its citations; "index" indexes files,
// pages or a crawl with progress messages. With GENKIT_ENV=dev (genkit
// start -- askyourdocs serve) the Genkit CLI and Dev UI run them, and
// genkit eval:flow ask evaluates the ask flow; with an LLM the engine's
// evaluators are registered too, judged by that LLM.
func (s *server) defineFlows() {
	s.askFlow = genkit.DefineStreamingFlow(s.b.g, "ask",
		func(ctx context.Context, in askInput, send core.StreamCallback[string]) (*askOutput, error) {
			var onText func(string)
			if send != nil {
				onText = func(t string) { send(ctx, t) }
			}
			return s.ask(ctx, in, onText)
		})
	s.indexFlow = askyourdocs.DefineProgressFlow(s.b.g, "index", s.runIndex)
	if s.b.llm != nil {
		askyourdocs.RegisterEvaluators(s.b.g, s.b.llm.Name())
	}
}

// evalOutInput is the input of the feedback and injection eval jobs: the
// only field is the outPath RestrictEvalPaths clears.
type evalOutInput struct {
	OutPath string `json:"outPath,omitempty"`
}

// evalResult is the result of the feedback and injection eval jobs.
type evalResult struct {
	Written int    `json:"written"`
	OutPath string `json:"outPath"`
}

// evalRoutes registers the three eval routes as the engine's spec wires
// them (the POST routes additionally pass the CSRF check, which evalset's
// JSON requests always do).
func (s *server) evalRoutes(mux *http.ServeMux, admin func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("POST /api/eval/generated", admin(s.csrf(askyourdocs.EvalJobHandler(s.jobs, s.ctx, "evalGenerated",
		s.generatedEvalSet,
		func(in *askyourdocs.GenerateEvalSetInput) error {
			return askyourdocs.RestrictEvalPaths(&in.Dir, &in.OutPath)
		}))))
	mux.HandleFunc("POST /api/eval/feedback", admin(s.csrf(askyourdocs.EvalJobHandler(s.jobs, s.ctx, "evalFeedback",
		s.feedbackEvalSet,
		func(in *evalOutInput) error { return askyourdocs.RestrictEvalPaths(nil, &in.OutPath) }))))
	mux.HandleFunc("POST /api/eval/injection", admin(s.csrf(askyourdocs.EvalJobHandler(s.jobs, s.ctx, "evalInjection",
		s.injectionEvalSet,
		func(in *evalOutInput) error { return askyourdocs.RestrictEvalPaths(nil, &in.OutPath) }))))
	mux.HandleFunc("GET /api/eval/datasets/{name}", admin(askyourdocs.EvalDatasetHandler(s.evalDir)))
}

// askInputOf is the eval datasets' input builder: the ask flow's input.
func askInputOf(question string) askInput { return askInput{Question: question} }

// generatedEvalSet generates questions and reference answers from the
// documents in in.Dir (relative to the server's working directory; by
// default the uploaded files) with the LLM.
func (s *server) generatedEvalSet(ctx context.Context, in askyourdocs.GenerateEvalSetInput) (any, error) {
	if s.b.llm == nil {
		return nil, errNoLLMForEval
	}
	if in.Dir == "" {
		in.Dir = s.uploadDir
	}
	in.OutPath = filepath.Join(s.evalDir, generatedDataset)
	opts := []ai.GenerateOption{ai.WithModel(s.b.llm), ai.WithConfig(s.b.genCfg)}
	return askyourdocs.GenerateEvalSet(ctx, s.b.g, opts, defaultChunkSize, defaultChunkOverlap, in, askInputOf)
}

// feedbackEvalSet turns the feedback log into a dataset: every logged
// question, with the logged answer as the reference when it was rated
// thumbs-up (a thumbs-down answer is no reference; its question is kept,
// since what went wrong is worth re-running).
func (s *server) feedbackEvalSet(ctx context.Context, _ evalOutInput) (any, error) {
	entries, err := feedbackEntries(s.feedback)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errNoFeedback
	}
	cases := make([]askyourdocs.EvalCase[askInput], 0, len(entries))
	for _, e := range entries {
		c := askyourdocs.EvalCase[askInput]{TestCaseId: "feedback-" + e.ID, Input: askInputOf(e.Question)}
		if e.Rating == ratingUp {
			c.Reference = e.Answer
		}
		cases = append(cases, c)
	}
	path := filepath.Join(s.evalDir, feedbackDataset)
	if err := writeDataset(path, cases); err != nil {
		return nil, err
	}
	return evalResult{Written: len(cases), OutPath: path}, nil
}

// injectionEvalSet writes the engine's prompt-injection cases for the ask
// flow.
func (s *server) injectionEvalSet(ctx context.Context, _ evalOutInput) (any, error) {
	path := filepath.Join(s.evalDir, injectionDataset)
	n, err := askyourdocs.WriteInjectionEvalSet(path, askInputOf)
	if err != nil {
		return nil, err
	}
	return evalResult{Written: n, OutPath: path}, nil
}

// writeDataset writes v as indented JSON to path through a temporary file.
func writeDataset(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode dataset: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write dataset: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write dataset: %w", err)
	}
	return nil
}
