package depscan

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// GoCommands returns the commands that Go source files of one package run, where the
// command's name is a string constant in the code:
//   - the argv[0] of exec.Command, exec.CommandContext and the name given to exec.LookPath;
//   - the first element of a []string literal that is an argv: returned by a function whose
//     name ends in Argv or Argvs, stored in something named argv, or passed to a Run method
//     (hostexec.Executor);
//   - the command argument of the package's own runners (runnerParams);
//   - tool names listed for lookup: string arguments of ensureTools, lookTool and need, the
//     keys of string maps and the elements of string slices in variables named like tools or
//     packages (debianPackage, loopTools), and the bin field of {bin, pkg} tables.
//
// Names come from string literals, package constants (casadm.Command) and local variables
// assigned once from a literal (python := "/usr/bin/python3").
//
// imported maps other packages' constants by name, for names like casadm.Command.
func GoCommands(fset *token.FileSet, files []*ast.File, imported map[string]string) []Use {
	consts := GoConstants(files)
	g := &goScan{fset: fset, consts: consts, imported: imported, runners: runnerParams(files)}
	for _, f := range files {
		g.file(f)
	}
	return g.uses
}

// runnerParams finds the package's own command runners and where their command goes: a
// parameter "argv ...string" (e.run(timeout, "ceph-mon", ...)) or "name string" followed by
// "args ...string" (run(ctx, "losetup", "-d", dev)). By function or method name -> position.
func runnerParams(files []*ast.File) map[string]int {
	out := map[string]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			var names []string
			var types []ast.Expr
			for _, field := range fn.Type.Params.List {
				for _, n := range field.Names {
					names = append(names, n.Name)
					types = append(types, field.Type)
				}
			}
			for i, n := range names {
				variadic := func(j int) bool {
					e, ok := types[j].(*ast.Ellipsis)
					return ok && isIdent(e.Elt, "string")
				}
				if (n == "argv" && variadic(i)) || (n == "name" && isIdent(types[i], "string") && i+1 < len(names) && names[i+1] == "args" && variadic(i+1)) {
					out[fn.Name.Name] = i
				}
			}
		}
	}
	return out
}

// GoConstants maps the package-level string constants of a package's files by name.
func GoConstants(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := literal(vs.Values[i], nil); ok {
								consts[name.Name] = v
							}
						}
					}
				}
			}
		}
	}
	return consts
}

// ParseGoDir parses the named Go files (one package) for GoCommands.
func ParseGoDir(paths []string) (*token.FileSet, []*ast.File, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	return fset, files, nil
}

type goScan struct {
	fset     *token.FileSet
	consts   map[string]string
	imported map[string]string
	runners  map[string]int // the package's command runners: name -> position of argv[0]
	uses     []Use
}

var (
	toolHelpers    = map[string]bool{"ensureTools": true, "lookTool": true, "need": true}
	toolSliceNames = regexp.MustCompile(`(?i)tools$`)               // loopTools
	toolMapNames   = regexp.MustCompile(`(?i)(tools|package|pkg)$`) // debianPackage: tool -> package
	argvNames      = regexp.MustCompile(`(?i)^argv$`)
)

func (g *goScan) add(e ast.Expr, locals map[string]string) {
	lookup := g.lookup(locals)
	if sel, ok := e.(*ast.SelectorExpr); ok {
		lookup = func(name string) (string, bool) { v, ok := g.imported[name]; return v, ok }
		e = sel.Sel
	}
	if v, ok := literal(e, lookup); ok && v != "" && !strings.HasPrefix(v, "-") { // "-G": arguments only
		pos := g.fset.Position(e.Pos())
		g.uses = append(g.uses, Use{Command: v, File: pos.Filename, Line: pos.Line})
	}
}

func (g *goScan) lookup(locals map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := locals[name]; ok {
			return v, true
		}
		v, ok := g.consts[name]
		return v, ok
	}
}

// argv adds the first element of a []string (or, for [][]string, of each inner) literal.
func (g *goScan) argv(e ast.Expr, locals map[string]string) {
	if call, ok := e.(*ast.CallExpr); ok && isIdent(call.Fun, "append") && len(call.Args) > 0 {
		e = call.Args[0]
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok || len(lit.Elts) == 0 {
		return
	}
	if inner, ok := lit.Elts[0].(*ast.CompositeLit); ok && inner.Type == nil {
		for _, el := range lit.Elts {
			g.argv(el, locals)
		}
		return
	}
	if isStringSlice(lit.Type) || lit.Type == nil {
		g.add(lit.Elts[0], locals)
	}
}

func (g *goScan) file(f *ast.File) {
	// Package-level tool tables, and runner calls inside package-level tables
	// (formats = []format{{make: mk("mkudffs", ...)}}).
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						g.namedValue(name.Name, vs.Values[i], nil)
					}
				}
				for _, v := range vs.Values {
					g.inspect(v, nil, false)
				}
			}
		}
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		returnsArgv := strings.HasSuffix(fn.Name.Name, "Argv") || strings.HasSuffix(fn.Name.Name, "Argvs")
		g.inspect(fn.Body, singleLiteralLocals(fn.Body), returnsArgv)
	}
}

// inspect finds argvs and runner calls in a function body or a package-level value.
func (g *goScan) inspect(node ast.Node, locals map[string]string, returnsArgv bool) {
	ast.Inspect(node, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ReturnStmt:
			if returnsArgv && len(n.Results) > 0 {
				g.argv(n.Results[0], locals)
			}
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				if i < len(n.Rhs) {
					g.namedValue(exprName(lhs), n.Rhs[i], locals)
				}
			}
		case *ast.KeyValueExpr:
			g.namedValue(exprName(n.Key), n.Value, locals)
		case *ast.CallExpr:
			g.call(n, locals)
		}
		return true
	})
}

// namedValue looks at a value stored under a name: an argv, or a table of tools.
func (g *goScan) namedValue(name string, v ast.Expr, locals map[string]string) {
	switch {
	case argvNames.MatchString(name):
		g.argv(v, locals)
	case toolSliceNames.MatchString(name) || toolMapNames.MatchString(name):
		lit, ok := v.(*ast.CompositeLit)
		if !ok {
			return
		}
		_, isMap := lit.Type.(*ast.MapType)
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok && isMap && toolMapNames.MatchString(name) {
				g.add(kv.Key, locals)
			} else if isStringSlice(lit.Type) && toolSliceNames.MatchString(name) {
				g.add(el, locals)
			}
		}
	}
	// []struct{ bin, pkg string }{{"prometheus", "prometheus"}, ...}
	if lit, ok := v.(*ast.CompositeLit); ok {
		if at, ok := lit.Type.(*ast.ArrayType); ok {
			if st, ok := at.Elt.(*ast.StructType); ok && firstFieldName(st) == "bin" {
				for _, el := range lit.Elts {
					if inner, ok := el.(*ast.CompositeLit); ok && len(inner.Elts) > 0 {
						g.add(inner.Elts[0], locals)
					}
				}
			}
		}
	}
}

func (g *goScan) call(c *ast.CallExpr, locals map[string]string) {
	switch {
	case isSelector(c.Fun, "exec", "Command") || isSelector(c.Fun, "exec", "LookPath"):
		if len(c.Args) > 0 {
			g.add(c.Args[0], locals)
		}
	case isSelector(c.Fun, "exec", "CommandContext"):
		if len(c.Args) > 1 {
			g.add(c.Args[1], locals)
		}
	case toolHelpers[exprName(c.Fun)]:
		for _, a := range c.Args {
			g.add(a, locals)
		}
	case g.hasRunner(exprName(c.Fun)):
		if i := g.runners[exprName(c.Fun)]; i < len(c.Args) {
			g.add(c.Args[i], locals)
		}
	case exprName(c.Fun) == "Run":
		for _, a := range c.Args {
			if lit, ok := a.(*ast.CompositeLit); ok && isStringSlice(lit.Type) {
				g.argv(lit, locals)
			}
		}
	}
}

func (g *goScan) hasRunner(name string) bool {
	_, ok := g.runners[name]
	return ok
}

// literal is the string value of a literal or of a named constant.
func literal(e ast.Expr, lookup func(string) (string, bool)) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			v, err := strconv.Unquote(e.Value)
			return v, err == nil
		}
	case *ast.Ident:
		if lookup != nil {
			return lookup(e.Name)
		}
	}
	return "", false
}

// singleLiteralLocals maps the local variables assigned exactly once, from a string literal.
func singleLiteralLocals(body *ast.BlockStmt) map[string]string {
	count := map[string]int{}
	value := map[string]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok {
			for i, lhs := range a.Lhs {
				id, ok := lhs.(*ast.Ident)
				if !ok {
					continue
				}
				count[id.Name]++
				if len(a.Lhs) == len(a.Rhs) {
					if v, ok := literal(a.Rhs[i], nil); ok {
						value[id.Name] = v
					}
				}
			}
		}
		return true
	})
	out := map[string]string{}
	for name, v := range value {
		if count[name] == 1 {
			out[name] = v
		}
	}
	return out
}

func isStringSlice(t ast.Expr) bool {
	at, ok := t.(*ast.ArrayType)
	return ok && at.Len == nil && isIdent(at.Elt, "string")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSelector(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == name && isIdent(s.X, pkg)
}

// exprName is the name an identifier or a selector ends in (f, pkg.F, x.f: f, F, f), "" for
// any other expression.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func firstFieldName(st *ast.StructType) string {
	if st.Fields != nil && len(st.Fields.List) > 0 && len(st.Fields.List[0].Names) > 0 {
		return st.Fields.List[0].Names[0].Name
	}
	return ""
}
