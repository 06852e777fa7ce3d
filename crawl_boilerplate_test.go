package engine

import (
	"reflect"
	"testing"
)

func TestCrawlBoilerplateThreshold(t *testing.T) {
	for n, want := range map[int]int{1: 2, 2: 2, 20: 2, 21: 3, 30: 3, 41: 5, 500: 5} {
		if got := crawlBoilerplateThreshold(n); got != want {
			t.Errorf("threshold(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestRemoveCrawlBoilerplate(t *testing.T) {
	h := func(text, crumb string) Paragraph { return Paragraph{Text: text, Heading: true, Breadcrumb: crumb} }
	p := func(text, crumb string) Paragraph { return Paragraph{Text: text, Breadcrumb: crumb} }
	page := func(own ...Paragraph) crawlPage {
		paras := []Paragraph{p("Home | Docs | Blog", ""), h("Related", "Related"), p("Cookie settings", "Related")}
		return crawlPage{paras: append(paras, own...)}
	}
	pages := []crawlPage{
		page(h("Install", "Install"), p("Run the installer.", "Install")),
		// The repeated "Related" heading has content of its own here.
		page(h("Related", "Related"), p("See also the FAQ on page two.", "Related")),
		page(h("Usage", "Usage"), p("Run the installer.", "Usage")), // repeated once: 2 pages = threshold
		{paras: []Paragraph{p("A lone page paragraph.", "")}},
	}
	got := removeCrawlBoilerplate(pages, nil)
	want := [][]Paragraph{
		{h("Install", "Install")},
		{h("Related", "Related"), p("See also the FAQ on page two.", "Related")},
		{h("Usage", "Usage")},
		{p("A lone page paragraph.", "")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// A single page keeps everything, however repetitive it is.
	one := []crawlPage{page(p("Home | Docs | Blog", ""))}
	if got := removeCrawlBoilerplate(one, nil); len(got[0]) != len(one[0].paras) {
		t.Errorf("single page lost paragraphs: %+v", got[0])
	}
}
