package panelcheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
)

// Verdict is what a check made of Run's results, given the queries that cannot have data
// where it ran (query name -> reason).
type Verdict struct {
	// Checked counts the queries that had to have data and had.
	Checked int
	// Lines say, one per query, "data", "NO DATA" or "not checked" with the reason, for the log.
	Lines []string
	// Failed says why the check fails: a query without data, a listed one with data after all
	// (the reason is wrong), a listed name that is no query (the list is stale).
	Failed []string
}

// Judge holds results against noData, as the demo (hack/demo --check-panels) and the e2e
// suite's Prometheus spec check the dashboards; o names the alternative selections tried.
func Judge(results []Result, o Options, noData map[string]string) Verdict {
	var v Verdict
	used := map[string]bool{}
	for _, r := range results {
		name := r.Name()
		reason, exempt := noData[name]
		used[name] = used[name] || exempt
		problem := r.Problem()
		switch {
		case exempt && problem == "":
			v.Failed = append(v.Failed, fmt.Sprintf("%s has data although listed as impossible (%s)", name, reason))
		case exempt:
			v.Lines = append(v.Lines, fmt.Sprintf("  not checked  %s: %s", name, reason))
		case problem != "":
			v.Failed = append(v.Failed, fmt.Sprintf("%s: %s\n    %s", name, problem, r.Run))
			v.Lines = append(v.Lines, fmt.Sprintf("  NO DATA      %s: %s", name, problem))
		case r.Alternative > 0:
			v.Checked++
			v.Lines = append(v.Lines, fmt.Sprintf("  data         %s (%d series, with %v)", name, r.Series, o.Alternatives[r.Dashboard][r.Alternative-1]))
		default:
			v.Checked++
			v.Lines = append(v.Lines, fmt.Sprintf("  data         %s (%d series)", name, r.Series))
		}
	}
	var stale []string
	for name := range noData {
		if !used[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		v.Failed = append(v.Failed, "the list of queries without data names no dashboard query: "+s)
	}
	return v
}

// Unexposed lists the queries of All that read a metric exposed says is absent where the check
// runs, in each of their top-level `or` branches, each with why (one reason per absent metric,
// from why): such a query cannot have data there, and one with a branch that reads only
// exposed metrics (or none: `or vector(0)`) must.
func Unexposed(exposed map[string]bool, why func(metric string) string) (map[string]string, error) {
	queries, err := All()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, q := range queries {
		expr := q.Expr
		if p, ok := dashboards.LabelValuesAsPromQL(expr); ok {
			expr = p
		}
		// Each `or` branch that reads an absent metric has no data; one that reads none
		// (vector(0), or exposed metrics only) gives the query data.
		var reasons []string
		possible := false
		for _, branch := range orBranches(expr) {
			absent := false
			for _, m := range dashboards.MetricNames(branch) {
				if exposed[m] {
					continue
				}
				absent = true
				if r := why(m); !slices.Contains(reasons, r) {
					reasons = append(reasons, r)
				}
			}
			possible = possible || !absent
		}
		if !possible {
			out[Result{Query: q}.Name()] = strings.Join(reasons, "; ")
		}
	}
	return out, nil
}

// UnexposedOnNode is Unexposed for a check of one node (ForNode): the overview dashboard, which
// shows every node, against the metrics any agent serves (cluster), the node and device
// dashboards against those the node's agent serves (node).
func UnexposedOnNode(cluster, node map[string]bool, why func(metric string) string) (map[string]string, error) {
	all, err := Unexposed(cluster, why)
	if err != nil {
		return nil, err
	}
	mine, err := Unexposed(node, why)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, reason := range mine {
		if !strings.HasPrefix(name, dashboards.UIDOverview+"/") {
			out[name] = reason
		}
	}
	for name, reason := range all {
		if strings.HasPrefix(name, dashboards.UIDOverview+"/") {
			out[name] = reason
		}
	}
	return out, nil
}

// ForNode are the options that run every query for one node of a cluster, as the e2e suite
// checks each node: the overview over every node, the node dashboard on node with all of
// devices, the device dashboard on devices[0] and, for a query without data there, on each
// other device in turn. rate is $__rate_interval, interval $__interval (the scrape interval).
func ForNode(node string, devices []string, rate, interval string, rng, step time.Duration) (Options, error) {
	if node == "" || len(devices) == 0 {
		return Options{}, fmt.Errorf("node %q with devices %v: want a node and a device at least", node, devices)
	}
	o := Options{
		Common: map[string]string{"__rate_interval": rate, "__interval": interval, "topn": "10"},
		PerBoard: map[string]map[string]string{
			dashboards.UIDOverview: {"node": ".*"},
			dashboards.UIDNode:     {"node": node, "device": ".*"},
			dashboards.UIDDevice:   {"node": node, "device": devices[0]},
		},
		Range: rng, Step: step,
	}
	for _, d := range devices[1:] {
		if o.Alternatives == nil {
			o.Alternatives = map[string][]map[string]string{}
		}
		o.Alternatives[dashboards.UIDDevice] = append(o.Alternatives[dashboards.UIDDevice], map[string]string{"node": node, "device": d})
	}
	return o, nil
}
