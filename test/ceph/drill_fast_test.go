//go:build linux

package ceph

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// fastDrillRunbook is the runbook TestRunbookReplaceFastDevice runs; hack/doccheck asks for a
// drill naming it.
const fastDrillRunbook = "docs/runbooks/replace-fast-device.md"

const (
	fastNewByID = "/dev/disk/by-id/nvme-PRISMTEST_OPTANE_NEW"
	peerByID    = "/dev/disk/by-id/nvme-PRISMTEST_PEER_%d"
	// backfillSleep is osd_recovery_sleep during step 4, in seconds: the drill's objects
	// backfill in a few seconds, less than one round of the probe's questions; a second per
	// backfill op keeps each new OSD's backfill long enough to be asked about.
	backfillSleep = "1"
)

// peerNodes are the other nodes of the drill's cluster, one OSD each with its DB on its own
// drive: with failure domain host, every PG has a copy on one of them, and once Prism's node
// is lost they hold both copies (decision 0055).
var peerNodes = []string{"prismtest-peer-a", "prismtest-peer-b"}

// TestRunbookReplaceFastDevice (only with PRISM_CEPH_DRILL=1) is the failure drill of
// docs/runbooks/replace-fast-device.md: Prism's node with three OSDs whose DBs share one fast
// device and two other nodes with one OSD each, a size-2 pool with failure domain host holding
// objects whose checksums are recorded. The fast device dies (its OSDs killed, its backing file
// truncated to nothing). The runbook's blocks not marked "not run" run as internal/runbook
// parses them, each block for every OSD behind the device; a new fast device comes in, the
// planner gives it fresh slots and the agent's partitioner makes them (step 3); step 4 is the
// operator's gate on the live cluster's answers (reCreate). Every object must read back
// identical, and the other nodes' OSDs and devices must not have changed.
func TestRunbookReplaceFastDevice(t *testing.T) {
	if os.Getenv("PRISM_CEPH_DRILL") == "" {
		t.Skip("set PRISM_CEPH_DRILL=1 to run the replace-fast-device drill (about 15 minutes, root)")
	}
	began := time.Now()
	e := newEnv(t)
	r := readRunbook(t, fastDrillRunbook)
	d := newDrill(t, e, bootstrapForProbe(e))
	peers := d.addPeers(peerNodes)
	d.makePool("host")
	host := d.c.crushHost(d.osds[0])
	if want := rook.CrushHost(nodeName, ""); host != want {
		t.Fatalf("%s is under CRUSH host %q, want %q (the probe asks about that host)", d.osds[0].name(), host, want)
	}
	d.checkCopiesApart(d.osds)
	t.Logf("cluster with %d OSDs on %d nodes, %d objects recorded (%.0f s)", len(d.osds)+len(peers), 1+len(peers), len(d.sums), time.Since(began).Seconds())

	before := d.snapshot(nil, peers)
	d.killOSDs(d.osds...)
	d.failLoop(d.fast, fastByID)

	var old []map[string]string
	for _, o := range d.osds {
		old = append(old, map[string]string{"OSD_ID": strconv.Itoa(o.id), "DATA_DRIVE": o.data})
	}
	r.step(d, 1, old...)
	r.step(d, 2, old...)

	// Step 3: the new fast device, fresh slots for the same data drives.
	fresh := e.attachLoop("fastnew", fastSize, true)
	fresh.stablePath = fastNewByID
	devices := d.swapFast(fresh)
	layout := d.planFor(devices, nil)
	if len(layout.Problems) > 0 || len(layout.Unplaced) > 0 || len(layout.Plan.FastDevices) != 1 {
		t.Fatalf("step 3: plan: problems %v, unplaced %v, %d fast devices", layout.Problems, layout.Unplaced, len(layout.Plan.FastDevices))
	}
	fp := layout.Plan.FastDevices[0]
	for _, o := range d.osds {
		if s := slotOf(fp, o.dataByID); fp.StablePath != fastNewByID || s.DataDevice == "" {
			t.Fatalf("step 3: %s has no slot on the new fast device: %+v", o.dataByID, fp)
		}
	}
	d.agentPass(layout.Plan, devices)
	checkPartitions(e, fresh, fp)
	d.addSlots(fresh, fp)
	t.Logf("step 3: %s planned with %d slots and partitioned by the agent's partitioner", fp.StablePath, len(fp.Slots))

	d.c.mustCeph("config", "set", "osd", "osd_recovery_sleep", backfillSleep)
	created := d.reCreate(layout.Plan, fp, devices, newProbeKey(d.c), host)
	d.c.mustCeph("config", "rm", "osd", "osd_recovery_sleep")

	var news []map[string]string
	for _, o := range created {
		news = append(news, map[string]string{"NEW_OSD_ID": strconv.Itoa(o.id)})
	}
	for i, out := range r.step(d, 5, news...) {
		o := created[i]
		checkDBIn(t, out["ceph osd metadata"], o, o.db)
		if strings.Contains(out["ceph health detail"], "BLUEFS_SPILLOVER") {
			t.Errorf("step 5: ceph health detail reports BlueFS spill-over:\n%s", out["ceph health detail"])
		}
		d.c.checkOSD(o)
	}
	d.c.waitAllClean()
	d.verifyObjects()
	r.step(d, 6, old...)
	for _, o := range d.osds {
		if d.c.osdExists(o.id) {
			t.Errorf("step 6: %s is still in the OSD map", o.name())
		}
	}
	d.checkUnchanged(before)
	t.Logf("drill done in %.0f s", time.Since(began).Seconds())
}

// addPeers adds one OSD on each other node, its DB on its own drive (no Prism there).
func (d *drill) addPeers(nodes []string) []*osd {
	var out []*osd
	for i, n := range nodes {
		l := d.e.attachLoop(fmt.Sprintf("peer%d", i), slowSize, false)
		l.stablePath = fmt.Sprintf(peerByID, i)
		d.kernel[l.stablePath] = l.dev
		entry := rook.RookDevice{Name: l.stablePath, Config: rook.DeviceConfigOf(map[string]string{"deviceClass": deviceClass})}
		out = append(out, d.c.createOSDOn(n, entry, d.kernel, deviceClass))
	}
	d.c.waitOSDsUpIn(out)
	for i, o := range out {
		if h := d.c.crushHost(o); h != nodes[i] {
			d.t.Fatalf("%s is under CRUSH host %q, want its node %q", o.name(), h, nodes[i])
		}
	}
	return out
}

// crushHost is the CRUSH host the OSD is under (`ceph osd find`).
func (c *cluster) crushHost(o *osd) string {
	var found struct {
		Location map[string]string `json:"crush_location"`
	}
	c.mustCephJSON(&found, "osd", "find", strconv.Itoa(o.id))
	return found.Location["host"]
}

// checkCopiesApart asserts that no PG keeps every copy on the OSDs given (those behind the
// fast device): what the rule's failure domain is for (decision 0055).
func (d *drill) checkCopiesApart(behind []*osd) {
	var ids []int
	for _, o := range behind {
		ids = append(ids, o.id)
	}
	// The mgr's PG map lags the pool's size change: wait until it shows both copies of every PG.
	var pgs []pgBrief
	d.e.waitFor(3*time.Minute, "every PG active+clean with 2 copies in the mgr's PG map", func() (bool, string) {
		pgs = d.c.pgsBrief()
		for _, pg := range pgs {
			if pg.State != "active+clean" || len(pg.Acting) != 2 {
				return false, fmt.Sprintf("%+v", pg)
			}
		}
		return len(pgs) > 0, ""
	})
	one := 0
	for _, pg := range pgs {
		n := 0
		for _, id := range pg.Acting {
			if slices.Contains(ids, id) {
				n++
			}
		}
		if n == len(pg.Acting) {
			d.t.Fatalf("PG %s keeps every copy behind the fast device (acting %v; OSDs behind it %v)", pg.PGID, pg.Acting, ids)
		}
		if n > 0 {
			one++
		}
	}
	d.t.Logf("%d PGs: %d with a copy behind the fast device, none with every copy there", len(pgs), one)
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

// swapFast is the agent's inventory after the fast device was swapped: the new one in its place.
func (d *drill) swapFast(fresh *loopDev) []prismv1.Device {
	out := slices.Clone(d.devices)
	for i := range out {
		if out[i].StablePath == d.fast.stablePath {
			out[i].Name, out[i].Path, out[i].StablePath = fresh.name, fresh.dev, fresh.stablePath
		}
	}
	return out
}

// reCreate is step 4 on the host, where no operator runs: each pass asks Ceph the gate's
// questions through the probe's own script as client.prism-probe (askProbe), gives
// rook.GateReplacements those answers with the planned entries and the entries applied so far,
// and prepares the OSD it releases from its entry, as Rook's prepare job would, until every data
// drive has an OSD again. The drill's clock jumps MaxSettle after each release: the operator's
// pacing is table-tested (replace_test.go), so here only Ceph's answers hold an OSD. After each
// release, the gate must hold the next drive on Ceph's answer while PGs are not all
// active+clean (the new OSD's backfill), and release it later; a hold while every PG is
// active+clean fails the drill.
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
		a, done := rook.ProbeAnswers(askProbe(t, d.c, nodeName, host, keyfile, now, nil), now)
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
