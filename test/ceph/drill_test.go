//go:build linux

package ceph

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
	"github.com/prism-storage/prism/internal/runbook"
)

// drillRunbook is the runbook the drill runs; hack/doccheck asks for a drill naming it.
const drillRunbook = "docs/runbooks/replace-data-disk.md"

// drillName is how the runbook's `<!-- not run by DRILL: ... -->` markers name this drill.
const drillName = "test/ceph"

const (
	drillPool    = "prismdrill"
	drillPoolPGs = 16
	drillObjects = 40
)

// TestRunbookReplaceDataDisk (only with PRISM_CEPH_DRILL=1) is the failure drill of
// docs/runbooks/replace-data-disk.md: three OSDs whose DBs share one fast device (slots the
// agent's partitioner made), a size-2 pool with failure domain osd holding objects whose
// checksums are recorded; one QLC drive dies (its OSD killed, its loop's backing file
// truncated to nothing and the loop's capacity re-read: the kernel then reports a 0-byte
// device whose every read fails or returns nothing, and the bytes are gone as from a dead
// drive). Then the runbook's blocks that are not marked "not run" run as internal/runbook
// parses them, step by step; between steps 3 and 4 the agent's partitioner reads the slot and
// the planner places the replacement drive, which is step 4 on a node; step 5's block checks
// the new OSD. Every object must read back identical, and no other device may have changed.
func TestRunbookReplaceDataDisk(t *testing.T) {
	began := time.Now()
	e, r := startDrill(t, drillRunbook, "about 2 minutes")
	d := newDrill(t, e, bootstrapForProbe(e))
	d.makePool("osd")
	t.Logf("cluster with %d OSDs, %d objects recorded (%.0f s)", len(d.osds), len(d.sums), time.Since(began).Seconds())

	victim := d.osds[1]
	before := d.snapshot([]*loopDev{d.fast}, d.others(victim))
	d.killOSDs(victim)
	d.failLoop(d.loopOf(victim), victim.dataByID)

	// $SLOT_DEVICE is the partition, as the runbook says for an OSD whose DB is on the
	// partition itself (this kernel has no device-mapper, so no slot volume; test/ceph's OSDs
	// are raw-mode, decision 0036), by its kernel name: udev does not run here, so no by-id link.
	values := map[string]string{"OSD_ID": strconv.Itoa(victim.id), "SLOT_DEVICE": victim.db}
	run := func(step int) map[string]string { return r.step(d, step, values)[0] }
	run(1)
	run(2)
	if d.c.osdExists(victim.id) {
		t.Errorf("step 2: %s is still in the OSD map", victim.name())
	}
	// The purge freed the id, which the new OSD may take (ceph-volume takes the lowest free
	// one). The killed daemon's data directory goes with it, as the pod does with the
	// Deployment the runbook deletes.
	if err := os.RemoveAll(d.c.path(fmt.Sprintf("varlib/osd/%s-%d", clusterName, victim.id))); err != nil {
		t.Fatal(err)
	}

	// The replacement drive is in before the zap: the slot still holds the old OSD's DB, so
	// the planner keeps it and the new drive gets none (the fast device has no room).
	fresh := d.e.attachLoop("qlc3", slowSize, false)
	fresh.stablePath = fmt.Sprintf(qlcByID, 3)
	devices := d.devicesWithout(victim, fresh)
	statuses := d.agentPass(d.layout.Plan, devices)
	slotStatus := statusOf(t, statuses, victim.slot)
	if slotStatus.DBContent != prismv1.DBSlotInUse {
		t.Fatalf("before the zap the agent reads slot %d %q (%q), want InUse", victim.slot.Index, slotStatus.DBContent, slotStatus.DBFound)
	}
	// The fast device has no room for a fourth slot: the plan is refused, and its warning
	// names the kept slot (the first drill run found this; the runbook said "without a slot").
	early := d.planFor(devices, statuses)
	kept := fmt.Sprintf("DB slot %d keeps %s", victim.slot.Index, victim.dataByID)
	if len(early.Problems) == 0 || len(early.Plan.FastDevices) != 0 || !slices.ContainsFunc(early.Warnings, func(w string) bool { return strings.Contains(w, kept) }) {
		t.Fatalf("before the zap: problems %v, warnings %v, %d fast devices planned; want the plan refused and a warning %q", early.Problems, early.Warnings, len(early.Plan.FastDevices), kept)
	}
	t.Logf("before the zap: slot %d %s (%s); the plan is refused: %v; warning: %v", victim.slot.Index, slotStatus.DBContent, slotStatus.DBFound, early.Problems, early.Warnings)

	run(3)
	statuses = d.agentPass(d.layout.Plan, devices)
	if s := statusOf(t, statuses, victim.slot); s.DBContent != prismv1.DBSlotEmpty {
		t.Fatalf("after the runbook's zap the agent reads slot %d %q (%q), want Empty", victim.slot.Index, s.DBContent, s.DBFound)
	}
	layout := d.planFor(devices, statuses)
	if len(layout.Unplaced) > 0 || len(layout.Problems) > 0 {
		t.Fatalf("after the zap: unplaced %+v, problems %v", layout.Unplaced, layout.Problems)
	}
	fp := layout.Plan.FastDevices[0]
	got := slotOf(fp, fresh.stablePath)
	if got.Index != victim.slot.Index || got.Partition != victim.slot.Partition {
		t.Fatalf("the new drive got slot %+v, want the freed slot %+v", got, victim.slot)
	}
	t.Logf("after the zap: slot %d Empty; %s planned into slot %d (partition %d)", got.Index, fresh.stablePath, got.Index, got.Partition.Number)
	statuses = d.agentPass(layout.Plan, devices)
	for _, s := range statuses {
		if s.State != prismv1.PartitionReady {
			t.Fatalf("agent pass on the new plan: partition %d %s: %s", s.Number, s.State, s.Message)
		}
	}

	// Step 4 on a node: the operator writes the new drive's entry once Ceph's answers, read
	// through the probe's own script, say no OSD is destroyed under the node's CRUSH host
	// (decision 0061; step 2 purged), and Rook prepares the OSD from it.
	d.kernel[fresh.stablePath] = fresh.dev
	nodes := d.gateNewDrive(layout.Plan, fresh.stablePath, d.c.crushHost(d.others(victim)[0]))
	entry := slices.IndexFunc(nodes[0].Devices, func(x rook.RookDevice) bool { return x.Name == fresh.stablePath })
	if len(nodes) != 1 || entry < 0 {
		t.Fatalf("RookNodes: %+v", nodes)
	}
	newOSD := d.c.createOSD(effectiveEntries(nodes[0])[entry], d.kernel, fp)
	if newOSD.db != victim.db {
		t.Fatalf("new OSD's block.db %s, want the freed slot %s", newOSD.db, victim.db)
	}
	d.c.waitOSDsUpIn(append(d.others(victim), newOSD))
	values["NEW_OSD_ID"] = strconv.Itoa(newOSD.id)
	// Step 5's metadata, as the runbook's command printed it: the new OSD's DB is the freed slot.
	checkDBIn(t, run(5)["ceph osd metadata"], newOSD, victim.db)
	d.c.checkOSD(newOSD)

	d.c.waitAllClean()
	d.verifyObjects()
	d.checkUnchanged(before)
	if n := len(r.rb.Steps); n != 5 {
		t.Errorf("the runbook has %d steps; the drill runs 5 (decision 0061 removed the purge of step 6)", n)
	}
	t.Logf("drill done in %.0f s: the new OSD is osd.%d (the purged one was osd.%d)", time.Since(began).Seconds(), newOSD.id, victim.id)
}

// drill is the cluster of the drill and what it recorded.
type drill struct {
	t       *testing.T
	e       *env
	c       *cluster
	fast    *loopDev
	slow    []*loopDev
	devices []prismv1.Device
	layout  plan.Layout
	kernel  map[string]string
	osds    []*osd
	sums    map[string][32]byte
	spec    *prismv1.HybridStoragePolicySpec
}

// newDrill builds Prism's node on the cluster c: a fast device with one DB slot per QLC drive
// (the agent's partitioner), and one OSD per Rook entry, all up and in.
func newDrill(t *testing.T, e *env, c *cluster) *drill {
	d := &drill{t: t, e: e, c: c, sums: map[string][32]byte{}}
	d.fast = e.attachLoop("fast", fastSize, true)
	for i := range numSlow {
		d.slow = append(d.slow, e.attachLoop(fmt.Sprintf("qlc%d", i), slowSize, false))
	}
	var sel prismv1.NodeSelection
	d.devices, sel = inventory(d.fast, d.slow)
	size := resource.MustParse(dbSize)
	d.spec = &prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply, DB: prismv1.DBSizing{Size: &size}, OSD: prismv1.OSDSettings{DeviceClass: deviceClass}}
	d.layout = plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: d.devices, Spec: d.spec})
	if len(d.layout.Problems) > 0 || len(d.layout.Unplaced) > 0 || len(d.layout.Plan.FastDevices) != 1 || len(d.layout.Plan.FastDevices[0].Slots) != numSlow {
		t.Fatalf("plan: %+v", d.layout)
	}
	fp := d.layout.Plan.FastDevices[0]
	if _, err := partitionFast(e.ctx, hostexec.Local{Timeout: slow}, d.layout.Plan, d.devices); err != nil {
		t.Fatalf("partitioning %s: %v", d.fast.dev, err)
	}
	checkPartitions(e, d.fast, fp)
	d.kernel = map[string]string{}
	for _, dev := range d.devices {
		d.kernel[dev.StablePath] = dev.Path
	}
	d.addSlots(d.fast, fp)
	nodes := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: d.layout.Plan}, deviceClass)
	for _, entry := range effectiveEntries(nodes[0]) {
		d.osds = append(d.osds, d.c.createOSD(entry, d.kernel, fp))
	}
	d.c.waitOSDsUpIn(d.osds)
	return d
}

// addSlots maps the fast device's slot partitions (their plan paths) to its kernel partitions.
func (d *drill) addSlots(l *loopDev, fp prismv1.FastDevicePlan) {
	for _, s := range fp.Slots {
		d.kernel[prismv1.PartitionPath(fp.StablePath, s.Partition.Number)] = l.partitionDev(s.Partition.Number)
	}
}

// drillRule is the CRUSH rule of every pool of a drill.
const drillRule = "prism-drill"

// makePool creates the drill's pool (size 2, min_size 1) on a rule of class qlc with the
// failure domain given, puts every other pool on the same rule and size, and writes the
// recorded objects once every PG is active+clean.
func (d *drill) makePool(failureDomain string) {
	c := d.c
	c.mustCeph("osd", "crush", "rule", "create-replicated", drillRule, "default", failureDomain, deviceClass)
	c.mustCeph("osd", "pool", "create", drillPool, strconv.Itoa(drillPoolPGs), strconv.Itoa(drillPoolPGs), "replicated", drillRule)
	c.mustCeph("osd", "pool", "application", "enable", drillPool, "rbd")
	// Every pool keeps two copies under the rule: the mgr's device_health_metrics pool takes
	// the test configuration's default size 1, and a PG whose only copy was on the failed OSD
	// keeps safe-to-destroy saying "1 pgs currently mapped to them" for good (the first drill
	// run); on the default rule its copies could both sit behind one fast device.
	var pools []string
	c.mustCephJSON(&pools, "osd", "pool", "ls")
	for _, p := range pools {
		c.mustCeph("osd", "pool", "set", p, "crush_rule", drillRule)
		c.mustCeph("osd", "pool", "set", p, "size", "2")
		c.mustCeph("osd", "pool", "set", p, "min_size", "1")
	}
	c.waitAllClean()
	d.writeObjects()
	c.waitAllClean()
	d.t.Logf("pools %v at size 2 on rule %s (failure domain %s), every PG active+clean", pools, drillRule, failureDomain)
}

// writeObjects puts objects of 4 KiB to 1 MiB of random bytes and records their SHA-256.
func (d *drill) writeObjects() {
	dir := filepath.Join(d.e.dir, "objects")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Fatal(err)
	}
	for i := range drillObjects {
		data := make([]byte, 4096<<(i%9))
		_, _ = rand.Read(data)
		name := fmt.Sprintf("obj-%02d", i)
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			d.t.Fatal(err)
		}
		d.e.must(quick, "rados", "--cluster", clusterName, "-c", d.c.conf, "-p", drillPool, "put", name, file)
		d.sums[name] = sha256.Sum256(data)
	}
}

// verifyObjects reads every recorded object back and compares its checksum.
func (d *drill) verifyObjects() {
	out := filepath.Join(d.e.dir, "readback")
	for name, want := range d.sums {
		d.e.must(quick, "rados", "--cluster", clusterName, "-c", d.c.conf, "-p", drillPool, "get", name, out)
		data, err := os.ReadFile(out)
		if err != nil {
			d.t.Fatal(err)
		}
		if sha256.Sum256(data) != want {
			d.t.Errorf("object %s read back differs from what was written (%d bytes)", name, len(data))
		}
	}
	d.t.Logf("%d objects read back, every SHA-256 identical", len(d.sums))
}

// killOSDs kills the OSDs as a dead drive does (SIGKILL, no clean shutdown) and waits until
// Ceph marks them down.
func (d *drill) killOSDs(osds ...*osd) {
	for _, o := range osds {
		_ = o.daemon.cmd.Process.Kill()
		<-o.daemon.done
		o.daemon.stopped = true
		d.t.Logf("%s killed", o.name())
	}
	for _, o := range osds {
		d.e.waitFor(2*time.Minute, o.name()+" marked down", func() (bool, string) { return d.c.osdDown(o.id), "" })
	}
}

// failLoop takes the device's bytes away as a dead drive does: the backing file truncated to
// 0 and the loop's capacity re-read; the kernel then reports a 0-byte device whose every read
// fails or returns nothing.
func (d *drill) failLoop(l *loopDev, byID string) {
	t := d.t
	if err := os.Truncate(l.file, 0); err != nil {
		t.Fatal(err)
	}
	d.e.must(quick, "losetup", "--set-capacity", l.dev)
	size := strings.TrimSpace(d.e.must(quick, "blockdev", "--getsize64", l.dev))
	f, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	n, rerr := f.ReadAt(make([]byte, 4096), 0)
	f.Close()
	if size != "0" || n != 0 {
		t.Fatalf("%s after the failure: size %s, read %d bytes (%v); want a 0-byte device", l.dev, size, n, rerr)
	}
	t.Logf("%s (%s) fails: size %s, a read of its first 4 KiB gives %d bytes (%v)", l.dev, byID, size, n, rerr)
}

func (d *drill) loopOf(o *osd) *loopDev {
	for _, l := range d.slow {
		if l.dev == o.data {
			return l
		}
	}
	d.t.Fatalf("no loop for %s", o.data)
	return nil
}

// runbookRun is a runbook as internal/runbook parsed it, run by a drill.
type runbookRun struct {
	page string
	rb   runbook.Runbook
}

// startDrill skips the drill unless PRISM_CEPH_DRILL is set, else makes its environment and
// reads its runbook.
func startDrill(t *testing.T, page, about string) (*env, runbookRun) {
	if os.Getenv("PRISM_CEPH_DRILL") == "" {
		t.Skipf("set PRISM_CEPH_DRILL=1 to run the drill of %s (%s, root)", page, about)
	}
	return newEnv(t), readRunbook(t, page)
}

func readRunbook(t *testing.T, page string) runbookRun {
	text, err := os.ReadFile(filepath.Join("../..", page))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := runbook.Parse(string(text))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return runbookRun{page: page, rb: rb}
}

// step runs the step's blocks that this drill runs, each block once for every set of values
// (one per OSD, when the page says to run a block for each) before the next block. It returns,
// for each set, every command's output by its first three words, as the runbook has them.
func (r runbookRun) step(d *drill, n int, each ...map[string]string) []map[string]string {
	outputs := make([]map[string]string, len(each))
	for i := range outputs {
		outputs[i] = map[string]string{}
	}
	for _, b := range r.rb.Steps[n-1].Blocks {
		if why := b.SkippedBy(drillName); why != "" {
			d.t.Logf("step %d: block at line %d not run (%s): %s", n, b.Line, why, commandList(b))
			continue
		}
		for i, values := range each {
			for _, c := range b.Commands {
				outputs[i][strings.Join(c.Words[:min(3, len(c.Words))], " ")] = r.command(d, n, c, values)
			}
		}
	}
	return outputs
}

// command runs one command of the runbook as parsed: its words with the placeholders
// substituted, the cluster's location added (ceph: --cluster and -c; ceph-volume: the
// cluster's directories in a mount namespace). A command the drill cannot run fails it.
func (r runbookRun) command(d *drill, step int, c runbook.Command, values map[string]string) string {
	t := d.t
	if err := r.rb.CheckValues(values); err != nil {
		t.Fatal(err)
	}
	argv, err := c.Argv(values)
	if err != nil {
		t.Fatalf("%s: %v", r.page, err)
	}
	once := func() (string, error) {
		switch argv[0] {
		case "ceph":
			return d.c.ceph(slow, argv[1:]...)
		case "ceph-volume":
			return d.c.cephVolume(slow, argv[1:]...)
		}
		t.Fatalf("%s line %d: the drill cannot run %q: mark its block not run, or teach the drill", r.page, c.Line, argv[0])
		return "", nil
	}
	start := time.Now()
	out, err := once()
	tries := 1
	if strings.HasPrefix(c.Comment, "repeat until it exits 0") {
		for err != nil && time.Since(start) < 5*time.Minute {
			time.Sleep(3 * time.Second)
			out, err = once()
			tries++
		}
	}
	if err != nil {
		t.Fatalf("step %d, line %d: %s: %v\n%s", step, c.Line, strings.Join(argv, " "), err, tail(out, 20))
	}
	t.Logf("step %d, line %d: ran %q (%d tries, %.0f s): %s", step, c.Line, strings.Join(argv, " "), tries, time.Since(start).Seconds(), tail(strings.TrimSpace(out), 1))
	return out
}

func commandList(b runbook.Block) string {
	var out []string
	for _, c := range b.Commands {
		out = append(out, c.String())
	}
	return strings.Join(out, "; ")
}

// checkDBIn reads step 5's `ceph osd metadata` output: the OSD's DB must be the slot db.
func checkDBIn(t *testing.T, metadata string, o *osd, db string) {
	var md map[string]any
	if err := json.Unmarshal([]byte(metadata), &md); err != nil {
		t.Fatalf("step 5: ceph osd metadata printed no JSON: %v", err)
	}
	if md["bluefs_dedicated_db"] != "1" || md["bluefs_db_partition_path"] != db {
		t.Fatalf("step 5: %s's metadata: bluefs_dedicated_db %v, bluefs_db_partition_path %v; want 1 and %s", o.name(), md["bluefs_dedicated_db"], md["bluefs_db_partition_path"], db)
	}
	t.Logf("step 5: %s bluefs_dedicated_db 1, bluefs_db_partition_path %s, bluefs_db_devices %v", o.name(), db, md["bluefs_db_devices"])
}

// devicesWithout is the agent's inventory after the swap: the failed drive gone, the new one in.
func (d *drill) devicesWithout(o *osd, fresh *loopDev) []prismv1.Device {
	var out []prismv1.Device
	for _, dev := range d.devices {
		if dev.StablePath != o.dataByID {
			out = append(out, dev)
		}
	}
	n := d.devices[len(d.devices)-1]
	n.Name, n.Path, n.StablePath = fresh.name, fresh.dev, fresh.stablePath
	return append(out, n)
}

// agentPass is one pass of the agent's partitioner over the plan, returning its statuses.
func (d *drill) agentPass(p prismv1.NodePlan, devices []prismv1.Device) []prismv1.PartitionStatus {
	statuses, err := partitionFast(d.e.ctx, hostexec.Local{Timeout: slow}, p, devices)
	if err != nil {
		d.t.Fatalf("agent pass: %v", err)
	}
	return statuses
}

// planFor is the planner's layout for the inventory, on the plan in force and the agent's statuses.
func (d *drill) planFor(devices []prismv1.Device, statuses []prismv1.PartitionStatus) plan.Layout {
	sel := prismv1.NodeSelection{Node: nodeName}
	for _, dev := range devices {
		s := prismv1.SelectedDevice{Name: dev.Name, StablePath: dev.StablePath, SizeBytes: dev.SizeBytes}
		if dev.Tier == prismv1.TierFast {
			sel.Fast = append(sel.Fast, s)
		} else {
			sel.Capacity = append(sel.Capacity, s)
		}
	}
	prev := d.layout.Plan
	return plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devices, Spec: d.spec, Previous: &prev, Partitions: statuses})
}

func statusOf(t *testing.T, statuses []prismv1.PartitionStatus, slot prismv1.DBSlot) prismv1.PartitionStatus {
	for _, s := range statuses {
		if s.Number == slot.Partition.Number {
			return s
		}
	}
	t.Fatalf("no status for partition %d: %+v", slot.Partition.Number, statuses)
	return prismv1.PartitionStatus{}
}

func slotOf(fp prismv1.FastDevicePlan, data string) prismv1.DBSlot {
	for _, s := range fp.Slots {
		if s.DataDevice == data {
			return s
		}
	}
	return prismv1.DBSlot{}
}

func (d *drill) others(victim *osd) []*osd {
	var out []*osd
	for _, o := range d.osds {
		if o != victim {
			out = append(out, o)
		}
	}
	return out
}

// deviceState is what must not change on the devices the runbook does not name.
type deviceState struct {
	tables map[string]string // partition tables (sfdisk --dump) by device
	labels map[string]string // other OSDs' devices: BlueStore label's osd_uuid and description
	osds   []*osd
}

// snapshot records the partition tables of the devices given and the labels of the OSDs'
// devices, which the drill must not change.
func (d *drill) snapshot(tables []*loopDev, osds []*osd) deviceState {
	s := deviceState{tables: map[string]string{}, labels: map[string]string{}, osds: osds}
	for _, l := range tables {
		s.tables[l.dev] = d.e.must(quick, "sfdisk", "--dump", l.dev)
	}
	for _, o := range osds {
		for _, dev := range []string{o.data, o.db} {
			if dev != "" {
				l := d.c.showLabel(dev)
				s.labels[dev] = l.OSDUUID + " " + l.Description
			}
		}
	}
	return s
}

// checkUnchanged compares the partition tables and the OSDs' labels with the snapshot, and
// checks that those OSDs are the same ones, up.
func (d *drill) checkUnchanged(before deviceState) {
	after := d.snapshot(nil, before.osds)
	for dev, table := range before.tables {
		if now := d.e.must(quick, "sfdisk", "--dump", dev); now != table {
			d.t.Errorf("%s's partition table changed:\nbefore:\n%s\nafter:\n%s", dev, table, now)
		}
	}
	for dev, l := range before.labels {
		if after.labels[dev] != l {
			d.t.Errorf("%s: label %q, before the drill %q", dev, after.labels[dev], l)
		}
	}
	d.c.waitOSDsUpIn(before.osds)
	d.t.Logf("unchanged: the partition tables of %d devices and the labels of %d devices of %d other OSDs, still up", len(before.tables), len(before.labels), len(before.osds))
}

// waitAllClean waits until every PG of the cluster is active+clean.
func (c *cluster) waitAllClean() {
	c.e.waitFor(5*time.Minute, "every PG active+clean", func() (bool, string) {
		s, err := c.pgStat()
		if err != nil {
			return false, err.Error()
		}
		return s.only("active+clean"), fmt.Sprint(s)
	})
}

// osdExists says whether the OSD map still lists the id (a destroyed OSD stays; a purged one goes).
func (c *cluster) osdExists(id int) bool {
	var ids []int
	c.mustCephJSON(&ids, "osd", "ls")
	return slices.Contains(ids, id)
}
