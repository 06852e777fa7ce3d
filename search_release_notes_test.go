package engine

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
)

func TestIsReleaseNotesPage(t *testing.T) {
	for crumb, want := range map[string]bool{
		"Release Notes > Version 1.4.2 (2022-11-01)":       true,
		"Django 1.11 release notes > Python compatibility": true,
		"Change history for Celery 2.2 > 2.2.7":            true,
		"What’s new in Celery 3.0 (Chiastic Slide)":        true,
		"What's New In Python 3.12":                        true,
		"A.57. Release 4.0.1 > A.57.1. Changes":            true,
		"Changelog":                                        true,
		"CHANGELOG > 2.0.0":                                true,
		"News":                                             true,
		"Changes in version 2":                             true,
		"3.1 Release 3.1":                                  true,
		"Tasks > Purging tasks":                            false,
		"Release process":                                  false,
		"Creating a release":                               false,
		"Command history > Release":                        false,
		"Documentation Changes":                            false,
		"Newsletters":                                      false,
		"Versioning policy":                                false,
		"":                                                 false,
	} {
		if got := isReleaseNotesPage(crumb); got != want {
			t.Errorf("isReleaseNotesPage(%q) = %v, want %v", crumb, got, want)
		}
	}
}

func TestAsksAboutChanges(t *testing.T) {
	for q, want := range map[string]bool{
		"How do I purge all waiting tasks?":            false,
		"Can I use decorators with tasks?":             false,
		"backend weight":                               false,
		"max_log_file_size":                            false,
		"What changed in the purge command?":           true,
		"What's new in 3.0?":                           true,
		"Which version added task decorators?":         true,
		"Why was the --purge flag removed?":            true,
		"How do I upgrade from 4.4 to 5.0?":            true,
		"How do I migrate my tasks?":                   true,
		"Since when does purge discard waiting tasks?": true,
		"release checklist":                            true,
		"deprecated settings":                          true,
	} {
		if got := asksAboutChanges().MatchString(q); got != want {
			t.Errorf("asksAboutChanges(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestNamesHeading(t *testing.T) {
	h := SearchHit{Section: "Release Notes > Version 1.4 > Hooks (#2978)",
		Doc: ai.DocumentFromText("x", map[string]any{MetaHeadings: "Maintenance team\n3.2 Feature upgrades¶"})}
	for q, want := range map[string]bool{
		"Hooks (#2978)":      true,
		"  hooks   (#2978) ": true,
		"Maintenance team":   true,
		"feature upgrades":   true,
		"Hooks":              false,
		"Release Notes":      false,
		"Version 1.4":        false,
		"maintenance":        false,
		"":                   false,
	} {
		if got := namesHeading(h, q); got != want {
			t.Errorf("namesHeading(%q) = %v, want %v", q, got, want)
		}
	}
}

// releaseNotesCorpus is a manual with a how-to page on purging tasks and
// release notes whose short entries hold the question's words closer
// together than the how-to page does, plus filler pages.
func releaseNotesCorpus() (docs []*ai.Document, howto, note string) {
	add := func(text, url, crumb string) {
		docs = append(docs, ai.DocumentFromText(text, map[string]any{MetaURL: url, MetaSource: "manual", MetaBreadcrumb: crumb}))
	}
	howto = "Purging queues\nThe purge command discards every message of the queues the worker consumes from. " +
		"Use it to start from an empty queue: messages are lost for good, so stop the producers first, then run " +
		"the command and confirm. Tasks already received by a worker are not affected; revoke them instead."
	add(howto, "https://docs.example/userguide/purging.html", "Workers guide > Purging queues")
	note = "Purge waiting tasks: the purge command now purges all waiting tasks."
	add(note, "https://docs.example/history/changelog-2.2.html", "Change history for Celery 2.2 > Purging waiting tasks")
	add("Other fixes: the worker no longer hangs at shutdown; waiting for the broker times out.",
		"https://docs.example/history/changelog-2.2.html", "Change history for Celery 2.2 > 2.2.6")
	for i, topic := range strings.Fields("routing signals beat canvas logging testing security monitoring") {
		add(fmt.Sprintf("%s\nThe %s guide explains %s for workers and tasks, with examples%s.", topic, topic, topic,
			strings.Repeat(" and notes", i)), "https://docs.example/userguide/"+topic+".html", "Workers guide > "+topic)
	}
	return docs, howto, note
}

// TestSearchDemotesReleaseNotes checks, on every store, that a question
// and a keyword query rank the how-to page above a release-notes entry
// that holds all their words (which ranks first without the demotion),
// and that a question about changes and the entry's own heading keep the
// release notes first.
func TestSearchDemotesReleaseNotes(t *testing.T) {
	corpus, howto, note := releaseNotesCorpus()
	for _, name := range []string{"localvec", "sqlite", "pgvector"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := indexedTestStore(t, name, NewLocalEmbedder(256), 256, corpus)
			search := func(q string, o SearchOptions) ([]SearchHit, SearchReport) {
				t.Helper()
				hits, rep, err := searchReported(ctx, s, q, &o)
				if err != nil {
					t.Fatal(err)
				}
				return hits, rep
			}
			for _, q := range []string{"How do I purge all waiting tasks?", "purge waiting tasks"} {
				hits, rep := search(q, SearchOptions{ReleaseNotesWeight: 1})
				if hitRank(hits, note) != 1 || rep.ReleaseNotesDemoted != 0 {
					t.Fatalf("%q without the demotion: release note at %d (report %d); the test proves nothing", q, hitRank(hits, note), rep.ReleaseNotesDemoted)
				}
				for _, mode := range []SearchMode{SearchModeFusion, SearchModeKeyword} {
					hits, rep = search(q, SearchOptions{Mode: mode})
					if hitRank(hits, howto) != 1 || hitRank(hits, note) < 2 {
						t.Errorf("%q, %s: how-to at %d, release note at %d", q, mode, hitRank(hits, howto), hitRank(hits, note))
						continue
					}
					if rep.ReleaseNotesDemoted != 2 {
						t.Errorf("%q, %s: %d hits demoted, want 2", q, mode, rep.ReleaseNotesDemoted)
					}
					for i := 1; i < len(hits); i++ {
						if hits[i].Score > hits[i-1].Score {
							t.Errorf("%q, %s: hit %d scores %v above hit %d's %v", q, mode, i+1, hits[i].Score, i, hits[i-1].Score)
						}
					}
					if h := hits[hitRank(hits, note)-1]; !h.ReleaseNotes || !h.Demoted {
						t.Errorf("%q, %s: the note's hit: ReleaseNotes %v, Demoted %v", q, mode, h.ReleaseNotes, h.Demoted)
					}
					if h := hits[0]; h.ReleaseNotes || h.Demoted {
						t.Errorf("%q, %s: the how-to's hit: ReleaseNotes %v, Demoted %v", q, mode, h.ReleaseNotes, h.Demoted)
					}
				}
			}
			for _, q := range []string{"What changed in purge for waiting tasks?", "purging waiting tasks"} {
				hits, _ := search(q, SearchOptions{})
				if r := hitRank(hits, note); r != 1 || hits[0].Demoted {
					t.Errorf("%q: release note at %d (demoted %v), want first", q, r, hits[0].Demoted)
				}
			}
			for _, w := range []float64{-0.5, 1.5, math.NaN()} {
				if _, err := searchHits(Search(ctx, s, "purge", &SearchOptions{ReleaseNotesWeight: w})); err == nil {
					t.Errorf("ReleaseNotesWeight %v: no error", w)
				}
			}
		})
	}
}

// BenchmarkReleaseNotesDemotion measures what the demotion adds to one
// Search: classifying 80 fused hits (two lists of 40) by their breadcrumb
// and demoting the release-notes ones (a quarter of them) for a question.
func BenchmarkReleaseNotesDemotion(b *testing.B) {
	base := make([]SearchHit, 80)
	for i := range base {
		crumb := fmt.Sprintf("%d.%d Configuring the server > Section %d", i/10+1, i%10, i)
		if i%4 == 0 {
			crumb = fmt.Sprintf("A.%d. Release 4.%d.%d > A.%d.1. Changes", i, i/10, i%10, i)
		}
		base[i] = SearchHit{Section: crumb, Score: 1 / float64(6+i),
			Doc: ai.DocumentFromText("text", map[string]any{MetaBreadcrumb: crumb, MetaHeadings: "Bug fixes\nEnhancements"})}
	}
	hits := make([]SearchHit, len(base))
	demoted := 0
	for b.Loop() {
		copy(hits, base)
		for i := range hits {
			hits[i].ReleaseNotes = isReleaseNotesPage(hits[i].Section)
		}
		demoted = demoteReleaseNotes(hits, "How do I configure the backend weight?", defaultReleaseNotesWeight)
	}
	if demoted != 20 {
		b.Fatalf("%d hits demoted, want 20", demoted)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/search")
}
