// Command lists dumps, for each case of a dev-eval dataset, the ranked
// chunks the CLI's vector and keyword retrievers return from the CLI's
// SQLite index (built-in embedder, the CLI's stop words), so that
// scripts/dev-eval/fusion.py can compare fusion settings offline without
// re-running the CLI per setting. Output: one JSON object per line,
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
	"strings"

	"github.com/firebase/genkit/go/ai"

	askyourdocs "github.com/dbis-ilm/askyourdocs"
)

// stopWords mirror cmd/askyourdocs's cliStopWords (unexported there).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again all also am an and any are as at be because been before being below between both
but by can cannot could did do does doing done down during each either else ever every few for from further
get gets getting give go goes had has have having he her here hers him his how however i if in into is it its
itself just least less let like may me might more most much must my need no nor not now of off on once only or
other our out over own per please same shall she should so some such than that the their them then there these
they this those through to too under until up upon us use used using very via was way we were what when where
whether which while who whom whose why will with within without would yes yet you your
tell show explain describe find want know mean means
der die das den dem des ein eine einen einem einer eines und oder aber auch als am an auf aus bei bin bis da
dass du er es für hat habe haben ich ihr im in ist ja kann können man mit nach nicht noch nur ob sie sind so
über um von vor war was welche welcher welches wenn wer wie wir wird wo zu zum zur
`) {
		m[w] = true
	}
	return m
}()

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
		vec, err := s.Retrieve(ctx, askyourdocs.QueryDocument(c.Question), depth)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.ID, err)
		}
		kw, err := s.KeywordSearch(ctx, c.Question, depth, stopWords, nil)
		if err != nil {
			return fmt.Errorf("case %s: %w", c.ID, err)
		}
		line, _ := json.Marshal(map[string]any{"id": c.ID, "relevant": c.Relevant, "vector": conv(vec), "keyword": conv(kw)})
		out.Write(append(line, '\n'))
	}
	return nil
}
