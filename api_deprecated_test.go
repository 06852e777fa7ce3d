package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// apiDecl is one top-level declaration as `go doc -all .` lists it: a
// const or var block, a func, a type, or a method ("Type.Method").
type apiDecl struct {
	kind, name string
	pos        token.Position
	deprecated bool
}

// deprecatedDoc reports whether a doc comment has a paragraph starting
// with "Deprecated:", the convention go doc and gopls follow.
func deprecatedDoc(text string) bool {
	for _, p := range strings.Split(text, "\n\n") {
		if strings.HasPrefix(strings.TrimSpace(p), "Deprecated:") {
			return true
		}
	}
	return false
}

// apiDecls returns the package's top-level declarations for this platform,
// grouped as go/doc (and so `go doc -all`) groups them.
func apiDecls(t *testing.T) []apiDecl {
	t.Helper()
	bp, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, bp.ImportPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []apiDecl
	value := func(kind string, v *doc.Value) {
		dep := deprecatedDoc(v.Doc)
		if !dep {
			// A block without a doc of its own is deprecated when every
			// spec in it is (a deprecated alias declared alone).
			dep = true
			for _, s := range v.Decl.Specs {
				if vs := s.(*ast.ValueSpec); vs.Doc == nil || !deprecatedDoc(vs.Doc.Text()) {
					dep = false
				}
			}
		}
		out = append(out, apiDecl{kind, strings.Join(v.Names, ", "), fset.Position(v.Decl.Pos()), dep})
	}
	fn := func(kind, name string, f *doc.Func) {
		out = append(out, apiDecl{kind, name, fset.Position(f.Decl.Pos()), deprecatedDoc(f.Doc)})
	}
	for _, v := range p.Consts {
		value("const", v)
	}
	for _, v := range p.Vars {
		value("var", v)
	}
	for _, f := range p.Funcs {
		fn("func", f.Name, f)
	}
	for _, ty := range p.Types {
		out = append(out, apiDecl{"type", ty.Name, fset.Position(ty.Decl.Pos()), deprecatedDoc(ty.Doc)})
		for _, v := range ty.Consts {
			value("const", v)
		}
		for _, v := range ty.Vars {
			value("var", v)
		}
		for _, f := range ty.Funcs {
			fn("func", f.Name, f)
		}
		for _, f := range ty.Methods {
			fn("method", ty.Name+"."+f.Name, f)
		}
	}
	return out
}

// deprecatedKeys returns the package's deprecated identifiers as keys of
// objectKey: "Name" for package-level objects, "Type.Method" for methods.
func deprecatedKeys(t *testing.T) map[string]bool {
	keys := map[string]bool{}
	for _, d := range apiDecls(t) {
		if d.deprecated {
			for _, n := range strings.Split(d.name, ", ") {
				keys[n] = true
			}
		}
	}
	// Deprecated specs inside a live block (a renamed sentinel kept beside
	// its new name) are deprecated too.
	bp, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok && vs.Doc != nil && deprecatedDoc(vs.Doc.Text()) {
					for _, n := range vs.Names {
						keys[n.Name] = true
					}
				}
			}
		}
	}
	return keys
}

// objectKey returns the deprecatedKeys key of an object of package engine,
// or "" for objects that are neither package-level nor methods.
func objectKey(obj types.Object) string {
	if fn, ok := obj.(*types.Func); ok {
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
			rt := recv.Type()
			if p, ok := rt.(*types.Pointer); ok {
				rt = p.Elem()
			}
			if n, ok := rt.(*types.Named); ok {
				return n.Obj().Name() + "." + fn.Name()
			}
			return ""
		}
	}
	if obj.Parent() != obj.Pkg().Scope() {
		return ""
	}
	return obj.Name()
}

// goListPackage is the part of `go list -json` TestNoDeprecatedUse reads.
type goListPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Module     *struct{ Path string }
}

// TestNoDeprecatedUse keeps the repository on the one way of each family:
// no non-test code of the module (the library, cmd/, examples/, scripts/)
// uses an identifier of this package marked Deprecated, except inside
// another deprecated declaration (the thin wrappers). Types come from
// go/types over export data that `go list -export` builds.
func TestNoDeprecatedUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module's export data; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-e", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,Export,Module", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	var mine []goListPackage
	root := ""
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goListPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && strings.HasPrefix(p.ImportPath, p.Module.Path) {
			if wd, _ := os.Getwd(); p.Dir == wd {
				root = p.ImportPath
			}
			mine = append(mine, p)
		}
	}
	if root == "" || len(mine) < 3 {
		t.Fatalf("go list found %d module packages and root %q", len(mine), root)
	}
	deprecated := deprecatedKeys(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f := exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	checked := 0
	for _, p := range mine {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		inspectUse := func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			obj := info.Uses[id]
			if obj == nil || obj.Pkg() == nil || obj.Pkg().Path() != root {
				return true
			}
			checked++
			if key := objectKey(obj); key != "" && deprecated[key] {
				t.Errorf("%s: %s uses deprecated %s (use the one way, docs/api-style.md)", fset.Position(id.Pos()), p.ImportPath, key)
			}
			return true
		}
		for _, f := range files {
			for _, d := range f.Decls {
				if declDeprecated(d) {
					continue
				}
				ast.Inspect(d, func(n ast.Node) bool {
					// The package's own signatures may keep a deprecated
					// type where the spec fixes them (FormatHistory's
					// ...LabelOption); only bodies are checked there.
					if fd, ok := n.(*ast.FuncDecl); ok && p.ImportPath == root {
						if fd.Body != nil {
							ast.Inspect(fd.Body, inspectUse)
						}
						return false
					}
					return inspectUse(n)
				})
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d uses of the package checked: the walk missed the module", checked)
	}
}

// declDeprecated reports whether a top-level declaration is itself marked
// Deprecated (its body may use other deprecated identifiers).
func declDeprecated(d ast.Decl) bool {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc != nil && deprecatedDoc(d.Doc.Text())
	case *ast.GenDecl:
		if d.Doc != nil && deprecatedDoc(d.Doc.Text()) {
			return true
		}
		for _, s := range d.Specs {
			var doc *ast.CommentGroup
			switch s := s.(type) {
			case *ast.ValueSpec:
				doc = s.Doc
			case *ast.TypeSpec:
				doc = s.Doc
			}
			if doc == nil || !deprecatedDoc(doc.Text()) {
				return false
			}
		}
		return len(d.Specs) > 0
	}
	return false
}
