package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// listTestDocs is a small manual of twelve commands, each a page of its
// own whose text uses its description's words spread out, and an
// overview page listing every command with its description, a line
// each, as git(1) and perltoc do.
func listTestDocs() []*ai.Document {
	verbs := []string{"pack", "unpack", "verify", "split", "merge", "index", "sign", "mirror", "prune", "export", "import", "rotate"}
	var docs []*ai.Document
	var list strings.Builder
	for i, v := range verbs {
		name := "zq-" + v
		desc := fmt.Sprintf("%s archive members with the %s codec", v, []string{"fast", "slow", "lossless", "streaming"}[i%4])
		fmt.Fprintf(&list, "%s(1) %s.\n", name, strings.ToUpper(desc[:1])+desc[1:])
		// The page has its description's words but one (the codec's
		// kind), so without the rule the overview, which has them all,
		// would rank first.
		body := fmt.Sprintf("%s(1)\n\nUsage: %s [options] FILE\n\nThe members of an archive are read one by one; this command is the one to %s them, "+
			"%s each member. Which codec runs is an option. See zq-pack(1).", name, name, v, v)
		docs = append(docs, ai.DocumentFromText(body, map[string]any{MetaSource: "zq", MetaURL: "file:///zq/man1/" + name + ".1.txt"}))
	}
	docs = append(docs, ai.DocumentFromText("zq(7)\n\n"+list.String(), map[string]any{
		MetaSource: "zq", MetaURL: "file:///zq/man7/zq.7.txt", MetaBreadcrumb: "zq(7) > Packing commands overview",
	}))
	return docs
}

// TestListChunksComeLast checks the list rule on every store: a question
// describing a command finds the command's page before the overview that
// holds the description word for word, and a question naming the
// overview's own section still finds the overview first.
func TestListChunksComeLast(t *testing.T) {
	ctx := context.Background()
	docs := listTestDocs()
	stores := map[string]Searcher{}
	local, err := NewLocalvecStore(genkit.Init(ctx), "lists", newTestEmbedder(8), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	stores["localvec"] = local
	lite, err := NewSQLiteStore(ctx, nil, newTestEmbedder(8), filepath.Join(t.TempDir(), "lists.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	stores["sqlite"] = lite
	if pgTestDSNOptional(t) != "" {
		stores["pgvector"] = pgTestStoreWith(t, newTestEmbedder(8), 8, nil)
	}
	for name, s := range stores {
		if err := s.Index(ctx, docs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []int{1, 5, 100} {
			got, err := s.SearchText(ctx, "verify archive members with the lossless codec", k, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].Metadata[MetaURL] != "file:///zq/man1/zq-verify.1.txt" {
				t.Errorf("%s, k %d: describing zq-verify, first %v; want its page before the overview", name, k, urlsOf(got))
			}
			if k == 100 && !strings.Contains(strings.Join(urlsOf(got), " "), "zq.7.txt") {
				t.Errorf("%s: the overview is no longer found at all: %v", name, urlsOf(got))
			}
		}
		got, err := s.SearchText(ctx, "packing commands overview", 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Metadata[MetaURL] != "file:///zq/man7/zq.7.txt" {
			t.Errorf("%s: a question naming the overview's section: first %v, want the overview", name, urlsOf(got))
		}
	}
}

// urlsOf returns the URLs of docs.
func urlsOf(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i], _ = d.Metadata[MetaURL].(string)
	}
	return out
}

// TestPageName checks the names pages are mentioned by.
func TestPageName(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/share/man/man1/git-add.1.txt":       "git-add",
		"corpus/man3/IO::Socket.3perl.txt":        "io::socket",
		"corpus/man7/EVP_MD-SHA1.7ssl.txt":        "evp_md-sha1",
		"https://example.com/docs/Install.html#a": "install",
		"https://example.com/docs/guide/":         "guide",
		"file:///x/ls.1.gz":                       "",
		"file:///x/tar.1.gz":                      "tar",
		"C:\\docs\\perlsyn.1.txt":                 "perlsyn",
		"":                                        "",
		"file:///x/1.4.2.html":                    "1.4",
		"file:///x/README.md":                     "readme",
	} {
		if got := pageName(in); got != want {
			t.Errorf("pageName(%q) = %q, want %q", in, got, want)
		}
	}
}
