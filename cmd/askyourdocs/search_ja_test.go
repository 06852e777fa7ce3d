package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSearchJapaneseManual: in a 12-page Japanese manual (a fixture made
// by the engine's TestJapaneseManualFixture), words that stand inside a
// longer clause of page 10 find page 10 first, in keyword and in fusion
// search: 受験者数 ("number of examinees") and 試験問題用紙を印刷 ("print
// the exam sheets"), which only a query equal to a whole heading matched
// when a run of characters was one term.
func TestSearchJapaneseManual(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "idx")
	var out, errb bytes.Buffer
	if code := run(ctx, []string{"--data", data, "index", "../../testdata/cli/ja"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("index: %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, q := range []string{"受験者数", "試験問題用紙を印刷", "受験者数はどこで入力しますか"} {
		for _, mode := range []string{"keyword", "fusion"} {
			out.Reset()
			errb.Reset()
			if code := run(ctx, []string{"--data", data, "--json", "search", "--mode", mode, q}, nil, &out, &errb); code != exitOK {
				t.Fatalf("search %q: %d %s", q, code, errb.String())
			}
			var res struct {
				Results []searchResult `json:"results"`
			}
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Results) == 0 || res.Results[0].Pages != "10" {
				var pages []string
				for _, r := range res.Results {
					pages = append(pages, r.Pages)
				}
				t.Errorf("%s %q: pages %v, want page 10 first", mode, q, pages)
			}
		}
	}
}
