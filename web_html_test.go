package engine

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// webUpdateFlag is the -update flag that rewrites golden files. Another
// area of the package may define a flag of that name in a file initialised
// earlier; it is shared then instead of being defined twice.
var webUpdateFlag = func() *flag.Flag {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
	return flag.Lookup("update")
}()

// htmlUpdateRequested reports whether -update was given.
func htmlUpdateRequested() bool { return webUpdateFlag.Value.String() == "true" }

func TestHTMLToStructuredTextGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "html", "*.html"))
	if err != nil || len(files) < 6 {
		t.Fatalf("fixtures: %v (%d files)", err, len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".html")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			paras, err := HTMLToStructuredText(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			htmlCheckInvariants(t, paras)
			got, err := json.MarshalIndent(paras, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "html", name+".golden.json")
			if htmlUpdateRequested() {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestHTMLToStructuredTextGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("paragraphs of %s differ from %s (rerun with -update after checking):\n%s", file, golden, htmlFirstDiff(string(want), string(got)))
			}
		})
	}
}

// htmlFirstDiff shows the first differing line of two texts.
func htmlFirstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl
		}
	}
	return "(no line differs)"
}

// htmlCheckInvariants checks what must hold for any input.
func htmlCheckInvariants(t testing.TB, paras []Paragraph) {
	t.Helper()
	for i, p := range paras {
		switch {
		case p.Text == "":
			t.Fatalf("paragraph %d is empty", i)
		case strings.TrimSpace(p.Text) != p.Text:
			t.Fatalf("paragraph %d has surrounding space: %q", i, p.Text)
		case strings.Contains(p.Text, "  "):
			t.Fatalf("paragraph %d has a double space: %q", i, p.Text)
		case strings.ContainsAny(p.Text, "\n\t\r"):
			t.Fatalf("paragraph %d has a line break or tab: %q", i, p.Text)
		case !utf8.ValidString(p.Text):
			t.Fatalf("paragraph %d is not valid UTF-8: %q", i, p.Text)
		case p.PageNum != 0:
			t.Fatalf("paragraph %d has PageNum %d", i, p.PageNum)
		case p.Heading && !strings.HasSuffix(p.Breadcrumb, p.Text):
			t.Fatalf("heading %d %q: breadcrumb %q does not end with it", i, p.Text, p.Breadcrumb)
		}
	}
}
