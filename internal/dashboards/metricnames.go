package dashboards

var keywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	// aggregation operators: "max by (node) (…)" has no "(" right after the name
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "Inf": true, "NaN": true,
}

// MetricNames returns the metric names a PromQL expression selects: identifiers
// that are not functions or keywords, outside {…} matchers, […] ranges, "…"
// strings and by/on/group_… label lists.
func MetricNames(expr string) []string {
	var out []string
	depthBrace, depthBracket := 0, 0
	labelList := false // inside by (…), on (…), group_left (…) …
	pendingList := false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case c == '{':
			depthBrace++
		case c == '}':
			depthBrace--
		case c == '[':
			depthBracket++
		case c == ']':
			depthBracket--
		case c == '(':
			if pendingList {
				labelList = true
				pendingList = false
			}
		case c == ')':
			labelList = false
		case c == '$':
			j := i + 1
			for j < len(expr) && (isIdent(expr[j]) || expr[j] == '{' || expr[j] == '}') {
				j++
			}
			i = j
			continue
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			isFunc := k < len(expr) && expr[k] == '('
			switch {
			case word == "by" || word == "without" || word == "on" || word == "ignoring" || word == "group_left" || word == "group_right":
				pendingList = true
			case depthBrace > 0 || depthBracket > 0 || labelList || keywords[word] || isFunc:
			default:
				out = append(out, word)
			}
			i = j
			continue
		case c >= '0' && c <= '9':
			j := i
			for j < len(expr) && (isIdent(expr[j]) || expr[j] == '.') {
				j++
			}
			i = j
			continue
		}
		i++
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }
