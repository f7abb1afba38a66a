// Command doccheck fails when an exported name of a Go package has no doc
// comment: the check that package weir's reference (go doc, pkg.go.dev) is
// complete, which go vet does not make and golint, which did, is retired.
// It reads the source with go/parser and go/doc, so it needs no cgo and no
// installed weir.
//
//	go run ./internal/doccheck [dir ...]   # from go/; dir defaults to "."
//
// A name counts as documented when it has a doc comment of its own; a
// constant or variable also when its line has a trailing comment or its
// parenthesised group has a doc comment (go doc shows the group's). Checked:
// the package clause, and every exported constant, variable, function, type,
// and method of an exported type (fields are the type's doc's to explain).
// The files are those go/build picks for this platform, cgo files included.
// Prints one line per undocumented name and the count; exits 1 if any.
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	dirs := os.Args[1:]
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var missing []string
	for _, dir := range dirs {
		found, err := check(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(2)
		}
		missing = append(missing, found...)
	}
	for _, m := range missing {
		fmt.Println(m)
	}
	if len(missing) > 0 {
		fmt.Printf("doccheck: %d exported names without a doc comment\n", len(missing))
		os.Exit(1)
	}
	fmt.Println("doccheck: every exported name has a doc comment")
}

// check reports the undocumented exported names of the package in dir, each
// as "file:line: kind name".
func check(dir string) ([]string, error) {
	ctx := build.Default
	ctx.CgoEnabled = true
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	names := append(append([]string{}, pkg.GoFiles...), pkg.CgoFiles...)
	sort.Strings(names)
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, pkg.ImportPath)
	if err != nil {
		return nil, err
	}
	var missing []string
	var at []token.Position
	report := func(pos token.Pos, kind, name string) {
		p := fset.Position(pos)
		at = append(at, p)
		missing = append(missing, fmt.Sprintf("%s:%d: %s %s has no doc comment", p.Filename, p.Line, kind, name))
	}
	defer func() {
		// In file and line order.
		sort.Sort(byPosition{at, missing})
	}()
	if d.Doc == "" {
		report(files[0].Package, "package", d.Name)
	}
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			if v.Doc != "" {
				continue // the group's (or the lone spec's) doc
			}
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Doc != nil || vs.Comment != nil {
					continue
				}
				for _, n := range vs.Names {
					if n.IsExported() {
						report(n.Pos(), kind, n.Name)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func, kind string) {
		for _, f := range fs {
			if f.Doc == "" {
				name := f.Name
				if f.Recv != "" {
					name = "(" + f.Recv + ")." + f.Name
				}
				report(f.Decl.Pos(), kind, name)
			}
		}
	}
	values(d.Consts, "const")
	values(d.Vars, "var")
	funcs(d.Funcs, "func")
	for _, t := range d.Types {
		if t.Doc == "" {
			report(t.Decl.Pos(), "type", t.Name)
		}
		// Constants, variables and constructors go doc lists under the type.
		values(t.Consts, "const")
		values(t.Vars, "var")
		funcs(t.Funcs, "func")
		funcs(t.Methods, "method")
	}
	return missing, nil
}

// byPosition sorts the report lines by the position each names.
type byPosition struct {
	at    []token.Position
	lines []string
}

func (b byPosition) Len() int { return len(b.at) }

func (b byPosition) Less(i, j int) bool {
	if b.at[i].Filename != b.at[j].Filename {
		return b.at[i].Filename < b.at[j].Filename
	}
	return b.at[i].Line < b.at[j].Line
}

func (b byPosition) Swap(i, j int) {
	b.at[i], b.at[j] = b.at[j], b.at[i]
	b.lines[i], b.lines[j] = b.lines[j], b.lines[i]
}
