package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// TestCLIAndSDKRankAlike indexes documents with the CLI and checks that
// its search and a Go program calling askyourdocs.Search with nil options
// on the same index return the same chunks in the same order, with the
// same ranks in the two lists.
func TestCLIAndSDKRankAlike(t *testing.T) {
	work := t.TempDir()
	data := filepath.Join(work, "index")
	if r := runCLI(t, work, nil, "index", "--data", data, absPath(t, "../../testdata/cli/docs")); r.code != 0 {
		t.Fatalf("index:\n%s", r)
	}
	ctx := t.Context()
	for _, q := range []string{"minimum age for a single kayak", "How much does a canoe cost?", "cancel booking refund", "opening hours"} {
		r := runCLI(t, work, nil, "search", "--data", data, "--json", q)
		if r.code != 0 {
			t.Fatalf("search %q:\n%s", q, r)
		}
		var out searchOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("search output: %v\n%s", err, r)
		}
		store, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(cliLocalEmbedderDim), sqlitePath(data, storeName), nil)
		if err != nil {
			t.Fatal(err)
		}
		found, err := askyourdocs.Search(ctx, store, q, nil)
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		hits := found.Hits
		var cli, sdk []string
		for _, res := range out.Results {
			cli = append(cli, res.Text+"\x00"+strconv.Itoa(res.VectorRank)+"/"+strconv.Itoa(res.KeywordRank))
		}
		for _, h := range hits {
			sdk = append(sdk, h.Text+"\x00"+strconv.Itoa(h.VectorRank)+"/"+strconv.Itoa(h.TextRank))
		}
		if len(cli) == 0 || !slices.Equal(cli, sdk) {
			t.Errorf("%q: the CLI and Search rank differently:\n%q\n%q", q, cli, sdk)
		}
	}
}
