package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Board is one generated dashboard and the file it is written to.
type Board struct {
	File      string // base name under charts/prism/files/dashboards
	Dashboard dashboard.Dashboard
}

// All builds every dashboard, in a fixed order.
func All() ([]Board, error) {
	builders := []struct {
		file  string
		build func() (dashboard.Dashboard, error)
	}{
		{UIDOverview + ".json", Overview},
		{UIDNode + ".json", Node},
		{UIDDevice + ".json", Device},
	}
	out := make([]Board, 0, len(builders))
	for _, b := range builders {
		d, err := b.build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.file, err)
		}
		out = append(out, Board{File: b.file, Dashboard: d})
	}
	return out, nil
}

// Marshal is the committed form of a dashboard: indented JSON and a final newline.
func Marshal(d dashboard.Dashboard) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<" and "&" in queries and links readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Render builds every dashboard and returns file name → JSON.
func Render() (map[string][]byte, error) {
	boards, err := All()
	if err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(boards))
	for _, b := range boards {
		data, err := Marshal(b.Dashboard)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
		files[b.File] = data
	}
	return files, nil
}

// Query is one Prometheus query of a dashboard panel (or variable).
type Query struct {
	Dashboard string // uid
	Panel     string // panel title, or "variable <name>"
	RefID     string
	Expr      string
	Instant   bool // evaluated at one instant (tables, stats) rather than over a range
}

// Queries lists every Prometheus query of a dashboard's panels, in layout order.
func Queries(d dashboard.Dashboard) ([]Query, error) {
	uid := ""
	if d.Uid != nil {
		uid = *d.Uid
	}
	var panels []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			panels = append(panels, *p.Panel)
		}
		if p.RowPanel != nil {
			panels = append(panels, p.RowPanel.Panels...)
		}
	}
	var out []Query
	for _, p := range panels {
		title := ""
		if p.Title != nil {
			title = *p.Title
		}
		for _, t := range p.Targets {
			pq, err := promQuery(t)
			if err != nil {
				return nil, fmt.Errorf("%s / %q: %w", uid, title, err)
			}
			out = append(out, Query{
				Dashboard: uid, Panel: title, RefID: pq.RefId, Expr: pq.Expr,
				Instant: pq.Instant != nil && *pq.Instant && (pq.Range == nil || !*pq.Range),
			})
		}
	}
	return out, nil
}

func promQuery(t variants.Dataquery) (prometheus.Dataquery, error) {
	switch q := t.(type) {
	case prometheus.Dataquery:
		return q, nil
	case *prometheus.Dataquery:
		return *q, nil
	}
	return prometheus.Dataquery{}, fmt.Errorf("target of type %T is not a Prometheus query", t)
}

// VariableQueries lists the query variables' queries (Grafana's label_values(...)).
func VariableQueries(d dashboard.Dashboard) []Query {
	var out []Query
	for _, v := range d.Templating.List {
		if v.Type != dashboard.VariableTypeQuery || v.Query == nil || v.Query.String == nil {
			continue
		}
		uid := ""
		if d.Uid != nil {
			uid = *d.Uid
		}
		out = append(out, Query{Dashboard: uid, Panel: "variable " + v.Name, Expr: *v.Query.String, Instant: true})
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// Substitute replaces Grafana variable references ($name, ${name}, ${name:fmt},
// [[name]]) by their values; references without a value are left as they are.
func Substitute(expr string, values map[string]string) string {
	return varRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := values[name]; ok {
			return v
		}
		return ref
	})
}

var labelValues = regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`)

// LabelValuesAsPromQL turns Grafana's label_values(selector, label) into a
// PromQL query returning one series per value, so that a test can run it.
func LabelValuesAsPromQL(expr string) (string, bool) {
	m := labelValues.FindStringSubmatch(expr)
	if m == nil {
		return "", false
	}
	return fmt.Sprintf("count by (%s) (%s)", m[2], m[1]), true
}
