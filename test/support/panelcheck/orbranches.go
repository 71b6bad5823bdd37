package panelcheck

// orBranches splits a PromQL expression at its top-level `or` operators (outside parentheses,
// braces, brackets and strings): `A or vector(0)` has data when any branch has, so a query is
// impossible only when every branch reads a metric that is absent.
func orBranches(expr string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; c {
		case '"', '\'', '`':
			for i++; i < len(expr) && expr[i] != c; i++ {
				if expr[i] == '\\' && c != '`' {
					i++
				}
			}
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case 'o':
			if depth == 0 && i+1 < len(expr) && expr[i+1] == 'r' &&
				(i == 0 || !identByte(expr[i-1])) && (i+2 == len(expr) || !identByte(expr[i+2])) {
				out = append(out, expr[start:i])
				start = i + 2
				i++
			}
		}
	}
	return append(out, expr[start:])
}

func identByte(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
