package dashboards

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// Markers of the generated part of docs/dashboards.md.
const (
	DocBegin = "<!-- BEGIN GENERATED PANEL REFERENCE: go generate ./internal/dashboards -->"
	DocEnd   = "<!-- END GENERATED PANEL REFERENCE -->"
)

// Reference renders every dashboard's variables, rows, panels, descriptions and
// queries as Markdown, for docs/dashboards.md.
func Reference(boards []Board) (string, error) {
	var b bytes.Buffer
	for _, bd := range boards {
		d := bd.Dashboard
		fmt.Fprintf(&b, "### %s\n\n", deref(d.Title))
		fmt.Fprintf(&b, "`%s` · file `charts/prism/files/dashboards/%s`\n\n%s\n\n", deref(d.Uid), bd.File, deref(d.Description))
		b.WriteString("Variables:\n\n")
		for _, v := range d.Templating.List {
			q := ""
			if v.Query != nil && v.Query.String != nil {
				q = *v.Query.String
			}
			extra := ""
			if v.Multi != nil && *v.Multi {
				extra = ", multi-value with All (`.*`)"
			}
			fmt.Fprintf(&b, "- `$%s` (%s%s): `%s`\n", v.Name, v.Type, extra, q)
		}
		b.WriteString("\n")
		for _, p := range d.Panels {
			if r := p.RowPanel; r != nil {
				fmt.Fprintf(&b, "#### %s\n\n", deref(r.Title))
				continue
			}
			if err := panelRef(&b, *p.Panel); err != nil {
				return "", fmt.Errorf("%s: %w", deref(d.Uid), err)
			}
		}
	}
	return b.String(), nil
}

func panelRef(b *bytes.Buffer, p dashboard.Panel) error {
	kind := p.Type
	if p.Type == "timeseries" {
		kind = "time series"
	}
	fmt.Fprintf(b, "**%s** (%s) — %s\n\n```promql\n", deref(p.Title), kind, deref(p.Description))
	for _, t := range p.Targets {
		q, err := promQuery(t)
		if err != nil {
			return err
		}
		name := q.RefId
		if q.Instant != nil && *q.Instant {
			name += ", instant"
		} else {
			name += ", range"
		}
		if q.LegendFormat != nil && *q.LegendFormat != "" {
			name += ", legend " + strings.ReplaceAll(*q.LegendFormat, "\n", " ")
		}
		fmt.Fprintf(b, "# %s\n%s\n", name, q.Expr)
	}
	b.WriteString("```\n\n")
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// SpliceReference replaces the generated part of doc (between DocBegin and
// DocEnd) with ref.
func SpliceReference(doc, ref string) (string, error) {
	i := strings.Index(doc, DocBegin)
	j := strings.Index(doc, DocEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("markers %q … %q not found", DocBegin, DocEnd)
	}
	return doc[:i+len(DocBegin)] + "\n\n" + ref + doc[j:], nil
}
