package engine

import (
	"strings"
)

// crawlRobotsToken is the product token RunCrawl looks for in robots.txt
// User-agent lines (matched case-insensitively, as RFC 9309 asks). The
// requests themselves carry the User-Agent
// "askyourdocs/1.0 (+https://github.com/dbis-ilm/askyourdocs)".
const crawlRobotsToken = "askyourdocs"

// crawlRobotsMaxBytes is how much of a robots.txt is parsed (RFC 9309 asks
// crawlers to parse at least 500 KiB).
const crawlRobotsMaxBytes = 500 << 10

// crawlRobots holds the Allow/Disallow rules of the robots.txt group that
// applies to us.
type crawlRobots struct {
	rules []crawlRobotsRule
	// disallowAll is set when robots.txt could not be fetched because of a
	// server error: RFC 9309 asks crawlers to assume complete disallow.
	disallowAll bool
	// sitemaps are the URLs of its Sitemap lines (outside any group, as
	// sitemaps.org defines them), at most crawlMaxSitemapFiles.
	sitemaps []string
}

type crawlRobotsRule struct {
	allow   bool
	pattern string
}

// parseCrawlRobots parses a robots.txt body and keeps the rules of the
// groups naming token (case-insensitively, also as "token/version"), or of
// the "*" groups when none names it. Unknown lines, comments and malformed
// lines are ignored; the result is never nil.
func parseCrawlRobots(body, token string) *crawlRobots {
	if len(body) > crawlRobotsMaxBytes {
		body = body[:crawlRobotsMaxBytes]
	}
	token = strings.ToLower(token)
	var (
		mine, star   []crawlRobotsRule
		sitemaps     []string
		anyMine      bool
		inRules      bool // the current group has seen a rule line
		groupIsMine  bool
		groupIsStar  bool
		startedGroup bool
	)
	for line := range strings.SplitSeq(body, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		switch key {
		case "sitemap":
			if len(sitemaps) < crawlMaxSitemapFiles && value != "" {
				sitemaps = append(sitemaps, value) // Cut split at the key's colon: value is the whole URL
			}
		case "user-agent":
			if inRules || !startedGroup {
				groupIsMine, groupIsStar = false, false
				inRules = false
				startedGroup = true
			}
			agent := strings.ToLower(value)
			if product, _, _ := strings.Cut(agent, "/"); strings.TrimSpace(product) == token {
				groupIsMine = true
				anyMine = true
			}
			if agent == "*" {
				groupIsStar = true
			}
		case "allow", "disallow":
			if !startedGroup {
				continue // rules before any User-agent line belong to no group
			}
			inRules = true
			if value == "" {
				continue // "Disallow:" with no path allows everything
			}
			r := crawlRobotsRule{allow: key == "allow", pattern: value}
			if groupIsMine {
				mine = append(mine, r)
			}
			if groupIsStar {
				star = append(star, r)
			}
		}
	}
	if anyMine {
		return &crawlRobots{rules: mine, sitemaps: sitemaps}
	}
	return &crawlRobots{rules: star, sitemaps: sitemaps}
}

// allowed reports whether the URL path (with its query, if any) may be
// fetched: the longest matching rule decides, Allow winning a tie, and no
// matching rule means allowed. /robots.txt itself is always allowed.
func (r *crawlRobots) allowed(pathAndQuery string) bool {
	if r == nil {
		return true
	}
	if pathAndQuery == "" {
		pathAndQuery = "/"
	}
	if pathAndQuery == "/robots.txt" {
		return true
	}
	if r.disallowAll {
		return false
	}
	best, allow := -1, true
	for _, rule := range r.rules {
		if !crawlRobotsMatch(rule.pattern, pathAndQuery) {
			continue
		}
		if n := len(rule.pattern); n > best || (n == best && rule.allow) {
			best, allow = n, rule.allow
		}
	}
	return allow
}

// crawlRobotsMatch matches a robots.txt path pattern ('*' matches any run of
// characters, a trailing '$' anchors the end) against a path.
func crawlRobotsMatch(pattern, p string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(p, parts[0]) {
		return false
	}
	pos := len(parts[0])
	if len(parts) == 1 {
		return !anchored || pos == len(p)
	}
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(p[pos:], part)
		if i < 0 {
			return false
		}
		pos += i + len(part)
	}
	last := parts[len(parts)-1]
	if anchored {
		return len(p)-pos >= len(last) && strings.HasSuffix(p, last)
	}
	return strings.Contains(p[pos:], last)
}
