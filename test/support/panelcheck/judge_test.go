package panelcheck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
)

// TestJudge: a query without data fails, one listed as impossible is not checked, a listed one
// with data fails (the reason is wrong), a listed name that is no query fails (the list is
// stale), and data found with an alternative selection counts, naming it.
func TestJudge(t *testing.T) {
	q := func(panel string) dashboards.Query { return dashboards.Query{Dashboard: "b", Panel: panel, RefID: "A"} }
	results := []Result{
		{Query: q("data"), Series: 2, Finite: 3},
		{Query: q("alternative"), Series: 1, Finite: 1, Alternative: 1},
		{Query: q("empty"), Run: "up == 2"},
		{Query: q("nan"), Series: 1},
		{Query: q("error"), Err: errors.New("HTTP 400: bad")},
		{Query: q("listed and empty")},
		{Query: q("listed with data"), Series: 1, Finite: 1},
	}
	o := Options{Alternatives: map[string][]map[string]string{"b": {{"device": "nvme1n1"}}}}
	v := Judge(results, o, map[string]string{"b/listed and empty/A": "no Ceph", "b/listed with data/A": "no Ceph", "b/gone/A": "old"})
	if v.Checked != 2 {
		t.Errorf("Checked = %d, want 2", v.Checked)
	}
	failed := strings.Join(v.Failed, "\n")
	for _, want := range []string{"b/empty/A: no data\n    up == 2", "b/nan/A: 1 series but no finite value", "b/error/A: HTTP 400: bad",
		"b/listed with data/A has data although listed as impossible (no Ceph)", "names no dashboard query: b/gone/A"} {
		if !strings.Contains(failed, want) {
			t.Errorf("Failed lacks %q:\n%s", want, failed)
		}
	}
	if len(v.Failed) != 5 {
		t.Errorf("%d failures, want 5:\n%s", len(v.Failed), failed)
	}
	lines := strings.Join(v.Lines, "\n")
	for _, want := range []string{"not checked  b/listed and empty/A: no Ceph", "data         b/alternative/A (1 series, with map[device:nvme1n1])", "NO DATA      b/empty/A"} {
		if !strings.Contains(lines, want) {
			t.Errorf("Lines lack %q:\n%s", want, lines)
		}
	}
}

// TestUnexposed: with every metric the dashboards read exposed but one Prism metric and the
// Ceph ones, exactly the queries reading those are listed, each with the reasons of its
// absent metrics; label_values variables are read as their PromQL.
func TestUnexposed(t *testing.T) {
	queries, err := All()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, q := range queries {
		expr := q.Expr
		if p, ok := dashboards.LabelValuesAsPromQL(expr); ok {
			expr = p
		}
		for _, m := range dashboards.MetricNames(expr) {
			exposed[m] = true
		}
	}
	if !exposed["prism_device_info"] || exposed["node"] {
		t.Fatalf("the metrics read: %v", exposed)
	}
	why := func(m string) string {
		if strings.HasPrefix(m, "ceph_") {
			return "Ceph's exporter is not scraped"
		}
		return m + " absent"
	}
	all, err := Unexposed(exposed, why)
	if err != nil || len(all) != 0 {
		t.Fatalf("everything exposed: %v, %v", all, err)
	}
	delete(exposed, "prism_cache_dirty_ratio")
	for m := range exposed {
		if strings.HasPrefix(m, "ceph_") {
			delete(exposed, m)
		}
	}
	got, err := Unexposed(exposed, why)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		dashboards.UIDNode + "/Cache occupancy and dirty/B":                            "prism_cache_dirty_ratio absent",
		dashboards.UIDNode + "/BlueFS DB used and spilled to the slow device/A":        "Ceph's exporter is not scraped",
		dashboards.UIDNode + "/BlueFS DB used and spilled to the slow device/B":        "Ceph's exporter is not scraped",
		dashboards.UIDOverview + "/BlueFS spillover to the slow device — $topn OSDs/A": "Ceph's exporter is not scraped",
		dashboards.UIDDevice + "/BlueFS of the OSDs on this device/A":                  "Ceph's exporter is not scraped",
		dashboards.UIDDevice + "/BlueFS of the OSDs on this device/B":                  "Ceph's exporter is not scraped",
	}
	for name, reason := range want {
		if got[name] != reason {
			t.Errorf("%s: reason %q, want %q", name, got[name], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d queries listed, want %d: %v", len(got), len(want), got)
	}
}

// TestForNode: the node and device dashboards on the node, the overview on every node, the
// device dashboard's other drives as alternatives; no node or no device is an error.
func TestForNode(t *testing.T) {
	o, err := ForNode("n1", []string{"nvme0n1", "nvme1n1", "nvme2n1"}, "1m", "15s", time.Minute, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.PerBoard[dashboards.UIDOverview]["node"] != ".*" || o.PerBoard[dashboards.UIDNode]["node"] != "n1" ||
		o.PerBoard[dashboards.UIDDevice]["device"] != "nvme0n1" || o.Common["__rate_interval"] != "1m" || o.Step != 15*time.Second {
		t.Errorf("options %+v", o)
	}
	alt := o.Alternatives[dashboards.UIDDevice]
	if len(alt) != 2 || alt[0]["device"] != "nvme1n1" || alt[1]["device"] != "nvme2n1" || alt[1]["node"] != "n1" {
		t.Errorf("alternatives %v", alt)
	}
	if _, err := ForNode("n1", nil, "1m", "15s", time.Minute, time.Second); err == nil {
		t.Error("no device: no error")
	}
}

// TestUnexposedOnNode: a metric another node serves exempts the node's own dashboards' queries
// that read it, never the overview's (which shows that other node too).
func TestUnexposedOnNode(t *testing.T) {
	why := func(m string) string { return m + " absent" }
	cluster := map[string]bool{"prism_device_info": true, "prism_device_temperature_celsius": true}
	node := map[string]bool{"prism_device_info": true}
	got, err := UnexposedOnNode(cluster, node, why)
	if err != nil {
		t.Fatal(err)
	}
	if r := got[dashboards.UIDNode+"/Temperature/A"]; r != "prism_device_temperature_celsius absent" {
		t.Errorf("node dashboard's temperature: %q, want it exempt on this node", r)
	}
	if r := got[dashboards.UIDDevice+"/Temperature/A"]; r != "prism_device_temperature_celsius absent" {
		t.Errorf("device dashboard's temperature: %q, want it exempt on this node", r)
	}
	if _, ok := got[dashboards.UIDOverview+"/Nodes/A"]; ok {
		t.Error("the overview's node count is exempt although every node serves prism_device_info")
	}
	for name, reason := range got {
		if strings.HasPrefix(name, dashboards.UIDOverview+"/") && strings.Contains(reason, "temperature") {
			t.Errorf("overview %s exempt for %s, which another node serves", name, reason)
		}
	}
	if r := got[dashboards.UIDOverview+"/Worst wear/A"]; r != "prism_device_percentage_used_ratio absent" {
		t.Errorf("overview's worst wear: %q, want it exempt (no node serves the metric)", r)
	}
}

// TestOrBranches: a query splits at its top-level `or` only: not inside a selector's label
// value, a function's parentheses, a label list or a metric name.
func TestOrBranches(t *testing.T) {
	for expr, want := range map[string][]string{
		`count(a < b) or vector(0)`:                     {`count(a < b) `, ` vector(0)`},
		`sum(x{l="a or b"}) or 0 * count(y)`:            {`sum(x{l="a or b"}) `, ` 0 * count(y)`},
		`sum by (order) (x or y)`:                       {`sum by (order) (x or y)`},
		`prism_or_metric + ornament`:                    {`prism_or_metric + ornament`},
		`a or b or c`:                                   {`a `, ` b `, ` c`},
		`label_replace(x, "d", "or", "s", "(.*)") or z`: {`label_replace(x, "d", "or", "s", "(.*)") `, ` z`},
	} {
		if got := orBranches(expr); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("orBranches(%q) = %q, want %q", expr, got, want)
		}
	}
}

// A query with an `or` fallback that reads no absent metric can have data, so it is not
// listed: the e2e guest's "Wear-outs before warranty end" (`count(wearout < warranty) or
// vector(0)`) and "DB spill" C had data there, with neither metric served, and the check
// failed them as "has data although listed as impossible" (session 23).
func TestUnexposedKeepsAQueryWithAPossibleOrBranch(t *testing.T) {
	queries, err := All()
	if err != nil {
		t.Fatal(err)
	}
	exposed := map[string]bool{}
	for _, q := range queries {
		for _, m := range dashboards.MetricNames(q.Expr) {
			exposed[m] = true
		}
	}
	exposed["prism_device_wearout_timestamp_seconds"] = false
	exposed["prism_osd_db_spill_forecast_timestamp_seconds"] = false
	listed, err := Unexposed(exposed, func(m string) string { return m + " absent" })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prism-endurance-overview/Wear-outs before warranty end/A", "prism-endurance-overview/OSDs per policy: DB spill/C"} {
		if why, ok := listed[name]; ok {
			t.Errorf("%s listed as impossible (%s); its or-branch can have data", name, why)
		}
	}
	if _, ok := listed["prism-endurance-overview/OSDs per policy: DB spill/D"]; !ok {
		t.Errorf("DB spill/D reads only the absent forecast and is not listed: %v", listed)
	}
}
