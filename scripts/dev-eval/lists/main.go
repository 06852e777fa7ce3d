// Command lists dumps, for each case of a dev-eval dataset, the ranked
// chunks the CLI's vector and keyword retrievers return from the CLI's
// SQLite index (built-in embedder, the CLI's stop words), for comparing
// the lists of two indexes (scripts/dev-eval/grid runs the fusion grid). Output: one JSON object per line,
// {"id", "relevant", "vector": [[url, textKey]...], "keyword": [...]}.
//
//	go run ./scripts/dev-eval/lists -db WORK/SET/index/askyourdocs.db -dataset WORK/SET/dataset.json > WORK/SET/lists.jsonl
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

type dataset struct {
	Cases []struct {
		ID       string   `json:"id"`
		Question string   `json:"question"`
		Relevant []string `json:"relevant"`
	} `json:"cases"`
}

type entry [2]string // url, key of the text (RRF deduplicates by text)

func main() {
	db := flag.String("db", "", "the CLI's SQLite index")
	dsPath := flag.String("dataset", "", "dataset JSON")
	depth := flag.Int("depth", 40, "chunks per retriever")
	dim := flag.Int("dim", 1024, "dimension of the built-in embedder (the CLI's default)")
	flag.Parse()
	if err := run(*db, *dsPath, *depth, *dim); err != nil {
		fmt.Fprintln(os.Stderr, "lists:", err)
		os.Exit(1)
	}
}

func run(db, dsPath string, depth, dim int) error {
	ctx := context.Background()
	raw, err := os.ReadFile(dsPath)
	if err != nil {
		return err
	}
	var ds dataset
	if err := json.Unmarshal(raw, &ds); err != nil {
		return fmt.Errorf("%s: %w", dsPath, err)
	}
	s, err := askyourdocs.NewSQLiteStore(ctx, nil, askyourdocs.NewLocalEmbedder(dim), db, &askyourdocs.SQLiteOptions{Name: "askyourdocs"})
	if err != nil {
		return err
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	conv := func(docs []*ai.Document) []entry {
		es := make([]entry, len(docs))
		for i, d := range docs {
			url, _ := d.Metadata[askyourdocs.MetaURL].(string)
			h := sha256.Sum256([]byte(askyourdocs.DocText(d)))
			es[i] = entry{url, hex.EncodeToString(h[:8])}
		}
		return es
	}
	for _, c := range ds.Cases {
		vec, err := s.SearchVector(ctx, c.Question, depth, nil)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.ID, err)
		}
		kw, err := s.SearchText(ctx, c.Question, depth, nil)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.ID, err)
		}
		line, _ := json.Marshal(map[string]any{"id": c.ID, "relevant": c.Relevant, "vector": conv(vec), "keyword": conv(kw)})
		out.Write(append(line, '\n'))
	}
	return nil
}
