package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Answer modes.
const (
	answerLLM        = "llm"
	answerExtractive = "extractive"
)

// noLLMNote is the note of an extractive answer without LLM_MODEL.
const noLLMNote = "no LLM configured (set LLM_MODEL, e.g. ollama/llama3.2, for generated answers): quoting the best passages"

// answerResult is ask's result (and its --json output). Every key is
// always present.
type answerResult struct {
	Question        string     `json:"question"`
	Answer          string     `json:"answer"`
	Mode            string     `json:"mode"`
	Model           string     `json:"model"`
	Confidence      string     `json:"confidence"`
	Score           int        `json:"score"`
	ConfidenceBasis string     `json:"confidenceBasis"`
	Citations       []citation `json:"citations"`
	// Note says why an answer is extractive ("" for a generated one).
	Note string `json:"note"`
	// NoMatch is set when nothing in the index matches the question (no
	// passage, or MissingTerms occur nowhere): the answer starts by saying
	// so and quotes only the closest passages.
	NoMatch      bool     `json:"noMatch"`
	MissingTerms []string `json:"missingTerms"`
	HyDE         string   `json:"hyde"`
	// passages are the quotes of an extractive answer, one per citation.
	passages []string
}

// answer answers question through the SDK's one answer path
// (askyourdocs.Answer): with the LLM, streaming the text to onText when it
// is set, else (or when the model server fails) extractively, quoting the
// passages' sentences that answer.
func (b *backend) answer(ctx context.Context, question string, o retrieveOptions, passages int, onText func(string)) (*answerResult, error) {
	if err := b.requireIndexed(ctx); err != nil {
		return nil, err
	}
	so, err := b.searchOptions(o)
	if err != nil {
		return nil, err
	}
	ao := &askyourdocs.AnswerOptions{Search: so, Passages: passages, OnText: onText, Labels: askyourdocs.EnglishLabels}
	if b.llm != nil {
		ao.Genkit, ao.Model, ao.Config = b.g, b.llm, b.genCfg
	}
	res, err := askyourdocs.Answer(ctx, b.store, question, ao)
	if err != nil {
		return nil, err
	}
	out := &answerResult{Question: question, HyDE: res.Search.HyDEPassage, Answer: res.Text, Mode: answerExtractive,
		Score: res.Confidence, ConfidenceBasis: res.ConfidenceBasis, Confidence: res.Level.String(),
		NoMatch: res.NoMatch, MissingTerms: res.MissingTerms, Citations: []citation{}}
	if out.MissingTerms == nil {
		out.MissingTerms = []string{}
	}
	for i, c := range res.Citations {
		ct := citationOf(hitOf(c))
		ct.N, ct.passage, ct.quote = i+1, c.Passage, c.Excerpt
		if c.Section != "" && c.Section != ct.Breadcrumb {
			// The answer names the section its quote comes from (a
			// small section merged into the chunk).
			ct.Breadcrumb = c.Section
			ct.Link = citationLink(ct.URL, ct.Pages, ct.Breadcrumb)
		}
		out.Citations = append(out.Citations, ct)
		if !res.Generated {
			out.passages = append(out.passages, c.Excerpt)
		}
	}
	switch {
	case res.Generated:
		out.Mode, out.Model = answerLLM, b.llmSpec
	case len(res.Hits) == 0:
		out.ConfidenceBasis = "no match"
	case res.NoMatch:
		out.Note = "nothing in the index matches " + strings.Join(out.MissingTerms, ", ")
	case res.ModelErr != nil:
		out.Note = modelFailureNote(b.llmSpec, res.ModelErr)
	case b.fallbackNote != "":
		out.Note = b.fallbackNote
	default:
		out.Note = noLLMNote
	}
	return out, nil
}

// answerStreaming is answer with onText (serve's event stream): the text
// is streamed through the same sanitiser as on a terminal.
func (b *backend) answerStreaming(ctx context.Context, question string, o retrieveOptions, passages int, onText func(string)) (*answerResult, error) {
	return b.answer(ctx, question, o, passages, onText)
}

// modelFailureNote says in one line why the model could not answer.
func modelFailureNote(spec string, err error) string {
	var pe *askyourdocs.ProviderError
	if errors.As(err, &pe) {
		name := map[string]string{askyourdocs.ProviderOllama: "Ollama", askyourdocs.ProviderGPUStack: "GPUStack"}[pe.Provider]
		if name == "" {
			name = pe.Provider
		}
		addr := pe.Address
		if i := strings.Index(addr, "/api/"); i > 0 {
			addr = addr[:i]
		} else if i := strings.Index(addr, "/v1/"); i > 0 {
			addr = addr[:i]
		}
		if pe.Status == 0 {
			return fmt.Sprintf("%s at %s not reachable (%s): quoting the best passages instead", name, addr, connectReason(err))
		}
		return fmt.Sprintf("%s at %s failed (HTTP %d) for %s: quoting the best passages instead", name, addr, pe.Status, spec)
	}
	return fmt.Sprintf("%s failed (%s): quoting the best passages instead", spec, connectReason(err))
}

func (a *cliApp) cmdAsk(ctx context.Context, args []string) error {
	fset, cf := a.flags("ask")
	o := defaultRetrieveOptions()
	fset.StringVar(&o.mode, "mode", o.mode, "retriever: vector, keyword or fusion")
	passages := fset.Int("passages", 5, "passages given to the model (cited)")
	noHyde := fset.Bool("no-hyde", false, "skip the HyDE passage even with an LLM")
	noStream := fset.Bool("no-stream", false, "print the answer when it is complete instead of as it is generated")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if strings.TrimSpace(strings.Join(pos, " ")) == "" {
		return usageError("ask", "ask needs a question")
	}
	if *passages < 1 {
		return usageError("ask", "--passages must be at least 1")
	}
	o.hyde = !*noHyde
	question := strings.Join(pos, " ")
	b, err := a.open(ctx, cf, openOptions{models: true, reads: true, once: true})
	if err != nil {
		return err
	}
	defer b.Close()
	a.dropUnreachableModels(ctx, b)
	return a.askOne(ctx, b, question, o, *passages, !cf.json && !*noStream && isTerminal(a.stdout), cf.json)
}

// askOne answers one question and prints it (ask and chat).
func (a *cliApp) askOne(ctx context.Context, b *backend, question string, o retrieveOptions, passages int, stream, asJSON bool) (err error) {
	_, err = a.askAndPrint(ctx, b, question, o, passages, stream, asJSON)
	return err
}

// askAndPrint answers question, printing the answer (streamed when stream
// is set) with its sources and confidence, and returns the result.
func (a *cliApp) askAndPrint(ctx context.Context, b *backend, question string, o retrieveOptions, passages int, stream, asJSON bool) (*answerResult, error) {
	st := newStyle(a.stdout, a)
	spin := a.startSpinner("searching the documents")
	var onText func(string)
	streamed := false
	if stream && b.llm != nil {
		onText = func(s string) {
			if s == "" {
				return
			}
			spin.stop()
			streamed = true
			io.WriteString(a.stdout, s)
		}
	}
	out, err := b.answer(ctx, question, o, passages, onText)
	spin.stop()
	if err != nil {
		return nil, err
	}
	if asJSON {
		return out, printJSON(a.stdout, out)
	}
	if out.Note != "" && !a.quiet {
		fmt.Fprintf(a.stderr, "%s %s\n", newStyle(a.stderr, a).yellow("note:"), out.Note)
	}
	w := a.stdout
	switch {
	case streamed && out.Mode == answerLLM:
		fmt.Fprintln(w)
	case out.Mode == answerExtractive && len(out.passages) > 0:
		if out.NoMatch {
			first, _, _ := strings.Cut(out.Answer, "\n")
			fmt.Fprintf(w, "%s\n\n", st.yellow(first))
		}
		for i, p := range out.passages {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "%s %s\n", st.bold(fmt.Sprintf("[%d]", i+1)), p)
		}
	default:
		fmt.Fprintln(w, out.Answer)
	}
	if len(out.Citations) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.bold("Sources:"))
		for _, c := range out.Citations {
			fmt.Fprintf(w, "  [%d] %s\n", c.N, st.link(c.Link, c.String()))
		}
	}
	fmt.Fprintf(w, "\nConfidence: %s (%d/10, %s)\n", confColor(st, out.Confidence), out.Score, out.ConfidenceBasis)
	return out, nil
}

func confColor(st style, label string) string {
	switch label {
	case "high":
		return st.green(label)
	case "medium":
		return st.yellow(label)
	}
	return st.red(label)
}

// sanitizeAnswer is the engine's SanitizeAnswerWithOptions with the English
// labels (the removed-link marker "[link removed]"): the CLI, serve and
// MCP speak English.
func sanitizeAnswer(answer string, allowed []string) string {
	return askyourdocs.SanitizeAnswerWithOptions(answer, allowed, &askyourdocs.ConversationOptions{Labels: askyourdocs.EnglishLabels})
}
