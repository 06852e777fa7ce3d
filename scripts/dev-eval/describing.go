package main

// The describing sets (issue "Questions that describe instead of name"):
// English man pages of Debian packages other than the held-out manpages,
// manpages-dev and manpages-zh, each asked by its NAME line's description
// ("list directory contents" -> ls(1)) with that description removed from
// the page, so that the words must be found in the page's body.

import (
	"strings"
)

// describingSets are the describing sets, in the order of the table.
func describingSets() []set {
	man := func(name string, pkgs ...string) set {
		s := set{name: name, generator: "man pages (man -l, plain text), description removed", manPages: true,
			dropDescription: true, maxCases: 600, skip: func(string) bool { return false }}
		for _, p := range pkgs {
			s.parts = append(s.parts, part{pkg: p, dir: "usr/share/man", extract: true})
		}
		return s
	}
	return []set{
		man("desc-core", "coreutils", "util-linux", "procps", "findutils"),
		man("desc-git", "git-man"),
		man("desc-ssl", "openssl", "libssl-doc"),
		man("desc-perl", "perl-doc"),
	}
}

// manDropDescription is a rendered man page with the description of its
// NAME section (manDescription) cut: the section keeps the page's names
// ("ls", "EVP_DigestInit, EVP_DigestUpdate"), so a question made of the
// description must be answered from the rest of the page.
func manDropDescription(text string) string {
	lines := strings.Split(text, "\n")
	i := manNameStart(lines)
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	end := i
	for end < len(lines) && strings.TrimSpace(lines[end]) != "" && (lines[end][0] == ' ' || lines[end][0] == '\t') {
		end++
	}
	if end == i {
		return text
	}
	block := strings.Join(lines[i:end], "\n")
	names, _, ok := strings.Cut(block, " - ")
	if !ok {
		if names, _, ok = strings.Cut(block, " — "); !ok {
			return text
		}
	}
	out := append([]string{}, lines[:i]...)
	out = append(out, strings.TrimRight(names, " \n"))
	return strings.Join(append(out, lines[end:]...), "\n")
}
