package engine

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// looksLikeContentsReference is looksLikeContents as it was written
// first, every pattern on every text: the fast version must agree with it.
func looksLikeContentsReference(text string) bool {
	if len(contentsLeader().FindAllStringIndex(text, 4)) >= 3 {
		return true
	}
	if len(contentsIndexRef().FindAllStringIndex(text, -1)) >= 8 {
		return true
	}
	if contentsEntries(text) {
		return true
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) < 5 {
		return false
	}
	n := 0
	for _, l := range lines {
		if contentsLine().MatchString(strings.TrimSpace(l)) {
			n++
		}
	}
	return n*10 >= len(lines)*6
}

// excerptScoreReference is Excerpt's sentence score as it was written
// first (lower-case, split, every term against every word).
func excerptScoreReference(sentence string, terms []string) int {
	words := strings.FieldsFunc(strings.ToLower(sentence), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	score := 0
	for _, t := range terms {
		tp := excerptPrefix(t)
		for _, w := range words {
			if w == t || (tp != "" && excerptPrefix(w) == tp) {
				score++
				break
			}
		}
	}
	return score
}

// fastPathTexts returns texts to compare the fast paths on: windows of
// the text files under testdata (so real prose, tables, contents pages
// and markup) and random texts built from the pieces the patterns look
// for (leaders, page numbers, ", 12" references, line breaks, non-ASCII
// letters, invalid UTF-8).
func fastPathTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil || len(raw) > 1<<20 || !utf8.Valid(raw[:min(len(raw), 512)]) {
			return nil
		}
		s := string(raw)
		for _, w := range []int{200, 1200} {
			for i := 0; i < len(s); i += w {
				out = append(out, s[i:min(len(s), i+w)])
			}
		}
		return nil
	})
	pieces := []string{"Intro", " ", "  ", "\n", "\n\n", ".", ". ", "..", "....", ". . . .", "…", "……", ", ", ", 12", ", 3–7",
		"12", "1.2 ", "1.2.3. ", "9999", "12345", "Ärger", "ÉCOLE", "İstanbul", "\xff", "\t", "kayak", "z. B.", "?", "!", "|", "–"}
	r := rand.New(rand.NewPCG(26, 4))
	for range 20000 {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestLooksLikeContentsFastPath checks that looksLikeContents, which runs
// each pattern only where it can match, decides as the plain version on
// real and random texts.
func TestLooksLikeContentsFastPath(t *testing.T) {
	texts := fastPathTexts(t)
	trues := 0
	for _, text := range texts {
		got, want := looksLikeContents(text), looksLikeContentsReference(text)
		if got != want {
			t.Fatalf("looksLikeContents(%q) = %v, the plain patterns say %v", text, got, want)
		}
		if want {
			trues++
		}
	}
	if trues == 0 || trues == len(texts) {
		t.Fatalf("%d of %d texts look like contents: the comparison tells nothing", trues, len(texts))
	}
}

// TestExcerptScoreFastPath checks that the sentence score Excerpt and
// BestExcerpt use agrees with the plain one on real and random texts and
// questions.
func TestExcerptScoreFastPath(t *testing.T) {
	texts := fastPathTexts(t)
	questions := []string{"manual input values by hand", "Kayak booking refunds", "ärger école istanbul 12345",
		"how do I cancel a booking", "z. B. intro", "Introduction", ""}
	r := rand.New(rand.NewPCG(4, 26))
	for i := range 200 {
		questions = append(questions, texts[r.IntN(len(texts))]+" "+texts[i])
	}
	scored := 0
	for i, text := range texts {
		terms := excerptTerms(questions[i%len(questions)])
		ts := make([]excerptTerm, len(terms))
		for k, w := range terms {
			ts[k] = excerptTerm{word: w, prefix: excerptPrefix(w)}
		}
		got, want := excerptScoreTerms(text, ts, make([]bool, len(ts))), excerptScoreReference(text, terms)
		if got != want {
			t.Fatalf("score of %q for %q = %d, the plain score is %d", text, terms, got, want)
		}
		if want > 0 {
			scored++
		}
	}
	if scored == 0 {
		t.Fatal("no text matched any term: the comparison tells nothing")
	}
}

// TestJoinFieldsFastPath checks joinFields against strings.Join of
// strings.Fields on real and random texts.
func TestJoinFieldsFastPath(t *testing.T) {
	texts := append(fastPathTexts(t), "", " ", "a", " a", "a ", "a  b", "a\u00a0b", "\u0085", "a\u3000 b", "\xff \xfe", "a b c")
	same := 0
	for _, text := range texts {
		if got, want := joinFields(text), strings.Join(strings.Fields(text), " "); got != want {
			t.Fatalf("joinFields(%q) = %q, want %q", text, got, want)
		}
		if fieldsJoined(text) {
			same++
		}
	}
	if same == 0 || same == len(texts) {
		t.Fatalf("%d of %d texts need no change: the fast path is not tried both ways", same, len(texts))
	}
}
