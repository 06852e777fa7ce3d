package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Filter restricts a Searcher's results to some chunks, the same way on
// every store. All its conditions must hold (AND); within one condition any
// listed value is enough (OR). A nil *Filter or the zero Filter keeps every
// chunk.
type Filter struct {
	// Sources, when not empty, keeps chunks whose MetaSource value is one
	// of them.
	Sources []string
	// URLPrefix, when not "", keeps chunks whose MetaURL value starts with
	// it (byte-wise, case-sensitive).
	URLPrefix string
	// Metadata maps a metadata key to the values allowed for it: a chunk is
	// kept when, for every key, its value's text form is one of the listed
	// values. The text form of a string is the string itself, of a number
	// its shortest decimal form ("3", "2.5"), of a boolean "true"/"false";
	// a chunk without the key, or with a list or object there, is dropped.
	// A key mapped to no values drops every chunk.
	Metadata map[string][]string
}

// empty reports whether f keeps every chunk.
func (f *Filter) empty() bool {
	return f == nil || (len(f.Sources) == 0 && f.URLPrefix == "" && len(f.Metadata) == 0)
}

// filterValueText returns the text form of a metadata value Filter compares
// (the form Postgres' ->> operator gives for JSON scalars), ok false for
// nil, lists and objects.
func filterValueText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case uint, uint32, uint64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// match reports whether a chunk with metadata meta passes f.
func (f *Filter) match(meta map[string]any) bool {
	if f.empty() {
		return true
	}
	if len(f.Sources) > 0 && !slices.Contains(f.Sources, metaString(meta, MetaSource)) {
		return false
	}
	if f.URLPrefix != "" && !strings.HasPrefix(metaString(meta, MetaURL), f.URLPrefix) {
		return false
	}
	for k, allowed := range f.Metadata {
		v, ok := filterValueText(meta[k])
		if !ok || !slices.Contains(allowed, v) {
			return false
		}
	}
	return true
}

// predicate returns f.match for the stores that take a metadata predicate,
// nil when f keeps every chunk.
func (f *Filter) predicate() func(meta map[string]any) bool {
	if f.empty() {
		return nil
	}
	return f.match
}

// pgWhere translates f into a SQL condition on a PgvecStore's chunk table
// (its generated url and source columns and the metadata jsonb), with
// placeholders numbered from first, and the arguments they bind. An empty
// filter gives "" and no arguments. Keys and values are always bound, never
// spliced into the SQL.
func (f *Filter) pgWhere(first int) (string, []any) {
	if f.empty() {
		return "", nil
	}
	var conds []string
	var args []any
	next := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(first+len(args)-1)
	}
	if len(f.Sources) > 0 {
		conds = append(conds, "source = ANY("+next(f.Sources)+"::text[])")
	}
	if f.URLPrefix != "" {
		conds = append(conds, "starts_with(url, "+next(f.URLPrefix)+"::text)")
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable statement text for the plan cache
	for _, k := range keys {
		allowed := f.Metadata[k]
		if allowed == nil {
			allowed = []string{}
		}
		// jsonb_typeof keeps lists and objects out, as match does.
		key := next(k)
		conds = append(conds, "(jsonb_typeof(metadata -> "+key+"::text) IN ('string', 'number', 'boolean') AND (metadata ->> "+
			key+"::text) = ANY("+next(allowed)+"::text[]))")
	}
	return strings.Join(conds, " AND "), args
}
