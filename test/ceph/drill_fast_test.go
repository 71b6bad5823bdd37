//go:build linux

package ceph

import (
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
	began := time.Now()
	e, r := startDrill(t, fastDrillRunbook, "about 3 minutes")
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
	for _, o := range d.osds {
		if d.c.osdExists(o.id) {
			t.Errorf("step 2: %s is still in the OSD map", o.name())
		}
		// The purge freed the id, which a re-created OSD may take (ceph-volume takes the lowest
		// free one). The killed daemon's data directory goes with it, as the pod does with the
		// Deployment the runbook deletes: the next prepare of that id makes it again.
		if err := os.RemoveAll(d.c.path(fmt.Sprintf("varlib/osd/%s-%d", clusterName, o.id))); err != nil {
			t.Fatal(err)
		}
	}

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
