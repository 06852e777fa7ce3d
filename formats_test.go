package engine

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

var formatsUpdate = flag.Bool("formats.update", false, "rewrite testdata/formats/*.golden.json from the readers' output")

// formatFixtures are the real documents under testdata/formats (see
// testdata/README.md for how each was made) with the reference text export
// each is scored against in ref/.
var formatFixtures = []string{
	"guide.md", "notes.txt", "notes-latin1.txt", "notes-utf16.txt", "report.odt",
	"slides.pptx", "slides.odp", "budget.xlsx", "budget.ods", "book.epub",
}

// TestFormatsGolden checks each fixture's paragraphs against its golden
// file; run with -formats.update to rewrite them after a deliberate change.
func TestFormatsGolden(t *testing.T) {
	for _, name := range formatFixtures {
		t.Run(name, func(t *testing.T) {
			paras, err := ExtractParagraphs(filepath.Join("testdata", "formats", name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(paras, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "formats", name+".golden.json")
			if *formatsUpdate {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestFormatsGolden -formats.update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("paragraphs differ from %s (rerun with -formats.update if intended):\n%s", golden, got)
			}
		})
	}
}

// TestFormatsFidelity scores each fixture's text against a reference text
// export made by LibreOffice or pandoc (testdata/formats/ref, see
// testdata/README.md) with word F1: the harmonic mean of the share of our
// words found in the reference and the share of the reference's words we
// found, words counted with multiplicity, lower-cased, split at anything
// but letters and digits. Table rows repeat their column labels by design
// ("Tour: Glacier tour | Guests: 612"); the labels of a row are counted
// only the first time a table's rows show them, as the reference has its
// header once. The scores are reported in docs/formats.md.
func TestFormatsFidelity(t *testing.T) {
	for _, name := range formatFixtures {
		t.Run(name, func(t *testing.T) {
			paras, err := ExtractParagraphs(filepath.Join("testdata", "formats", name))
			if err != nil {
				t.Fatal(err)
			}
			refName := name
			switch name {
			case "notes-latin1.txt", "notes-utf16.txt":
				refName = "notes.txt" // the same text in another encoding
			}
			ref, err := os.ReadFile(filepath.Join("testdata", "formats", "ref", refName+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			f1, p, r := wordF1(fidelityWords(paras), textWords(string(ref)))
			t.Logf("%s: word F1 %.3f (precision %.3f, recall %.3f)", name, f1, p, r)
			if f1 < 0.97 {
				t.Errorf("%s: word F1 %.3f < 0.97 (precision %.3f, recall %.3f)", name, f1, p, r)
			}
		})
	}
}

// fidelityWords returns the words of paras, a table row's column labels
// counted only while they differ from the previous row's (see
// TestFormatsFidelity).
func fidelityWords(paras []Paragraph) []string {
	var words []string
	var prevLabels string
	for _, p := range paras {
		cells := strings.Split(p.Text, " | ")
		var labels []string
		var values []string
		for _, c := range cells {
			if l, v, ok := strings.Cut(c, ": "); ok && len(cells) > 1 {
				labels = append(labels, l)
				values = append(values, v)
			} else {
				values = append(values, c)
			}
		}
		key := strings.Join(labels, "\x00")
		if len(labels) > 0 && key == prevLabels {
			words = append(words, textWords(strings.Join(values, " "))...)
			continue
		}
		prevLabels = key
		words = append(words, textWords(p.Text)...)
	}
	return words
}

// textWords splits s into lower-case words of letters and digits.
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// wordF1 returns the multiset word F1 of got against want, with its
// precision and recall.
func wordF1(got, want []string) (f1, precision, recall float64) {
	counts := map[string]int{}
	for _, w := range want {
		counts[w]++
	}
	common := 0
	for _, w := range got {
		if counts[w] > 0 {
			counts[w]--
			common++
		}
	}
	if len(got) == 0 || len(want) == 0 || common == 0 {
		return 0, 0, 0
	}
	precision = float64(common) / float64(len(got))
	recall = float64(common) / float64(len(want))
	return 2 * precision * recall / (precision + recall), precision, recall
}

func TestWordF1(t *testing.T) {
	if f, _, _ := wordF1(textWords("a b c"), textWords("A, b; c.")); f != 1 {
		t.Errorf("identical words: F1 %v", f)
	}
	if f, p, r := wordF1(textWords("a a b"), textWords("a b c d")); r != 0.5 || p < 0.666 || p > 0.667 || f < 0.571 || f > 0.572 {
		t.Errorf("F1 %v precision %v recall %v", f, p, r)
	}
	if got := fidelityWords([]Paragraph{{Text: "A: 1 | B: 2"}, {Text: "A: 3 | B: 4"}}); strings.Join(got, " ") != "a 1 b 2 3 4" {
		t.Errorf("labels counted once per table: %q", got)
	}
}

// TestLegacyFormatsRefused checks that the legacy binary Office formats and
// RTF are refused without a parse attempt, with an error that names the
// format and says how to convert it.
func TestLegacyFormatsRefused(t *testing.T) {
	dir := t.TempDir()
	for name, want := range map[string][]string{
		"old.doc":   {"Word", ".doc", "convert it to .docx or .odt", "soffice --headless --convert-to docx"},
		"OLD.XLS":   {"Excel", ".xls", "convert it to .xlsx or .ods", "soffice --headless --convert-to xlsx"},
		"deck.ppt":  {"PowerPoint", ".ppt", "convert it to .pptx or .odp", "soffice --headless --convert-to pptx"},
		"memo.rtf":  {"Rich Text Format", ".rtf", "convert it to .docx or .odt", "soffice --headless --convert-to docx"},
		"empty.doc": {"Word", ".doc"},
	} {
		path := filepath.Join(dir, name)
		// An OLE2 compound file header (or nothing): content is never read.
		content := []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
		if name == "empty.doc" {
			content = nil
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ExtractParagraphs(path)
		if !errors.Is(err, ErrUnsupportedFormat) {
			t.Fatalf("%s: got %v, want ErrUnsupportedFormat", name, err)
		}
		for _, w := range append(want, name) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", name, err, w)
			}
		}
		// NewFileSource gives the same advice without reading, as the
		// Reason of its *DocumentError (what an app shows for a file it
		// skips).
		advice := legacyFormatAdvice(filepath.Ext(name))
		if advice == "" || !strings.Contains(err.Error(), advice) {
			t.Errorf("%s: legacyFormatAdvice = %q, not in the error %q", name, advice, err)
		}
		var de *DocumentError
		if _, serr := NewFileSource(path); !errors.As(serr, &de) || !errors.Is(serr, ErrUnsupportedFormat) || !strings.Contains(de.Reason, advice) {
			t.Errorf("%s: NewFileSource error %v, want a *DocumentError whose Reason holds %q", name, serr, advice)
		}
	}
	for _, ext := range []string{".docx", ".pdf", "", ".exe"} {
		if advice := legacyFormatAdvice(ext); advice != "" {
			t.Errorf("legacyFormatAdvice(%q) = %q, want \"\"", ext, advice)
		}
	}
}
