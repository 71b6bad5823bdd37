package dashboards

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzMetricNames: whatever the expression, MetricNames ends and names only identifiers that
// occur in it (panelcheck exempts queries by them).
func FuzzMetricNames(f *testing.F) {
	for _, s := range []string{
		`sum by (tier) (rate(prism_a_total{node=~"$node"}[$__rate_interval]) * on (node, device) group_left (tier) prism_b{x="y"})`,
		`label_values(prism_device_info{node="$node"}, device)`, `"unterminated`, `{{{`, `max(`, `1e10 or vector(0)`,
	} {
		f.Add(s)
	}
	ident := regexp.MustCompile(`^[A-Za-z_:][A-Za-z0-9_:]*$`)
	f.Fuzz(func(t *testing.T, expr string) {
		for _, n := range MetricNames(expr) {
			if !ident.MatchString(n) || !strings.Contains(expr, n) {
				t.Fatalf("MetricNames(%q) names %q", expr, n)
			}
		}
	})
}
