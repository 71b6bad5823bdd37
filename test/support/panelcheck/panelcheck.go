// Package panelcheck runs every query of every generated Grafana dashboard (internal/dashboards),
// panel and variable queries alike, against a live Prometheus with the dashboards' variables
// substituted by real values, and says which queries return no data. "No data" includes a
// result whose every value is NaN or ±Inf: a panel cannot draw those either.
//
// The demo (hack/demo --check-panels) runs it against a real Prometheus scraping real agents;
// test/browser runs it against its synthetic exposition.
package panelcheck

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
)

// Options say how to run the queries.
type Options struct {
	// Common are variable values for every dashboard ($__rate_interval, $topn, ...).
	Common map[string]string
	// PerBoard are variable values by dashboard uid ($node, $device); they override Common.
	PerBoard map[string]map[string]string
	// Alternatives are further selections by dashboard uid, tried in order for a query that has
	// no data with PerBoard's: a device dashboard has every panel's data only across devices
	// (a drive without a rating has no wear-out date; one without media writes no WAF).
	Alternatives map[string][]map[string]string
	// Range is how far before Now range queries start (default 1 minute); Step their
	// resolution (default 2 s).
	Range, Step time.Duration
	// Now is the evaluation time (default time.Now()).
	Now time.Time
}

// Result is one query as run.
type Result struct {
	dashboards.Query
	// Run is the expression sent to Prometheus (variables substituted, label_values as PromQL).
	Run string
	// Alternative is the index+1 of the Options.Alternatives selection Run used; 0 for PerBoard's.
	Alternative    int
	Series, Finite int
	Err            error
}

// Name is dashboard uid / panel title / query ref.
func (r Result) Name() string { return r.Dashboard + "/" + r.Panel + "/" + r.RefID }

// Problem says why the query has no data for a panel to show, or "" when it has.
func (r Result) Problem() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Series == 0:
		return "no data"
	case r.Finite == 0:
		return fmt.Sprintf("%d series but no finite value", r.Series)
	}
	return ""
}

// All lists every panel and variable query of every generated dashboard.
func All() ([]dashboards.Query, error) {
	boards, err := dashboards.All()
	if err != nil {
		return nil, err
	}
	var out []dashboards.Query
	for _, b := range boards {
		qs, err := dashboards.Queries(b.Dashboard)
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
		out = append(out, dashboards.VariableQueries(b.Dashboard)...)
	}
	return out, nil
}

// Run runs every query of All against the Prometheus at prom (http://host:port). Errors of
// single queries are in their Result; the error is for not being able to list the queries.
func Run(ctx context.Context, prom string, o Options) ([]Result, error) {
	queries, err := All()
	if err != nil {
		return nil, err
	}
	if o.Range <= 0 {
		o.Range = time.Minute
	}
	if o.Step <= 0 {
		o.Step = 2 * time.Second
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	out := make([]Result, 0, len(queries))
	for _, q := range queries {
		r := runOne(ctx, prom, q, o, o.PerBoard[q.Dashboard])
		for i, alt := range o.Alternatives[q.Dashboard] {
			if r.Problem() == "" {
				break
			}
			if a := runOne(ctx, prom, q, o, alt); a.Problem() == "" {
				r, r.Alternative = a, i+1
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func runOne(ctx context.Context, prom string, q dashboards.Query, o Options, board map[string]string) Result {
	vars := map[string]string{}
	for k, v := range o.Common {
		vars[k] = v
	}
	for k, v := range board {
		vars[k] = v
	}
	expr := q.Expr
	if p, ok := dashboards.LabelValuesAsPromQL(expr); ok {
		expr = p
	}
	expr = dashboards.Substitute(expr, vars)
	res := Result{Query: q, Run: expr}
	if strings.Contains(expr, "$") {
		res.Err = fmt.Errorf("unsubstituted variable in %s", expr)
		return res
	}
	var r Response
	var err error
	if q.Instant {
		r, err = Get(ctx, prom, "/api/v1/query", url.Values{"query": {expr}, "time": {Unix(o.Now)}})
	} else {
		r, err = Get(ctx, prom, "/api/v1/query_range", url.Values{"query": {expr},
			"start": {Unix(o.Now.Add(-o.Range))}, "end": {Unix(o.Now)}, "step": {fmt.Sprint(o.Step.Seconds())}})
	}
	if err != nil {
		res.Err = err
		return res
	}
	res.Series, res.Finite, res.Err = Count(r)
	return res
}
