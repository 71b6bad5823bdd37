package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// runners are the e2e suite's functions that run a checked tool (test/e2e): their string
// arguments are the tool's arguments.
var runners = map[string]string{"helm": "helm", "kubectlPlugin": "kubectl prism"}

// goCommands finds the calls of runners in a Go file. An argument `args...` stands for every
// string literal the file puts into a variable of that name ([]string{...} or append).
func goCommands(name string, src []byte) ([]command, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		return nil, err
	}
	vars := map[string][]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, lhs := range as.Lhs {
			if id, ok := lhs.(*ast.Ident); ok {
				vars[id.Name] = append(vars[id.Name], literals(as.Rhs[i])...)
			}
		}
		return true
	})
	var out []command
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, ok := call.Fun.(*ast.Ident)
		if !ok || runners[fn.Name] == "" {
			return true
		}
		var args []string
		for _, a := range call.Args {
			if id, ok := a.(*ast.Ident); ok && call.Ellipsis.IsValid() {
				args = append(args, vars[id.Name]...)
				continue
			}
			args = append(args, literals(a)...)
		}
		out = append(out, parse(runners[fn.Name], args))
		return true
	})
	return out, nil
}

// literals are the string literals of a []string{...}, an append(...) or a single literal.
func literals(e ast.Expr) []string {
	var out []string
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
			out = append(out, s)
		}
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			out = append(out, literals(el)...)
		}
	case *ast.CallExpr:
		if fn, ok := e.Fun.(*ast.Ident); ok && fn.Name == "append" {
			for _, a := range e.Args[1:] {
				out = append(out, literals(a)...)
			}
		}
	}
	return out
}
