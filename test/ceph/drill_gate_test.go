//go:build linux

package ceph

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// reCreate is step 4 on the host, where no operator runs: each pass asks Ceph the gate's
// questions through the probe's own script as client.prism-probe (askProbe, about the drives
// the gate holds), gives rook.GateReplacements those answers with the planned entries and the
// entries applied so far, and prepares the OSD it releases from its entry, as Rook's prepare
// job would, until every data drive has an OSD again. The drill's clock jumps MaxSettle after
// each release: the operator's pacing is table-tested (replace_test.go), so here only Ceph's
// answers hold an OSD. After each release, the gate must hold the next drive on Ceph's answer
// while PGs are not all active+clean (the new OSD's backfill), and release it later; a hold
// while every PG is active+clean fails the drill.
func (d *drill) reCreate(p prismv1.NodePlan, fp prismv1.FastDevicePlan, devices []prismv1.Device, keyfile, host string) []*osd {
	t := d.t
	planned := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: p}, deviceClass)
	applied := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: d.layout.Plan}, deviceClass)
	kernel := map[string]map[string]string{nodeName: {}}
	for _, dev := range devices {
		kernel[nodeName][dev.StablePath] = dev.Name
	}
	var (
		out     []*osd
		last    *rook.Release
		skew    time.Duration
		held    []string // Ceph's holds since the last release, while PGs moved
		cleanly int      // passes in a row held while every PG was active+clean
	)
	deadline := time.Now().Add(20 * time.Minute)
	for len(out) < len(d.osds) {
		now := time.Now().Add(skew)
		// The drives the probe asks about, as the operator picks them: those the gate holds.
		ask := rook.GateReplacements(rook.GateInput{Entries: planned, Existing: asExisting(t, applied), Kernel: kernel, Last: last, Now: now})
		a, done := rook.ProbeAnswers(askProbe(t, d.c, nodeName, host, keyfile, rook.ProbeDrives(ask.Awaiting[nodeName], nil), now, nil), now)
		if !done || a.Err != "" {
			t.Fatalf("step 4: the probe did not answer: done %v, %s", done, a.Err)
		}
		pgs, err := d.c.pgStat()
		if err != nil {
			t.Fatal(err)
		}
		res := rook.GateReplacements(rook.GateInput{Entries: planned, Existing: asExisting(t, applied), Kernel: kernel,
			Answers: map[string]rook.CephAnswers{nodeName: a}, Last: last, Now: now})
		applied = res.Entries
		if res.Released == nil {
			why := strings.Join(res.Held, "; ")
			t.Logf("step 4: the gate holds %d (PGs %v): %s", len(res.Held), pgs, why)
			switch {
			case len(res.Held) == 0:
				t.Fatalf("step 4: the gate neither releases nor holds anything, %d of %d OSDs re-created", len(out), len(d.osds))
			case pgs.only("active+clean"):
				if cleanly++; cleanly == 3 {
					t.Fatalf("step 4: every PG is active+clean, and the gate still holds: %s", why)
				}
			case len(out) > 0:
				held = append(held, res.Held[0])
				cleanly = 0
			}
			if time.Now().After(deadline) {
				t.Fatalf("step 4: %d of %d OSDs re-created in 20 minutes; the gate holds: %s", len(out), len(d.osds), why)
			}
			time.Sleep(5 * time.Second)
			continue
		}
		if len(out) > 0 && len(held) == 0 {
			t.Errorf("step 4: the gate released %s without holding it on Ceph's answer while %s backfilled", res.Released.Device, out[len(out)-1].name())
		}
		if len(out) > 0 {
			t.Logf("step 4: the gate held %s %d times while PGs moved, first: %s", res.Released.Device, len(held), held[0])
		}
		t.Logf("step 4: the gate releases %s (PGs %v); %d others held: %s", res.Released.Device, pgs, len(res.Held), strings.Join(res.Held, "; "))
		i := slices.IndexFunc(res.Entries[0].Devices, func(x rook.RookDevice) bool { return x.Name == res.Released.Device })
		o := d.c.createOSD(effectiveEntries(res.Entries[0])[i], d.kernel, fp)
		d.c.waitOSDsUpIn([]*osd{o})
		d.c.waitMapped(o)
		out = append(out, o)
		last, skew, held, cleanly = res.Released, skew+rook.MaxSettle, nil, 0
	}
	return out
}

// asExisting is the entries as the CephCluster's spec.storage.nodes reads back (JSON objects).
func asExisting(t *testing.T, nodes []rook.RookNode) []any {
	raw, err := json.Marshal(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// pgBrief is one PG of `ceph pg dump pgs_brief`.
type pgBrief struct {
	PGID   string `json:"pgid"`
	State  string `json:"state"`
	Up     []int  `json:"up"`
	Acting []int  `json:"acting"`
}

func (c *cluster) pgsBrief() []pgBrief {
	var dump struct {
		PGStats []pgBrief `json:"pg_stats"`
	}
	c.mustCephJSON(&dump, "pg", "dump", "pgs_brief")
	return dump.PGStats
}

// waitMapped waits until the mgr's PG map has taken the OSD in: some PG's up set names it. The
// operator gives a released OSD at least MinSettle before it asks again; without this wait the
// drill, which skips that time, read answers from before the OSD's PGs moved (its first run
// released the third drive on "every PG active+clean" seconds after the second OSD came up).
func (c *cluster) waitMapped(o *osd) {
	c.e.waitFor(2*time.Minute, o.name()+" in some PG's up set", func() (bool, string) {
		for _, pg := range c.pgsBrief() {
			if slices.Contains(pg.Up, o.id) {
				return true, ""
			}
		}
		return false, ""
	})
}

// gateNewDrive is step 4 of the data-disk runbook on the host: the new drive (path) of the
// node's plan p is held while no answers from Ceph say that no OSD is destroyed under the
// node's CRUSH host (host), and written on the answers the probe's own script reads from the
// live cluster (decision 0061). It returns the entries the operator would write.
func (d *drill) gateNewDrive(p prismv1.NodePlan, path, host string) []rook.RookNode {
	t := d.t
	planned := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: p}, deviceClass)
	existing := asExisting(t, rook.RookNodes(map[string]prismv1.NodePlan{nodeName: d.layout.Plan}, deviceClass))
	now := time.Now()
	ask := rook.GateReplacements(rook.GateInput{Entries: planned, Existing: existing, Now: now})
	if len(ask.HeldNew) != 1 || !strings.HasPrefix(ask.HeldNew[0], nodeName+" "+path+": ") {
		t.Fatalf("step 4: without Ceph's answers the gate holds %q, want the new drive %s", ask.HeldNew, path)
	}
	a, done := rook.ProbeAnswers(askProbe(t, d.c, nodeName, host, newProbeKey(d.c), rook.ProbeDrives(ask.Awaiting[nodeName], nil), now, nil), now)
	if !done || a.Err != "" {
		t.Fatalf("step 4: the probe did not answer: done %v, %s", done, a.Err)
	}
	res := rook.GateReplacements(rook.GateInput{Entries: planned, Existing: existing, Answers: map[string]rook.CephAnswers{nodeName: a}, Now: now})
	if len(res.HeldNew) > 0 || len(res.Held) > 0 {
		t.Fatalf("step 4: after step 2's purge the gate holds %q %q (destroyed answer %s)", res.HeldNew, res.Held, a.Destroyed)
	}
	t.Logf("step 4: the gate writes %s on Ceph's answer %s", path, a.Destroyed)
	return res.Entries
}
