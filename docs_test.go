package engine

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docSnippetMarker names the compiled source a Go block in the documentation
// is taken from: an Example function of this package's tests
// (`<!-- example: ExampleIndexSource -->`) or a whole Go file of the repo
// (`<!-- file: examples/askpage/main.go -->`). It stands on the line right
// before the block's opening fence.
var docSnippetMarker = regexp.MustCompile(`^<!-- (example|file): (\S+) -->$`)

// docSnippet is one fenced Go block of a Markdown file.
type docSnippet struct {
	file   string
	line   int
	marker []string // kind and name, or nil when the block has no marker
	body   string
}

// TestDocsGoSnippetsCompile keeps every Go block in README.md and docs/ equal to
// code that the test suite compiles (and, for examples with Output, runs), so
// the documentation cannot drift from the API.
func TestDocsGoSnippetsCompile(t *testing.T) {
	files := []string{"README.md", filepath.Join("cmd", "askyourdocs", "README.md")}
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	examples := exampleBodies(t)
	checked := 0
	for _, f := range files {
		snippets, err := goSnippets(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range snippets {
			checked++
			if s.marker == nil {
				t.Errorf("%s:%d: Go block without a <!-- example: Name --> or <!-- file: path --> marker", s.file, s.line)
				continue
			}
			var want string
			switch s.marker[0] {
			case "example":
				body, ok := examples[s.marker[1]]
				if !ok {
					t.Errorf("%s:%d: no function %s in the package's tests", s.file, s.line, s.marker[1])
					continue
				}
				want = body
			case "file":
				data, err := os.ReadFile(filepath.FromSlash(s.marker[1]))
				if err != nil {
					t.Errorf("%s:%d: %v", s.file, s.line, err)
					continue
				}
				want = string(data)
			}
			if normaliseSnippet(s.body) != normaliseSnippet(want) {
				t.Errorf("%s:%d: Go block differs from %s %s; copy it again:\n%s", s.file, s.line, s.marker[0], s.marker[1], normaliseSnippet(want))
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Go block found in README.md or docs/: the test would check nothing")
	}
}

// goSnippets returns the fenced Go blocks of the Markdown file at path.
func goSnippets(path string) ([]docSnippet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out     []docSnippet
		prev    string
		cur     *docSnippet
		body    strings.Builder
		lineNum int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lineNum++
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &docSnippet{file: path, line: lineNum}
			if m := docSnippetMarker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				cur.marker = m[1:]
			}
			body.Reset()
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
		prev = line
	}
	return out, sc.Err()
}

// exampleBodies returns the bodies of the Example functions in this
// directory's test files, without their braces and without the trailing
// Output comment, keyed by function name.
func exampleBodies(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			start := fset.Position(fn.Body.Lbrace).Offset + 1
			end := fset.Position(fn.Body.Rbrace).Offset
			body := string(src[start:end])
			if i := strings.Index(body, "// Output:"); i >= 0 {
				body = body[:i]
			}
			if i := strings.Index(body, "// Unordered output:"); i >= 0 {
				body = body[:i]
			}
			out[fn.Name.Name] = body
		}
	}
	return out
}

// normaliseSnippet drops blank lines at both ends, trailing spaces and the
// leading tabs every line shares, so a block copied out of a function body
// compares equal to it.
func normaliseSnippet(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	shared := -1
	for _, l := range lines {
		if l == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "\t")); shared < 0 || n < shared {
			shared = n
		}
	}
	for i, l := range lines {
		if len(l) >= shared && shared > 0 {
			lines[i] = l[shared:]
		}
	}
	return strings.Join(lines, "\n")
}

// fileMapPatterns returns the backquoted file patterns of the first column
// of README.md's file map (the table after the <!-- file-map --> marker).
func fileMapPatterns(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "<!-- file-map -->")
	if !ok {
		t.Fatal("README.md has no <!-- file-map --> marker")
	}
	var out []string
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if line == "" && len(out) > 0 {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// TestFileMapCoversEveryFile keeps the file map of README.md and doc.go
// complete: every Go file of the package matches one of README's patterns,
// and doc.go names every pattern, so a new file cannot go unmapped.
func TestFileMapCoversEveryFile(t *testing.T) {
	patterns := fileMapPatterns(t)
	if len(patterns) < 10 {
		t.Fatalf("README.md's file map has only %d patterns: %q", len(patterns), patterns)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		found := false
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, f); ok {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s is not in README.md's file map", f)
		}
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patterns {
		if !strings.Contains(string(doc), p) {
			t.Errorf("doc.go's file map lacks %s", p)
		}
		if strings.ContainsAny(p, "*?[") || strings.HasSuffix(p, ".go") {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				t.Errorf("README.md's file map names %s, which matches no file", p)
			}
		} else if _, err := os.Stat(p); err != nil {
			t.Errorf("README.md's file map names %s: %v", p, err)
		}
	}
}

// TestDocsLinksResolve checks that every relative link of README.md,
// cmd/askyourdocs/README.md and docs/*.md names a file or directory of the
// repository, so moving a page cannot leave a dead link behind.
func TestDocsLinksResolve(t *testing.T) {
	files := []string{"README.md", filepath.Join("cmd", "askyourdocs", "README.md")}
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, pages...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		text := code.ReplaceAllString(string(data), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			checked++
			p := filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %s: %v", f, m[1], err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the test would check nothing")
	}
}

// maxDocCommentLines is the longest doc comment the package allows: a doc
// comment says what a declaration returns, whether it blocks, ownership and
// concurrency; detail goes to docs/ (docs/api-reference.md).
const maxDocCommentLines = 25

// TestDocCommentsShort fails when a doc comment of the package's non-test
// files (of a function, method, type, const, var or struct field) is longer
// than maxDocCommentLines lines.
func TestDocCommentsShort(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				var doc *ast.CommentGroup
				switch d := n.(type) {
				case *ast.FuncDecl:
					doc = d.Doc
				case *ast.GenDecl:
					doc = d.Doc
				case *ast.TypeSpec:
					doc = d.Doc
				case *ast.ValueSpec:
					doc = d.Doc
				case *ast.Field:
					doc = d.Doc
				}
				if doc == nil {
					return true
				}
				checked++
				start, end := fset.Position(doc.Pos()), fset.Position(doc.End())
				if lines := end.Line - start.Line + 1; lines > maxDocCommentLines {
					t.Errorf("%s: doc comment of %d lines, want at most %d (move detail to docs/)", start, lines, maxDocCommentLines)
				}
				return true
			})
		}
	}
	if checked < 500 {
		t.Fatalf("only %d doc comments found: the parse missed the package", checked)
	}
}

// TestFileMapNamesTheRightFiles keeps the concepts of README.md's file map
// true: every identifier a row names (`BuildChunks`, `Search`, ...) is
// declared at top level in a file that one of the row's file patterns
// matches (those of its Files cell or named in its Concept cell).
func TestFileMapNamesTheRightFiles(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "<!-- file-map -->")
	if !ok {
		t.Fatal("README.md has no <!-- file-map --> marker")
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{} // identifier -> files declaring it
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						declared[d.Name.Name] = append(declared[d.Name.Name], name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							declared[s.Name.Name] = append(declared[s.Name.Name], name)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								declared[n.Name] = append(declared[n.Name], name)
							}
						}
					}
				}
			}
		}
	}
	code := regexp.MustCompile("`([^`]+)`")
	ident := regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	named := 0
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if line == "" && named > 0 {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		var patterns, idents []string
		for _, cell := range cells[1:3] {
			for _, m := range code.FindAllStringSubmatch(cell, -1) {
				switch {
				case strings.HasSuffix(m[1], ".go"):
					patterns = append(patterns, m[1])
				case ident.MatchString(m[1]):
					idents = append(idents, m[1])
				}
			}
		}
		for _, id := range idents {
			named++
			files, ok := declared[id]
			if !ok {
				t.Errorf("README.md's file map names %s, which the package does not declare", id)
				continue
			}
			found := false
			for _, f := range files {
				for _, p := range patterns {
					if ok, _ := filepath.Match(p, filepath.Base(f)); ok {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("README.md's file map puts %s in %q; it is declared in %q", id, patterns, files)
			}
		}
	}
	if named < 10 {
		t.Fatalf("README.md's file map names only %d identifiers", named)
	}
}

// TestEnvReadsOnlyInFromEnv keeps the package free of hidden configuration:
// os.Getenv and os.LookupEnv appear in non-test files only inside ...FromEnv
// helpers, and in defaultCrawlOptions, which gives RunCrawl the spec's
// SAVE_CRAWL_DATA. (os.Environ handing the environment on to a child
// process, as OCR does, reads no setting.)
func TestEnvReadsOnlyInFromEnv(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(fn string) bool { return strings.HasSuffix(fn, "FromEnv") || fn == "defaultCrawlOptions" }
	found := 0
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				name := "package level"
				if ok {
					name = fn.Name.Name
				}
				ast.Inspect(d, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" &&
						(sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") {
						found++
						if !allowed(name) {
							t.Errorf("%s: os.%s in %s: environment reads belong in ...FromEnv helpers", fset.Position(sel.Pos()), sel.Sel.Name, name)
						}
					}
					return true
				})
			}
		}
	}
	if found == 0 {
		t.Fatal("no environment read found: the parse missed the package")
	}
}
