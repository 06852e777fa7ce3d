package main

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
)

// webFiles are serve's templates (web/*.html) and static files
// (web/static/: the stylesheet and the little JavaScript).
//
//go:embed web
var webFiles embed.FS

// pageTemplates maps a page's file name to its template: web/layout.html
// with the page's "content" block.
var pageTemplates = parsePages("ask.html", "index.html", "login.html", "thanks.html", "error.html", "view.html")

// errorTemplate renders error pages.
var errorTemplate = pageTemplates["error.html"]

var templateFuncs = template.FuncMap{
	// paragraphs splits an answer into its paragraphs.
	"paragraphs": func(s string) []string { return strings.Split(strings.TrimSpace(s), "\n\n") },
	"inc":        func(i int) int { return i + 1 },
}

func parsePages(names ...string) map[string]*template.Template {
	m := make(map[string]*template.Template, len(names))
	for _, n := range names {
		m[n] = template.Must(template.New("layout.html").Funcs(templateFuncs).ParseFS(webFiles, "web/layout.html", "web/"+n))
	}
	return m
}

// pageData is what every page template gets: the page's own data in P.
type pageData struct {
	CSRF   string
	Admin  bool
	AuthOn bool
	P      any
}

// render writes the page name with data and the given status; a template
// error is logged (the page may be half written then).
func (s *server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	t := pageTemplates[name]
	d := pageData{CSRF: s.csrfToken(w, r), Admin: s.isAdmin(r), AuthOn: s.authRequired(), P: data}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := t.Execute(w, d); err != nil {
		slog.Error("serve: rendering a page failed", "page", name, "err", err)
	}
}

// staticHandler serves web/static.
func staticHandler() http.Handler {
	sub, err := fs.Sub(webFiles, "web/static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FileServerFS(sub)
}
