package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// Chat history limits given to the condense prompt.
const (
	chatMaxTurns = 6
	chatMaxChars = 4000
)

// cmdChat answers questions read line by line, rewriting follow-ups into
// standalone questions with the conversation so far: CondenseFollowUp with
// an LLM, TopicStandaloneQuestion (the conversation's topic words + the
// follow-up) without one.
func (a *cliApp) cmdChat(ctx context.Context, args []string) error {
	fset, cf := a.flags("chat")
	o := defaultRetrieveOptions()
	fset.StringVar(&o.mode, "mode", o.mode, "retriever: vector, keyword or fusion")
	passages := fset.Int("passages", 5, "passages given to the model (cited)")
	noStream := fset.Bool("no-stream", false, "print each answer when it is complete")
	pos, err := a.parse(fset, cf, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("chat", "chat reads its questions from the terminal; for one question use 'askyourdocs ask'")
	}
	b, err := a.openIndexed(ctx, cf, openOptions{models: true, reads: true})
	if err != nil {
		return err
	}
	defer b.Close()
	a.dropUnreachableModels(ctx, b)
	interactive := false
	if f, ok := a.stdin.(*os.File); ok && isTerminal(f) {
		interactive = true
	}
	if interactive && !cf.json && !a.quiet {
		fmt.Fprintf(a.stderr, "Ask about %s. An empty line or Ctrl-D ends the chat.\n", storeLabel(b.store))
	}
	stream := !cf.json && !*noStream && isTerminal(a.stdout)
	var history []askyourdocs.QATurn
	// The questions are read on their own goroutine, so that Ctrl-C at
	// the prompt ends the chat (exit 130) instead of waiting for a line.
	lines, readErr := chatLines(a.stdin)
	for {
		if interactive {
			fmt.Fprint(a.stderr, newStyle(a.stderr, a).bold("> "))
		}
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			if interactive {
				fmt.Fprintln(a.stderr)
			}
			return errInterrupted
		case line, ok = <-lines:
		}
		if !ok {
			break
		}
		q := strings.TrimSpace(line)
		if q == "" {
			if interactive {
				break
			}
			continue
		}
		standalone := q
		if len(history) > 0 {
			recent := askyourdocs.TrimHistoryWithOptions(history, &askyourdocs.ConversationOptions{MaxTurns: chatMaxTurns, MaxChars: chatMaxChars})
			if b.llm != nil {
				standalone = askyourdocs.CondenseFollowUpWithOptions(ctx, b.condensePrompt(), b.llm, b.genCfg, q, recent, englishLabels)
			} else {
				standalone = askyourdocs.TopicStandaloneQuestion(q, recent, 0)
			}
			if standalone != q && !a.quiet && !cf.json {
				fmt.Fprintf(a.stderr, "%s\n", newStyle(a.stderr, a).dim("(searching for: "+standalone+")"))
			}
		}
		out, err := a.askAndPrint(ctx, b, standalone, o, *passages, stream, cf.json)
		if err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			return err
		}
		if !cf.json {
			fmt.Fprintln(a.stdout)
		}
		history = append(history, askyourdocs.QATurn{Question: q, Answer: out.Answer})
		if ctx.Err() != nil {
			return errInterrupted
		}
	}
	if err := <-readErr; err != nil {
		return fmt.Errorf("read the questions: %w", err)
	}
	return nil
}

// chatLines reads r line by line (up to 1 MiB a line) on a goroutine: each
// line is sent on lines, which is closed at the end of input; the read
// error (nil at a clean end) is then sent on the second channel.
func chatLines(r io.Reader) (<-chan string, <-chan error) {
	lines, errc := make(chan string), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		errc <- sc.Err()
		close(lines)
	}()
	return lines, errc
}

// condensePrompt rewrites a follow-up into a standalone question.
func (b *backend) condensePrompt() ai.Prompt {
	if p := genkit.LookupPrompt(b.g, "askyourdocs-condense"); p != nil {
		return p
	}
	return genkit.DefinePrompt(b.g, "askyourdocs-condense", ai.WithPrompt(
		"Rewrite the last question of this conversation as a standalone question that can be understood without "+
			"the conversation. Keep its language and every number. Output only the question.\n\n"+
			"Conversation:\n{{conversation}}\n\nLast question: {{question}}"))
}
