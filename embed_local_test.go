package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

func localEmbedTexts(t testing.TB, e ai.Embedder, texts ...string) [][]float32 {
	t.Helper()
	req := &ai.EmbedRequest{}
	for _, s := range texts {
		req.Input = append(req.Input, ai.DocumentFromText(s, nil))
	}
	resp, err := e.Embed(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float32, len(resp.Embeddings))
	for i, emb := range resp.Embeddings {
		out[i] = emb.Embedding
	}
	return out
}

func localCosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot // vectors are unit length
}

func TestLocalEmbedderBasics(t *testing.T) {
	e := NewLocalEmbedder(256)
	if e.Name() != "askyourdocs/local-hash-256" || NewLocalEmbedder(0).Name() != localEmbedderName(defaultLocalEmbedderDim) {
		t.Errorf("names %q %q", e.Name(), NewLocalEmbedder(0).Name())
	}
	v := localEmbedTexts(t, e,
		"Die Kündigungsfrist beträgt drei Monate.",
		"Die Kündigungsfrist beträgt drei Monate.",
		"", "  ...  ",
		"CAFÉ  Straße",
		"cafe strasse",
	)
	for i, x := range v {
		if len(x) != 256 {
			t.Fatalf("vector %d has %d dims", i, len(x))
		}
		var n float64
		for _, f := range x {
			n += float64(f) * float64(f)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm² %v", i, n)
		}
	}
	if localCosine(v[0], v[1]) < 0.99999 {
		t.Error("not deterministic")
	}
	if v[2][0] != 1 || v[3][0] != 1 {
		t.Error("text without words does not get the first unit vector")
	}
	if localCosine(v[4], v[5]) < 0.99999 {
		t.Errorf("case, accents and ß not normalised: cos %v", localCosine(v[4], v[5]))
	}
}

func TestLocalEmbedderLexicalSimilarity(t *testing.T) {
	e := NewLocalEmbedder(512)
	v := localEmbedTexts(t, e,
		"Wie lange ist die Kündigungsfrist für Mietverträge?",       // 0 query
		"Die Kündigungsfrist für Mietverträge beträgt drei Monate.", // 1 relevant
		"Das Schwimmbad öffnet im Sommer um neun Uhr.",              // 2 unrelated
		"Kündigungsfristen von Mietvertrags-Kündigungen",            // 3 inflected forms
	)
	rel, unrel, infl := localCosine(v[0], v[1]), localCosine(v[0], v[2]), localCosine(v[0], v[3])
	if rel <= unrel+0.2 {
		t.Errorf("relevant %.3f not clearly above unrelated %.3f", rel, unrel)
	}
	if infl <= unrel+0.1 {
		t.Errorf("inflected %.3f not above unrelated %.3f (n-grams should bridge inflections)", infl, unrel)
	}
}

func TestLocalEmbedderRegistersInGenkit(t *testing.T) {
	g := genkit.Init(context.Background())
	e := NewLocalEmbedder(64)
	genkit.RegisterAction(g, e)
	found := genkit.LookupEmbedder(g, e.Name())
	if found == nil {
		t.Fatal("not registered")
	}
	resp, err := genkit.Embed(context.Background(), g, ai.WithEmbedder(found), ai.WithTextDocs("hallo welt"))
	if err != nil {
		t.Fatal(err)
	}
	want := localEmbedTexts(t, e, "hallo welt")[0]
	if localCosine(resp.Embeddings[0].Embedding, want) < 0.99999 {
		t.Error("registered action embeds differently")
	}
}

func TestLocalEmbedderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewLocalEmbedder(8).Embed(ctx, &ai.EmbedRequest{Input: []*ai.Document{ai.DocumentFromText("x", nil)}})
	if err == nil {
		t.Error("cancelled context ignored")
	}
}

func FuzzLocalEmbedder(f *testing.F) {
	for _, s := range []string{"", "a", "Grüße aus Köln", "ﬁ ligature", "\xff\xfe", "日本語のテキスト", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	e := NewLocalEmbedder(32)
	f.Fuzz(func(t *testing.T, s string) {
		v := localEmbedTexts(t, e, s)[0]
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite component for %q", s)
			}
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Fatalf("norm² %v for %q", n, s)
		}
	})
}

// localBenchDocs returns n pseudo-random German-ish chunks of about 1000
// bytes, from a fixed seed.
func localBenchDocs(n int) []*ai.Document {
	words := strings.Fields("die der das und ist Kündigungsfrist Mietvertrag beträgt Monate Datenbank Abfrage Index Vektor Suche Dokument Absatz Seite Tabelle Übersicht Verwaltung Antrag Frist Gebühr Zahlung Konto")
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]*ai.Document, n)
	for i := range docs {
		var b strings.Builder
		for b.Len() < 1000 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		docs[i] = ai.DocumentFromText(b.String(), nil)
	}
	return docs
}

func BenchmarkLocalEmbedder(b *testing.B) {
	for _, dim := range []int{256, 512, 1024} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			docs := localBenchDocs(100)
			var bytes int64
			for _, d := range docs {
				bytes += int64(len(DocText(d)))
			}
			e := NewLocalEmbedder(dim)
			req := &ai.EmbedRequest{Input: docs}
			b.SetBytes(bytes)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(docs))/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
