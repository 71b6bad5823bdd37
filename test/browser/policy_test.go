package browser

import (
	"context"
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

// checkPolicyPanels runs the overview's per-policy OSD queries, as the dashboard has them,
// against Prometheus scraping the synthetic exposition, and compares every value with what
// the synthetic cluster makes them (policyOf and osdMetrics): qlc-hybrid has OSDs 0-8 on
// three nodes, qlc-archive OSDs 9-13 on two, osd.9 spilled; every slot is 30 GiB, used
// 18 GiB + id/2 GiB growing 2 GiB a day, so the OSDs spill in 6 − id/4 days.
func checkPolicyPanels(t *testing.T, ctx context.Context, prom string) {
	const gib, mib = 1 << 30, 1 << 20
	now := float64(time.Now().Unix())
	advice := []float64{2156 * mib, 2426 * mib, 5120 * mib, 32068 * mib}
	want := map[string]map[string]float64{
		"OSDs per policy: DB spill/A":                                     {"qlc-hybrid": 9, "qlc-archive": 5},
		"OSDs per policy: DB spill/B":                                     {"qlc-hybrid": 0, "qlc-archive": 1},
		"OSDs per policy: DB spill/C":                                     {"qlc-hybrid": 9, "qlc-archive": 4},
		"OSDs per policy: DB spill/D":                                     {"qlc-hybrid": 1000 * (now + 4*day), "qlc-archive": 1000 * (now + 2.75*day)}, // osd.8, osd.13
		"OSDs per policy: DB spill/E":                                     {"qlc-hybrid": 2, "qlc-archive": 2},
		"OSDs per policy: DB spill/F":                                     {"qlc-hybrid": 9 * 30 * gib, "qlc-archive": 5 * 30 * gib},
		"DB slot per policy and level/A":                                  {},
		"DB slot per policy and level/B":                                  {},
		"DB slot per policy and level/C":                                  {},
		"Fast devices per policy/A":                                       {"qlc-hybrid": 3 * optaneCapacity, "qlc-archive": 2 * optaneCapacity},
		"Share of each policy's OSDs spilled or spilling within 7 days/A": {"qlc-hybrid": 1, "qlc-archive": 1},
	}
	for level, slot := range advice {
		l := "/" + strconv.Itoa(level)
		keeps := 0.0
		if slot <= 30*gib {
			keeps = 1
		}
		for policy, osds := range map[string]float64{"qlc-hybrid": 9, "qlc-archive": 5} {
			want["DB slot per policy and level/A"][policy+l] = slot
			want["DB slot per policy and level/B"][policy+l] = keeps * osds
			want["DB slot per policy and level/C"][policy+l] = osds * slot
		}
	}
	boards, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"node": ".*", "__rate_interval": "30s", "__interval": "2s", "topn": "10"}
	checked := 0
	for _, b := range boards {
		qs, err := dashboards.Queries(b.Dashboard)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			w, ok := want[q.Panel+"/"+q.RefID]
			if !ok || q.Dashboard != dashboards.UIDOverview {
				continue
			}
			checked++
			expr := dashboards.Substitute(q.Expr, vars)
			got := policyValues(t, ctx, prom, expr)
			if len(got) != len(w) {
				t.Errorf("%s/%s: %v, want %v\n    %s", q.Panel, q.RefID, got, w, expr)
				continue
			}
			for k, v := range w {
				tol := 1e-9 * math.Abs(v)
				if q.RefID == "D" { // a forecast date in ms: the DB grows 10 kB/s, a minute at most
					tol = 60e3
				}
				if g, ok := got[k]; !ok || math.Abs(g-v) > tol {
					t.Errorf("%s/%s %s = %v, want %v\n    %s", q.Panel, q.RefID, k, got[k], v, expr)
				}
			}
		}
	}
	if checked != len(want) {
		t.Errorf("checked %d per-policy queries, want %d: a panel was renamed or removed", checked, len(want))
	}
}

// policyValues runs an instant query and returns each series' value by its policy label,
// and "/level" when it has one.
func policyValues(t *testing.T, ctx context.Context, prom, expr string) map[string]float64 {
	t.Helper()
	r, err := panelcheck.Get(ctx, prom, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var vec []struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	out := map[string]float64{}
	for _, s := range vec {
		k := s.Metric["policy"]
		if l, ok := s.Metric["level"]; ok {
			k += "/" + l
		}
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("%s: value %v", expr, s.Value[1])
		}
		out[k] = v
	}
	return out
}
