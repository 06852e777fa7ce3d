package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/logger"
)

// DocText returns the concatenated text of all text parts of doc ("" for a
// nil document).
func DocText(doc *ai.Document) string {
	if doc == nil {
		return ""
	}
	// The common case, one text part, needs no copy.
	var only *ai.Part
	n := 0
	for _, p := range doc.Content {
		if p != nil && p.IsText() {
			only = p
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return only.Text
	}
	var b strings.Builder
	for _, p := range doc.Content {
		if p != nil && p.IsText() {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// PromptOptions returns the execute options for a prompt call: the model
// (when non-nil), the model config (when non-nil, e.g. from
// GenerateConfig) and the prompt input (when non-nil).
func PromptOptions(model ai.Model, config any, input map[string]any) []ai.PromptExecuteOption {
	opts := make([]ai.PromptExecuteOption, 0, 3)
	if model != nil {
		opts = append(opts, ai.WithModel(model))
	}
	if config != nil {
		opts = append(opts, ai.WithConfig(config))
	}
	if input != nil {
		opts = append(opts, ai.WithInput(input))
	}
	return opts
}

// GenerateHyDEText executes hydePrompt with the input {"question":
// question} and returns its reply trimmed: a hypothetical passage that
// answers the question, to embed beside (or instead of) the question. It
// never fails: on a nil prompt, an error or an empty reply it returns
// question unchanged (logging a warning for an error), because HyDE is a
// retrieval aid that must never block retrieval. Embed the result as a
// plain document, not a QueryDocument: it stands in for a passage.
func GenerateHyDEText(ctx context.Context, hydePrompt ai.Prompt, model ai.Model, config any, question string) string {
	if hydePrompt == nil {
		return question
	}
	start := time.Now()
	resp, err := hydePrompt.Execute(ctx, PromptOptions(model, config, map[string]any{"question": question})...)
	log := logger.FromContext(ctx)
	if err != nil {
		log.Warn("HyDE failed, retrieving with the question alone", "prompt", hydePrompt.Name(), "err", err)
		return question
	}
	text := strings.TrimSpace(resp.Text())
	if text == "" {
		log.Warn("HyDE returned an empty reply, retrieving with the question alone", "prompt", hydePrompt.Name())
		return question
	}
	log.Debug("HyDE passage", "question", question, "passage", text, "duration", time.Since(start))
	return text
}

// RankedList is one retrieval source's result for ReciprocalRankFusion:
// documents best first, and the source's weight. A Weight of 0 counts as 1,
// so RankedList{Docs: docs} is an ordinary list; to leave a source out,
// leave its list out.
type RankedList struct {
	Docs   []*ai.Document
	Weight float64
}

// FusedDoc is one result of ReciprocalRankFusion: the document, its text
// (DocText) and its fused score.
type FusedDoc struct {
	Doc   *ai.Document
	Text  string
	Score float64
}

// Defaults of ReciprocalRankFusion and RerankScores.
const (
	// defaultRRFK is the standard Reciprocal Rank Fusion constant, used by
	// ReciprocalRankFusion for k <= 0.
	defaultRRFK = 60

	// defaultRerankBatchSize is the batch size RerankScores uses for
	// RerankOptions.BatchSize <= 0.
	defaultRerankBatchSize = 10
)

// ReciprocalRankFusion merges ranked lists into one, best first, scoring
// each distinct document text d with
//
//	score(d) = Σ_i weight_i / (k + rank_i(d) + 1)
//
// over the lists i that contain d, rank_i being its 0-based position (a
// text repeated within one list counts at its best rank only). Documents
// are deduplicated by DocText; the one kept is the one of the list adding
// most to d's score, weight_i / (k + rank_i(d) + 1) (on equal shares the
// best rank, then the earliest list; with equal weights, the best rank).
// One text can sit on several pages, and each list may return another of
// them (docs/retrieval.md, "One text on several pages"). Nil documents
// are skipped. Equal scores
// are ordered by best rank, then list order, so the result is
// deterministic. k <= 0 means 60, the standard constant; maxResults <= 0
// means no cap.
func ReciprocalRankFusion(lists []RankedList, k, maxResults int) []FusedDoc {
	if k <= 0 {
		k = defaultRRFK
	}
	longest := 0
	total := 0
	for _, l := range lists {
		longest = max(longest, len(l.Docs))
		total += len(l.Docs)
	}
	index := make(map[string]int, total)
	out := make([]FusedDoc, 0, total)
	share := make([]float64, 0, total) // the largest list share of out[i]'s score
	// counted holds one bit per (document, list): set once the list has
	// contributed to the document, so repeats within a list count once.
	words := (len(lists) + 63) / 64
	counted := make([]uint64, 0, total*words)
	// Rank-major order makes "first seen" mean best rank, then list order.
	for rank := range longest {
		for li, l := range lists {
			if rank >= len(l.Docs) || l.Docs[rank] == nil {
				continue
			}
			text := DocText(l.Docs[rank])
			pos, ok := index[text]
			if !ok {
				pos = len(out)
				index[text] = pos
				out = append(out, FusedDoc{Doc: l.Docs[rank], Text: text})
				share = append(share, 0)
				for range words {
					counted = append(counted, 0)
				}
			}
			word, bit := pos*words+li/64, uint64(1)<<(li%64)
			if counted[word]&bit != 0 {
				continue
			}
			counted[word] |= bit
			w := l.Weight
			if w == 0 {
				w = 1
			}
			c := w / float64(k+rank+1)
			out[pos].Score += c
			if c > share[pos] {
				out[pos].Doc, share[pos] = l.Docs[rank], c
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if maxResults > 0 && len(out) > maxResults {
		out = out[:maxResults]
	}
	return out
}

// RerankOptions controls RerankScores.
type RerankOptions struct {
	// BatchSize is the number of passages scored per model call; <= 0
	// means 10.
	BatchSize int
	// Parallel is the most model calls in flight at once; <= 0 means 1.
	Parallel int
	// DefaultScore is the score of passages whose batch failed (an error,
	// or a reply without usable scores), so they are kept in their
	// retrieval order rather than dropped. Clamped to 0-10.
	DefaultScore int
}

// RerankScores returns a 0-10 relevance score for each of texts, aligned
// with texts, by executing rerankPrompt over batches of passages.
//
// The prompt receives the input
//
//	{"question": question,
//	 "passages": []string (the batch's passages, in order),
//	 "numbered": "[1] first passage\n\n[2] second passage ...",
//	 "count":    len(passages)}
//
// and should reply with one integer score 0-10 per passage, in order,
// ideally as a JSON array ([7, 2, 9]); replies such as {"scores": [...]},
// [{"index": 1, "score": 7}, ...], {"1": 7, "2": 2}, "1: 7\n2: 2" or plain
// numbers in text are understood too (see parseRerankScores). Scores are
// rounded and clamped to 0-10.
//
// Identical texts are scored once. At most opts.Parallel calls run at
// once. A batch whose call fails, or whose reply holds fewer scores than
// passages, keeps opts.DefaultScore for its unscored passages and logs a
// warning; RerankScores itself never fails. When ctx ends, unscored
// batches keep the default too. No texts give nil.
func RerankScores(ctx context.Context, rerankPrompt ai.Prompt, model ai.Model, config any, question string, texts []string, opts RerankOptions) []int {
	def := clampScore(float64(opts.DefaultScore))
	if len(texts) == 0 {
		return nil // no candidates, no scores (docs/compat.md)
	}
	scores := make([]int, len(texts))
	// Deduplicate: uniq holds each distinct text once, slot maps texts to it.
	slot := make([]int, len(texts))
	pos := make(map[string]int, len(texts))
	uniq := make([]string, 0, len(texts))
	for i, t := range texts {
		p, ok := pos[t]
		if !ok {
			p = len(uniq)
			pos[t] = p
			uniq = append(uniq, t)
		}
		slot[i] = p
	}
	uniqScores := make([]int, len(uniq))
	for i := range uniqScores {
		uniqScores[i] = def
	}
	if rerankPrompt != nil {
		rerankBatches(ctx, rerankPrompt, model, config, question, uniq, uniqScores, opts)
	} else {
		logger.FromContext(ctx).Warn("rerank skipped: no rerank prompt", "passages", len(uniq))
	}
	for i, p := range slot {
		scores[i] = uniqScores[p]
	}
	return scores
}

// rerankBatches scores uniq into out (pre-filled with the default score).
func rerankBatches(ctx context.Context, rerankPrompt ai.Prompt, model ai.Model, config any, question string, uniq []string, out []int, opts RerankOptions) {
	size := opts.BatchSize
	if size <= 0 {
		size = defaultRerankBatchSize
	}
	par := max(opts.Parallel, 1)
	log := logger.FromContext(ctx)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for start := 0; start < len(uniq); start += size {
		end := min(start+size, len(uniq))
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			log.Warn("rerank cancelled, keeping default scores", "from", start, "passages", len(uniq)-start, "err", ctx.Err())
			break
		}
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			defer func() { <-sem }()
			rerankOneBatch(ctx, log, rerankPrompt, model, config, question, uniq[start:end], out[start:end], start)
		}(start, end)
	}
	wg.Wait()
}

// rerankOneBatch scores one batch into out; out is left as is on failure.
func rerankOneBatch(ctx context.Context, log *slog.Logger, rerankPrompt ai.Prompt, model ai.Model, config any, question string, batch []string, out []int, offset int) {
	var numbered strings.Builder
	for i, t := range batch {
		if i > 0 {
			numbered.WriteString("\n\n")
		}
		numbered.WriteString("[")
		numbered.WriteString(strconv.Itoa(i + 1))
		numbered.WriteString("] ")
		numbered.WriteString(t)
	}
	input := map[string]any{
		"question": question,
		"passages": batch,
		"numbered": numbered.String(),
		"count":    len(batch),
	}
	start := time.Now()
	resp, err := rerankPrompt.Execute(ctx, PromptOptions(model, config, input)...)
	if err != nil {
		log.Warn("rerank batch failed, keeping default scores", "offset", offset, "passages", len(batch), "err", err)
		return
	}
	got := parseRerankScores(resp.Text(), len(batch))
	missing := 0
	for i, s := range got {
		if s < 0 {
			missing++
			continue
		}
		out[i] = s
	}
	if missing > 0 {
		log.Warn("rerank reply lacks scores, keeping default for those", "offset", offset, "passages", len(batch), "missing", missing)
	}
	log.Debug("rerank batch", "offset", offset, "passages", len(batch), "duration", time.Since(start))
}

// clampScore rounds x to the nearest integer within 0-10.
func clampScore(x float64) int {
	if math.IsNaN(x) || x < 0 {
		return 0
	}
	if x > 10 {
		return 10
	}
	return int(math.Round(x))
}

var (
	// rerankOutOf matches "/10" and "out of 10" after a score.
	rerankOutOf = lazyRegexp(`(?i)\s*(/\s*10|out of 10|von 10)\b`)
	// rerankIndexed matches "1: 7", "[2] 8", "3) 5", "Passage 4 - 9".
	rerankIndexed = lazyRegexp(`(?im)^[\s*#>-]*(?:passage|passus|abschnitt|text|doc(?:ument)?|nr\.?)?\s*\[?(\d+)\]?\s*[:.)=\-–]+\s*(?:score\s*[:=]?\s*)?(\d+(?:[.,]\d+)?)`)
	// rerankNumber matches a number in text.
	rerankNumber = lazyRegexp(`\d+(?:[.,]\d+)?`)
)

// parseRerankScores extracts n scores from a model reply. The result has
// length n; entries without a score are -1, the others are rounded and
// clamped to 0-10. It reads the reply three ways and keeps the reading
// that yields the most scores (on a tie the earlier one): a JSON value in
// the reply (an array of numbers, an array of objects with a score and
// optional index field, an object with a "scores" array, or an object
// keyed by passage number); lines of the form "<passage number>: <score>";
// and all numbers in the text, in order (every second one when they
// alternate with the passage numbers 1..n). "/10" and "out of 10" after a
// score are ignored.
func parseRerankScores(reply string, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = -1
	}
	if n == 0 {
		return out
	}
	// The JSON value holding the most scores wins (the first 32 candidate
	// starts are tried: "[1] 7" also starts with a JSON array).
	var fromJSON []int
	for i, tries := 0, 0; i < len(reply) && tries < 32; i++ {
		if reply[i] != '[' && reply[i] != '{' {
			continue
		}
		tries++
		var v any
		dec := json.NewDecoder(strings.NewReader(reply[i:]))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		cand := make([]int, n)
		for j := range cand {
			cand[j] = -1
		}
		if rerankFromJSON(v, cand, 0) && rerankCount(cand) > rerankCount(fromJSON) {
			fromJSON = cand
			if rerankCount(cand) == n {
				return cand
			}
		}
	}
	text := rerankOutOf().ReplaceAllString(reply, "")
	indexed := make([]int, n)
	for i := range indexed {
		indexed[i] = -1
	}
	if m := rerankIndexed().FindAllStringSubmatch(text, -1); len(m) > 0 {
		idx := make([]float64, len(m))
		val := make([]float64, len(m))
		for i, g := range m {
			idx[i] = rerankNum(g[1])
			val[i] = rerankNum(g[2])
		}
		rerankPlace(idx, val, indexed)
	}
	nums := rerankNumber().FindAllString(text, -1)
	vals := make([]float64, len(nums))
	for i, s := range nums {
		vals[i] = rerankNum(s)
	}
	alternating := len(vals) >= 2*n
	for i := 0; alternating && i < n; i++ {
		alternating = vals[2*i] == float64(i+1)
	}
	for i := range n {
		switch {
		case alternating:
			out[i] = clampScore(vals[2*i+1])
		case i < len(vals):
			out[i] = clampScore(vals[i])
		}
	}
	best := out
	if rerankCount(indexed) >= rerankCount(best) {
		best = indexed
	}
	if fromJSON != nil && rerankCount(fromJSON) >= rerankCount(best) {
		best = fromJSON
	}
	return best
}

// rerankCount counts the placed (non-negative) scores.
func rerankCount(s []int) int {
	c := 0
	for _, x := range s {
		if x >= 0 {
			c++
		}
	}
	return c
}

// rerankNum parses a number with "." or "," as the decimal mark.
func rerankNum(s string) float64 {
	f, err := strconv.ParseFloat(strings.Replace(strings.TrimSpace(s), ",", ".", 1), 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// rerankValue returns v as a number, accepting JSON numbers and numeric
// strings ("7", "7/10").
func rerankValue(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		x = rerankOutOf().ReplaceAllString(x, "")
		if m := rerankNumber().FindString(x); m != "" {
			return rerankNum(m), true
		}
	case float64:
		return x, true
	}
	return 0, false
}

// rerankFromJSON fills out from a decoded JSON reply; it reports whether v
// held at least one score.
func rerankFromJSON(v any, out []int, depth int) bool {
	if depth > 3 {
		return false
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return false
		}
		if _, isObj := x[0].(map[string]any); isObj {
			var idx, val []float64
			for i, e := range x {
				obj, ok := e.(map[string]any)
				if !ok {
					continue
				}
				score, ok := rerankField(obj, "score", "relevance", "rating", "relevance_score", "bewertung", "punkte")
				if !ok {
					continue
				}
				index, ok := rerankField(obj, "index", "id", "passage", "n", "i", "nr", "number")
				if !ok {
					index = float64(i + 1)
				}
				idx = append(idx, index)
				val = append(val, score)
			}
			return rerankPlace(idx, val, out)
		}
		got := false
		for i := 0; i < len(x) && i < len(out); i++ {
			if f, ok := rerankValue(x[i]); ok {
				out[i] = clampScore(f)
				got = true
			}
		}
		return got
	case map[string]any:
		for _, k := range []string{"scores", "results", "ratings", "rankings", "bewertungen"} {
			if inner, ok := x[k]; ok {
				return rerankFromJSON(inner, out, depth+1)
			}
		}
		var idx, val []float64
		for k, e := range x {
			i := rerankNum(strings.Trim(k, "[]() "))
			f, ok := rerankValue(e)
			if math.IsNaN(i) || !ok {
				continue
			}
			idx = append(idx, i)
			val = append(val, f)
		}
		return rerankPlace(idx, val, out)
	}
	return false
}

// rerankField returns the first of keys present in obj as a number.
func rerankField(obj map[string]any, keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := obj[k]; ok {
			if f, ok := rerankValue(v); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// rerankPlace stores val[i] at passage number idx[i] (1-based, or 0-based
// when some index is 0); it reports whether any score was placed.
func rerankPlace(idx, val []float64, out []int) bool {
	base := 1.0
	for _, i := range idx {
		if i == 0 {
			base = 0
		}
	}
	got := false
	for j, i := range idx {
		p := i - base
		if math.IsNaN(p) || p < 0 || p >= float64(len(out)) || p != math.Trunc(p) || math.IsNaN(val[j]) {
			continue
		}
		out[int(p)] = clampScore(val[j])
		got = true
	}
	return got
}
