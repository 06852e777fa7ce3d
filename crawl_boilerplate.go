package engine

import "strings"

// removeCrawlBoilerplate returns the paragraphs of each page without the
// ones repeating across pages (see RunCrawl for the rule). known are the
// paragraph fingerprints of the crawl's unchanged pages, which count as
// pages of the crawl (see CrawlPage).
func removeCrawlBoilerplate(pages []crawlPage, known [][]uint64) [][]Paragraph {
	threshold := crawlBoilerplateThreshold(len(pages) + len(known))
	counts := make(map[uint64]int)
	count := func(fps []uint64) {
		seen := make(map[uint64]bool, len(fps))
		for _, k := range fps {
			if !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
	}
	fps := make([][]uint64, len(pages))
	for i, p := range pages {
		fps[i] = crawlFingerprints(p.paras)
		count(fps[i])
	}
	for _, k := range known {
		count(k)
	}
	out := make([][]Paragraph, len(pages))
	for i, p := range pages {
		keep := make([]bool, len(p.paras))
		for j, para := range p.paras {
			keep[j] = para.Heading || counts[fps[i][j]] < threshold
		}
		// Headings, from the last: a repeated heading goes when nothing
		// under it (subsections included) is kept.
		for j := len(p.paras) - 1; j >= 0; j-- {
			h := p.paras[j]
			if !h.Heading || counts[fps[i][j]] < threshold {
				continue
			}
			sub := h.Breadcrumb + " > "
			hasContent := false
			for k := j + 1; k < len(p.paras); k++ {
				q := p.paras[k]
				if q.Breadcrumb != h.Breadcrumb && !strings.HasPrefix(q.Breadcrumb, sub) {
					break
				}
				if q.Heading && q.Breadcrumb == h.Breadcrumb {
					break // a sibling heading with the same text
				}
				if keep[k] {
					hasContent = true
					break
				}
			}
			keep[j] = hasContent
		}
		for j, para := range p.paras {
			if keep[j] {
				out[i] = append(out[i], para)
			}
		}
	}
	return out
}

// crawlBoilerplateThreshold is the number of pages a paragraph must appear on
// to count as boilerplate in a crawl of n pages: 2 up to 20 pages, then 10%
// of the pages, at most 5. With one page nothing is boilerplate.
func crawlBoilerplateThreshold(n int) int {
	return min(max(2, (n+9)/10), 5)
}

func crawlBoilerplateKey(p Paragraph) string {
	if p.Heading {
		return "h\x00" + p.Text
	}
	return "p\x00" + p.Text
}
