package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/dashboards"
	"github.com/prism-storage/prism/test/support/panelcheck"
)

// noDataFromSimulatedNodes are the dashboard queries that cannot have data in the demo, keyed
// by dashboard uid / panel title / query ref, with the reason. The check fails when one of them
// has data after all (the reason is wrong) or names no query (the list is stale).
var noDataFromSimulatedNodes = map[string]string{}

// Reasons shared by several queries.
const (
	reasonOSD = "prism_osd_* come from OSD admin sockets and the demo runs no Ceph; " +
		"test/ceph (TestCephOSDTable) proves these queries against the agent's collector reading a real Ceph 16.2 OSD"
	reasonCeph = "ceph_bluefs_* and ceph_disk_occupation come from Ceph, not from Prism, and the demo runs no Ceph; " +
		"test/ceph (TestCephOSDTrace) proves these queries against a real Ceph 16.2 mgr prometheus module and a real spill-over"
)

func init() {
	for _, q := range []string{
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/A",
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/B",
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/C",
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/D",
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/E",
		dashboards.UIDNode + "/OSDs: DB slot and spill forecast/F",
		dashboards.UIDNode + "/OSD data classes (the PRISM table)/A",
		dashboards.UIDNode + "/OSD data classes (the PRISM table)/B",
		dashboards.UIDNode + "/OSD data classes (the PRISM table)/C",
		dashboards.UIDNode + "/OSD data classes (the PRISM table)/D",
		dashboards.UIDNode + "/DB slot advice/A",
		dashboards.UIDNode + "/Share of the OSDs' writes per data class/A",
		dashboards.UIDNode + "/DB used and the slot, per OSD/A",
		dashboards.UIDNode + "/DB used and the slot, per OSD/B",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/A",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/B",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/C",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/D",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/E",
		dashboards.UIDOverview + "/OSDs per policy: DB spill/F",
		dashboards.UIDOverview + "/DB slot per policy and level/A",
		dashboards.UIDOverview + "/DB slot per policy and level/B",
		dashboards.UIDOverview + "/DB slot per policy and level/C",
		dashboards.UIDOverview + "/Share of each policy's OSDs spilled or spilling within 7 days/A",
	} {
		noDataFromSimulatedNodes[q] = reasonOSD
	}
	for _, q := range []string{
		dashboards.UIDOverview + "/BlueFS spillover to the slow device — $topn OSDs/A",
		dashboards.UIDNode + "/BlueFS DB used and spilled to the slow device/A",
		dashboards.UIDNode + "/BlueFS DB used and spilled to the slow device/B",
		dashboards.UIDDevice + "/BlueFS of the OSDs on this device/A",
		dashboards.UIDDevice + "/BlueFS of the OSDs on this device/B",
	} {
		noDataFromSimulatedNodes[q] = reasonCeph
	}
}

// checkDashboards waits for a few scrapes of every agent, then runs every query of every
// generated dashboard against the demo's Prometheus and fails naming each one without data.
func (d *demo) checkDashboards(ctx context.Context) error {
	if d.promURL == "" || !d.caches() {
		return fmt.Errorf("--check-panels needs Prometheus and the caches")
	}
	if err := d.waitForScrapes(ctx); err != nil {
		return err
	}
	if err := d.checkNodePolicies(ctx); err != nil {
		return err
	}
	opts, err := d.panelVariables(ctx)
	if err != nil {
		return err
	}
	results, err := panelcheck.Run(ctx, d.promURL, opts)
	if err != nil {
		return err
	}
	say("\n# Every query of every generated dashboard against the demo's Prometheus (real agents on simulated nodes)")
	say("# variables: node dashboard %v, device dashboard %v, else %v", opts.PerBoard[dashboards.UIDNode], opts.PerBoard[dashboards.UIDDevice], opts.Alternatives[dashboards.UIDDevice])
	v := panelcheck.Judge(results, opts, noDataFromSimulatedNodes)
	for _, l := range v.Lines {
		say("%s", l)
	}
	if len(v.Failed) > 0 {
		return fmt.Errorf("%d dashboard queries failed the check (noDataFromSimulatedNodes lists those that cannot have data):\n  %s", len(v.Failed), strings.Join(v.Failed, "\n  "))
	}
	say("%d of %d dashboard queries returned data from the real agents; %d cannot have data in the demo (listed above with the reason).",
		v.Checked, len(results), len(noDataFromSimulatedNodes))
	return nil
}

// waitForScrapes waits until Prometheus has every agent's devices and caches with enough
// samples for the rate windows the dashboards use.
func (d *demo) waitForScrapes(ctx context.Context) error {
	checks := []struct {
		query string
		min   float64
	}{
		{"count(up{job=\"prism-agent\"} == 1)", float64(len(d.nodes))},
		{"min(count_over_time(prism_device_host_written_bytes_total[1m]))", 8},
	}
	if d.caches() {
		checks = append(checks, struct {
			query string
			min   float64
		}{"min(count_over_time(prism_cache_class_hits_total[1m]))", 8})
	}
	for _, c := range checks {
		var v float64
		var err error
		if werr := waitFor(ctx, 90*time.Second, func() bool {
			v, err = panelcheck.Scalar(ctx, d.promURL, c.query)
			return err == nil && v >= c.min
		}); werr != nil {
			return fmt.Errorf("Prometheus has too little data: %s = %v (want ≥ %v), %v: %w", c.query, v, c.min, err, werr)
		}
	}
	return nil
}

// panelVariables picks the dashboards' variables from the data, as a user would: the node
// dashboard shows a node with a cache, a wear-out date and a drive that reports its write
// amplification; the device dashboard that node's drive that wears out first and, for the
// panels it has no data for, the node's most amplifying drive (no drive here has both: the
// only recording with media writes, a Micron 5210 ION, has no published endurance rating).
func (d *demo) panelVariables(ctx context.Context) (panelcheck.Options, error) {
	o := panelcheck.Options{
		Common: map[string]string{"__rate_interval": "10s", "__interval": "2s", "topn": "10"},
		Range:  time.Minute, Step: 2 * time.Second,
	}
	nodeQuery := `max by (node) (prism_device_wearout_timestamp_seconds) and on (node) max by (node) (prism_device_write_amplification_ratio)`
	if d.caches() {
		nodeQuery += ` and on (node) max by (node) (prism_cache_info)`
	}
	nodes, err := panelcheck.Labels(ctx, d.promURL, `bottomk(1, `+nodeQuery+`)`, "node")
	if err != nil || len(nodes) == 0 {
		return o, fmt.Errorf("no node has a wear-out date and a WAF%s: %v", map[bool]string{true: " and a cache", false: ""}[d.caches()], err)
	}
	first, err := panelcheck.Labels(ctx, d.promURL, fmt.Sprintf(`bottomk(1, prism_device_wearout_timestamp_seconds{node=%q})`, nodes[0]), "device")
	if err != nil || len(first) == 0 {
		return o, fmt.Errorf("no device of %s has a wear-out date: %v", nodes[0], err)
	}
	amplifying, err := panelcheck.Labels(ctx, d.promURL, fmt.Sprintf(`topk(1, prism_device_write_amplification_ratio{node=%q})`, nodes[0]), "device")
	if err != nil || len(amplifying) == 0 {
		return o, fmt.Errorf("no device of %s has a WAF: %v", nodes[0], err)
	}
	o.PerBoard = map[string]map[string]string{
		dashboards.UIDOverview: {"node": ".*"}, // "All"
		dashboards.UIDNode:     {"node": nodes[0], "device": ".*"},
		dashboards.UIDDevice:   {"node": nodes[0], "device": first[0]},
	}
	o.Alternatives = map[string][]map[string]string{
		dashboards.UIDDevice: {{"node": nodes[0], "device": amplifying[0]}},
	}
	return o, nil
}

// checkNodePolicies checks that every agent serves its StorageNode's spec.policyName as
// prism_node_info{policy} (the per-policy panels and PrismPolicyDBSpillForecast join on it),
// waiting for the agents' next sync after the operator assigned the policy.
func (d *demo) checkNodePolicies(ctx context.Context) error {
	var mismatch, seen []string
	check := func() bool {
		mismatch, seen = nil, nil
		list := &prismv1.StorageNodeList{}
		if err := d.env.Client.List(ctx, list); err != nil {
			mismatch = []string{err.Error()}
			return false
		}
		for _, sn := range list.Items {
			got, err := nodePolicies(ctx, d.promURL, sn.Name)
			if err != nil || len(got) != 1 || got[0] != sn.Spec.PolicyName {
				mismatch = append(mismatch, fmt.Sprintf("%s: prism_node_info policies %q (%v), StorageNode spec.policyName %q", sn.Name, got, err, sn.Spec.PolicyName))
			}
			seen = append(seen, fmt.Sprintf("%s=%q", sn.Name, sn.Spec.PolicyName))
		}
		return len(list.Items) > 0 && len(mismatch) == 0
	}
	if err := waitFor(ctx, 90*time.Second, check); err != nil {
		return fmt.Errorf("the agents' prism_node_info does not carry their StorageNodes' policies:\n  %s: %w", strings.Join(mismatch, "\n  "), err)
	}
	say("\n# prism_node_info carries every StorageNode's spec.policyName (the per-policy panels' join): %s", strings.Join(seen, ", "))
	return nil
}

// nodePolicies returns the policy label of each prism_node_info series of node ("" when the
// series has none: Prometheus drops an empty label).
func nodePolicies(ctx context.Context, prom, node string) ([]string, error) {
	r, err := panelcheck.Get(ctx, prom, "/api/v1/query", url.Values{"query": {fmt.Sprintf("prism_node_info{node=%q}", node)}})
	if err != nil {
		return nil, err
	}
	var vec []struct {
		Metric map[string]string `json:"metric"`
	}
	if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
		return nil, err
	}
	var out []string
	for _, v := range vec {
		out = append(out, v.Metric["policy"])
	}
	return out, nil
}
