package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"
)

// This file reads the input and output of an evaluated flow generically
// (strings, JSON objects, structs) and parses judge replies.

// evalGeneric turns v into plain JSON values (string, float64, bool,
// []any, map[string]any): structs, typed maps and slices go through a JSON
// round trip. A value that does not encode gives nil.
func evalGeneric(v any) any {
	switch v.(type) {
	case nil, string, float64, bool, map[string]any, []any:
		return v
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.String {
		return rv.String()
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil
	}
	return out
}

// evalLookup returns the value of the first of keys present in m, matching
// keys case-insensitively (an exact match wins).
func evalLookup(m map[string]any, keys ...string) (any, bool) {
	if m == nil {
		return nil, false
	}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	for _, k := range keys {
		for mk, v := range m {
			if strings.EqualFold(mk, k) {
				return v, true
			}
		}
	}
	return nil, false
}

// evalText finds the text in v: a string itself, or the string under the
// first of keys of an object, descending into nested objects (an input of
// {"input": {"question": "..."}}) up to a few levels.
func evalText(v any, depth int, keys ...string) (string, bool) {
	switch x := evalGeneric(v).(type) {
	case string:
		return x, true
	case map[string]any:
		if depth >= 4 {
			return "", false
		}
		if inner, ok := evalLookup(x, keys...); ok {
			return evalText(inner, depth+1, keys...)
		}
	}
	return "", false
}

var (
	evalQuestionKeys = []string{"question", "query", "input", "prompt", "q"}
	evalAnswerKeys   = []string{"answer", "text", "output", "response", "result", "content"}
)

// evalQuestion returns the question in a flow input.
func evalQuestion(input any) (string, error) {
	if s, ok := evalText(input, 0, evalQuestionKeys...); ok {
		return s, nil
	}
	return "", fmt.Errorf("%w: no question in the input (%s); want a string or an object with a question, query or input key",
		ErrEvalInput, evalShape(input))
}

// evalAnswer returns the answer in a flow output.
func evalAnswer(output any) (string, error) {
	if output == nil {
		return "", fmt.Errorf("%w: the example has no output (did the flow fail?)", ErrEvalInput)
	}
	if s, ok := evalText(output, 0, evalAnswerKeys...); ok {
		return s, nil
	}
	return "", fmt.Errorf("%w: no answer in the output (%s); want a string or an object with an answer key",
		ErrEvalInput, evalShape(output))
}

// evalShape describes the JSON shape of v for an error message.
func evalShape(v any) string {
	switch x := evalGeneric(v).(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) > 8 {
			keys = append(keys[:8], "...")
		}
		return "an object with keys " + strings.Join(keys, ", ")
	}
	return fmt.Sprintf("%T", v)
}

// evalSources returns the output's sources (or citations) list.
func evalSources(output any) []any {
	m, ok := evalGeneric(output).(map[string]any)
	if !ok {
		return nil
	}
	v, _ := evalLookup(m, "sources", "citations")
	list, _ := v.([]any)
	return list
}

// evalSourceURLs returns the url of each of the output's sources; a source
// that is a plain string counts as its URL.
func evalSourceURLs(output any) []string {
	var urls []string
	for _, s := range evalSources(output) {
		switch x := s.(type) {
		case string:
			urls = append(urls, x)
		case map[string]any:
			if u, ok := evalLookup(x, "url", "href", "link"); ok {
				if us, ok := u.(string); ok && us != "" {
					urls = append(urls, us)
				}
			}
		}
	}
	return urls
}

// evalContext returns the context passages of an example: its Context
// entries, or else the output's context key or the texts of its sources.
func evalContext(ex ai.Example) []string {
	var out []string
	for _, c := range ex.Context {
		out = append(out, evalPassages(c)...)
	}
	if len(out) > 0 {
		return out
	}
	if m, ok := evalGeneric(ex.Output).(map[string]any); ok {
		if c, ok := evalLookup(m, "context"); ok {
			out = append(out, evalPassages(c)...)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, s := range evalSources(ex.Output) {
		if m, ok := s.(map[string]any); ok {
			out = append(out, evalPassages(m)...)
		}
	}
	return out
}

// evalPassages returns the non-empty texts in a context entry: a string,
// a list of entries, a Genkit document ({"content": [{"text": ...}]}) or an
// object with a text, content, excerpt, snippet or parentText key.
func evalPassages(v any) []string {
	switch x := evalGeneric(v).(type) {
	case string:
		if strings.TrimSpace(x) != "" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, e := range x {
			if m, ok := e.(map[string]any); ok && len(m) == 1 {
				if t, ok := m["text"].(string); ok { // a document part
					if strings.TrimSpace(t) != "" {
						out = append(out, t)
					}
					continue
				}
			}
			out = append(out, evalPassages(e)...)
		}
		return out
	case map[string]any:
		if c, ok := evalLookup(x, "parentText", "text", "content", "excerpt", "snippet", "passage"); ok {
			return evalPassages(c)
		}
	}
	return nil
}

// evalJudgeJSON returns the first JSON object in a judge reply: inside a
// ```json fence or bare, after any <think> block, with text before or
// after it ignored.
func evalJudgeJSON(reply string) (map[string]any, error) {
	s := reply
	if i := strings.LastIndex(s, "</think>"); i >= 0 {
		s = s[i+len("</think>"):]
	}
	candidates := []string{}
	if i := strings.Index(s, "```"); i >= 0 {
		fenced := s[i+3:]
		if nl := strings.IndexByte(fenced, '\n'); nl >= 0 {
			fenced = fenced[nl+1:]
		}
		if j := strings.Index(fenced, "```"); j >= 0 {
			fenced = fenced[:j]
		}
		candidates = append(candidates, fenced)
	}
	candidates = append(candidates, s)
	for _, c := range candidates {
		if obj, ok := evalFirstObject(c); ok {
			return obj, nil
		}
	}
	return nil, fmt.Errorf("%w: no JSON object in %q", ErrEvalReply, evalClip(reply, 200))
}

// evalFirstObject decodes the first JSON object starting at one of the
// first '{' positions of s; text after the object is ignored.
func evalFirstObject(s string) (map[string]any, bool) {
	const maxTries = 64
	from := 0
	for range maxTries {
		i := strings.IndexByte(s[from:], '{')
		if i < 0 {
			return nil, false
		}
		from += i
		dec := json.NewDecoder(strings.NewReader(s[from:]))
		var obj map[string]any
		if err := dec.Decode(&obj); err == nil && obj != nil {
			return obj, true
		}
		from++
	}
	return nil, false
}

// evalClip returns s cut to at most n bytes (on a rune boundary) with "..."
// when it was cut.
func evalClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

// evalNumber reads a judge's number: a JSON number or a string such as
// "4", " 0.75 ", "4/5" or "80%".
func evalNumber(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string:
		s := strings.TrimSpace(x)
		pct := strings.HasSuffix(s, "%")
		s = strings.TrimSuffix(s, "%")
		if i := strings.IndexByte(s, '/'); i >= 0 {
			s = s[:i]
		}
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return 0, false
		}
		if pct {
			f /= 100
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// evalVerdict reads a judge's yes/no verdict: a boolean, 1 or 0, or a
// string such as "yes", "supported", "no", "unsupported" (also German
// "ja"/"nein").
func evalVerdict(v any) (yes, ok bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case float64:
		if x == 1 || x == 0 {
			return x == 1, true
		}
	case string:
		s := strings.ToLower(strings.Trim(strings.TrimSpace(x), ".!\"'"))
		switch s {
		case "yes", "y", "true", "1", "supported", "support", "ja", "pass":
			return true, true
		case "no", "n", "false", "0", "unsupported", "not supported", "nein", "fail":
			return false, true
		}
	}
	return false, false
}
