//go:build linux

package guest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// volumeDisks are the pair the policy names: the P5800X gets the DB slots, one for the P5316
// and a spare, and each slot a volume.
var volumeDisks = disks[:2]

// volumeGuestTimeout bounds the volume run: no Ceph, a few dozen short commands, and lvcreate
// killed at each of its writes.
const volumeGuestTimeout = 25 * time.Minute

// The tags Prism puts on a DB slot's VG and LV, written out here (not taken from
// internal/host/lvm) so that the test checks the package instead of trusting it.
const (
	tagDBSlot   = "prism.storage.io/db-slot"
	tagPartUUID = "prism.storage.io/partuuid="
)

// nsenterPrefix is how the agent runs LVM: in PID 1's mount and IPC namespaces.
var nsenterPrefix = []string{"nsenter", "--target", "1", "--mount", "--ipc", "--"}

// TestDBVolumesInGuest runs the partitioner's volume phase (decision 0036) in the guest, whose
// kernel has device-mapper, with Debian 12's lvm2 run as the agent runs it
// (test/guest/db-volumes.sh), and checks what LVM, device-mapper and the block layer report.
func TestDBVolumesInGuest(t *testing.T) {
	if dir := os.Getenv("PRISM_GUEST_VOLUME_RESULTS"); dir != "" {
		// Re-check the results a kept run saved (PRISM_GUEST_KEEP=1 keeps them in share/out).
		checkVolumeResults(t, dir)
		return
	}
	began := time.Now()
	out := guestRun{script: "db-volumes.sh", disks: volumeDisks, timeout: volumeGuestTimeout}.run(t)
	checkVolumeResults(t, out)
	t.Logf("total %.0f s", time.Since(began).Seconds())
}

func checkVolumeResults(t *testing.T, dir string) {
	r := loadResults(t, dir)
	r.checkModelsAndTiers(t, volumeDisks)
	r.checkPlan(t, readPolicy(t))
	v := r.loadVolumeRuns(t)
	t.Logf("guest: %s", strings.ReplaceAll(strings.TrimSpace(r.read(t, "versions.txt")), "\n", "; "))
	v.checkDryRun(t)
	v.checkStepRuns(t)
	v.checkVolumes(t, "again")
	v.checkAgain(t)
	v.checkReactivation(t)
	v.checkVolumes(t, "reactivate")
	v.checkDeviceMapper(t)
	v.checkLVCreateKills(t)
	t.Logf("steps (name, seconds, since start):\n%s", r.read(t, "steps.tsv"))
}

// volumeRuns are the prism-apply-plan runs of db-volumes.sh (runs.tsv) and the slots they
// were to make volumes on.
type volumeRuns struct {
	*results
	runs  []applyRun
	slots []volumeSlot
	fast  string // the fast drive's kernel name (nvmeXnY)
}

// applyRun is one prism-apply-plan run: its name, exit status and output.
type applyRun struct {
	name string
	exit int
	out  applyOutput
}

// volumeSlot is one DB slot: the names Prism gives its volume, and its partition as the
// kernel (sysfs, blockdev) and the table (sfdisk, lsblk) have it.
// pvUUIDOf is the PV UUID Prism gives a slot's PV (decision 0039): the partition GUID's 32 hex
// digits in LVM's 6-4-4-4-4-4-6 form, written out here rather than taken from internal/host/lvm.
func pvUUIDOf(partUUID string) string {
	hex := strings.ReplaceAll(partUUID, "-", "")
	if len(hex) != 32 {
		return "(no GUID: " + partUUID + ")"
	}
	return strings.Join([]string{hex[0:6], hex[6:10], hex[10:14], hex[14:18], hex[18:22], hex[22:26], hex[26:32]}, "-")
}

type volumeSlot struct {
	number         int32
	vg, lv         string
	partition      string // /dev/nvmeXnYpN
	devNumber      string // major:minor
	sizeBytes      int64  // blockdev --getsize64
	holders        string
	partUUID       string // lsblk's PARTUUID (lower case)
	plannedSize    int64
	plannedDevPath string // the plan's stable path of the fast device
}

func (r *results) loadVolumeRuns(t *testing.T) *volumeRuns {
	t.Helper()
	v := &volumeRuns{results: r, fast: r.fabric["bk-fast-a"]}
	for _, l := range r.lines(t, "runs.tsv") {
		f := strings.Split(l, "\t")
		if len(f) < 2 {
			t.Fatalf("runs.tsv: bad line %q", l)
		}
		exit, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("runs.tsv: bad line %q", l)
		}
		run := applyRun{name: f[0], exit: exit}
		r.decode(t, run.name+".json", &run.out)
		v.runs = append(v.runs, run)
	}
	nodes := map[string][]string{} // partition kernel name -> number, dev, size, holders
	for _, l := range r.lines(t, "partition-nodes.txt") {
		f := strings.Fields(l)
		nodes[f[0]] = f[1:]
	}
	var table sfdiskDoc
	r.decode(t, "sfdisk-fast.json", &table)
	lsblk := r.lsblk(t, "lsblk-fast.json")
	fp := r.nodePlan.FastDevices[0]
	for _, s := range fp.Slots {
		vg, lv, err := prismv1.DBVolumeNames(fp.StablePath, s.Index)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%sp%d", v.fast, s.Partition.Number)
		n := nodes[name]
		if len(n) < 3 || n[0] != strconv.Itoa(int(s.Partition.Number)) {
			t.Fatalf("partition-nodes.txt: %s is %v", name, n)
		}
		size, _ := strconv.ParseInt(n[2], 10, 64)
		slot := volumeSlot{number: s.Partition.Number, vg: vg, lv: lv, partition: "/dev/" + name, devNumber: n[1], sizeBytes: size,
			plannedSize: s.Partition.SizeBytes, plannedDevPath: fp.StablePath}
		if len(n) > 3 {
			slot.holders = n[3]
		}
		for _, c := range lsblk.child(name) {
			slot.partUUID = c.PartUUID
		}
		i := slices.IndexFunc(table.PartitionTable.Partitions, func(p sfdiskPartition) bool { return p.Node == slot.partition })
		if i < 0 || slot.partUUID == "" || !strings.EqualFold(table.PartitionTable.Partitions[i].UUID, slot.partUUID) {
			t.Fatalf("%s: the GPT GUID is %q to lsblk; sfdisk has %+v", name, slot.partUUID, table.PartitionTable.Partitions)
		}
		v.slots = append(v.slots, slot)
	}
	if len(v.slots) < 2 {
		t.Fatalf("the plan has %d DB slots; the policy asks for two (one and a spare)", len(v.slots))
	}
	return v
}

func (v *volumeRuns) run(t *testing.T, name string) applyRun {
	t.Helper()
	for _, r := range v.runs {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("runs.tsv has no run %s", name)
	return applyRun{}
}

// stepRuns are the step-limited runs, in order.
func (v *volumeRuns) stepRuns() []applyRun {
	var out []applyRun
	for _, r := range v.runs {
		if strings.HasPrefix(r.name, "step-") {
			out = append(out, r)
		}
	}
	return out
}

// calls is the transcript of one run (--record): each command as run.
func (v *volumeRuns) calls(t *testing.T, run string) []Call {
	t.Helper()
	var out []Call
	sc := bufio.NewScanner(strings.NewReader(v.read(t, run+".calls.jsonl")))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s.calls.jsonl: %v", run, err)
		}
		out = append(out, c)
	}
	return out
}

// Call is one line of prism-apply-plan's --record transcript.
type Call struct {
	Argv  []string `json:"argv"`
	Exit  int      `json:"exit"`
	Error string   `json:"error"`
}

// lvmCommand is the LVM command of argv without the nsenter prefix, or nil when argv is no
// LVM command.
func lvmCommand(argv []string) []string {
	cmd := argv
	if len(argv) > len(nsenterPrefix) && slices.Equal(argv[:len(nsenterPrefix)], nsenterPrefix) {
		cmd = argv[len(nsenterPrefix):]
	}
	if len(cmd) == 0 || !slices.Contains([]string{"pvs", "vgs", "lvs", "pvcreate", "vgcreate", "lvcreate", "lvchange", "vgchange", "lvm"}, cmd[0]) {
		return nil
	}
	return cmd
}

// readOnly reports whether a command changes nothing: LVM's reports, libblkid's probes,
// sfdisk's dump, waiting for udev.
func readOnly(argv []string) bool {
	if cmd := lvmCommand(argv); cmd != nil {
		return slices.Contains([]string{"pvs", "vgs", "lvs"}, cmd[0])
	}
	switch argv[0] {
	case "blkid":
		return true
	case "wipefs":
		return slices.Contains(argv, "--no-act")
	case "sfdisk":
		return slices.Contains(argv, "--json")
	case "udevadm":
		return len(argv) > 1 && argv[1] == "settle"
	}
	return false
}

// writes checks the transcript of a run: every LVM command ran through nsenter into PID 1's
// namespaces, as the agent runs it, and exited 0. It returns the commands that change
// something, LVM's without the nsenter prefix.
func (v *volumeRuns) writes(t *testing.T, run string) [][]string {
	var out [][]string
	for _, c := range v.calls(t, run) {
		cmd := lvmCommand(c.Argv)
		if cmd != nil && !slices.Equal(c.Argv[:min(len(c.Argv), len(nsenterPrefix))], nsenterPrefix) {
			t.Errorf("%s: %q ran without %q", run, c.Argv, nsenterPrefix)
		}
		if cmd != nil && (c.Exit != 0 || c.Error != "") {
			t.Errorf("%s: %q exited %d %s", run, c.Argv, c.Exit, c.Error)
		}
		switch {
		case readOnly(c.Argv):
		case cmd != nil:
			out = append(out, cmd)
		default:
			out = append(out, c.Argv)
		}
	}
	return out
}

// checkReadOnly: the run changed nothing: changed false, only commands that read, and LVM's
// reports after it equal those after the run before it.
func (v *volumeRuns) checkReadOnly(t *testing.T, run, before string) {
	if v.run(t, run).out.Changed {
		t.Errorf("%s: changed true, want false", run)
	}
	if w := v.writes(t, run); len(w) > 0 {
		t.Errorf("%s ran %q, which change something", run, w)
	}
	for _, rep := range []string{"pvs", "vgs", "lvs"} {
		a, b := v.lvm(t, before+"."+rep+".json"), v.lvm(t, run+"."+rep+".json")
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: %s after it differs from after %s:\n%+v\n%+v", run, rep, before, b, a)
		}
	}
}

// checkDryRun: DryRun on the empty drive reports every partition Pending and no volume, and
// nothing is on the drive afterwards (no table, no signature, zeros at both ends, no PV). A
// DryRun once the partitions are Ready and a volume is not reports the volumes Pending and
// changes nothing LVM reports.
func (v *volumeRuns) checkDryRun(t *testing.T) {
	d := v.run(t, "dryrun")
	if d.exit == 0 || len(d.out.Partitions) != len(v.slots) {
		t.Errorf("dryrun: exit %d with %d partitions; want a non-zero exit (nothing Ready) and %d partitions", d.exit, len(d.out.Partitions), len(v.slots))
	}
	for _, p := range d.out.Partitions {
		if p.State != prismv1.PartitionPending || p.Volume != nil {
			t.Errorf("dryrun: partition %d %s (%s), volume %+v; want Pending and no volume", p.Number, p.State, p.Message, p.Volume)
		}
	}
	v.checkReadOnly(t, "dryrun", "initial")
	dev := v.lines(t, "dryrun.device.txt")
	if want := []string{"blkid-exit 2", "first-mib zero", "last-mib zero"}; !slices.Equal(dev, want) {
		t.Errorf("after the dry run, the drive: %q; want %q (blkid found nothing, zeros)", dev, want)
	}
	ls := v.lsblk(t, "dryrun.lsblk.json")
	if len(ls.BlockDevices) != 1 || ls.BlockDevices[0].PTType != "" || len(ls.BlockDevices[0].Children) > 0 {
		t.Errorf("after the dry run, lsblk: %+v; want no partition table and no partitions", ls)
	}
	if rep := v.lvm(t, "dryrun.pvs.json"); len(rep.Report[0].PV) > 0 {
		t.Errorf("after the dry run, pvs: %v", rep.Report[0].PV)
	}

	var between string
	for _, r := range v.runs {
		if strings.HasPrefix(r.name, "dryrun-after-") {
			between = r.name
		}
	}
	if between == "" {
		t.Fatalf("no DryRun ran between the step-limited runs (runs.tsv)")
	}
	b := v.run(t, between)
	pending := 0
	for _, p := range b.out.Partitions {
		if p.State != prismv1.PartitionReady || p.Volume == nil {
			t.Errorf("%s: partition %d %s, volume %+v; want Ready with a volume", between, p.Number, p.State, p.Volume)
			continue
		}
		switch p.Volume.State {
		case prismv1.DBVolumeReady:
		case prismv1.DBVolumePending:
			pending++
			if !strings.HasPrefix(p.Volume.Message, "dry run: ") {
				t.Errorf("%s: partition %d's volume Pending with %q, want a dry run message", between, p.Number, p.Volume.Message)
			}
		default:
			t.Errorf("%s: partition %d's volume %s: %s", between, p.Number, p.Volume.State, p.Volume.Message)
		}
	}
	if pending == 0 {
		t.Errorf("%s: no volume Pending; the dry run came too late to show anything", between)
	}
	v.checkReadOnly(t, between, strings.TrimPrefix(between, "dryrun-after-"))
	t.Logf("DryRun: nothing written on the empty drive; %s: %d volumes Pending, LVM unchanged", between, pending)
}

// slotState is how far a slot's volume is in one set of LVM reports: 0 nothing, 1 a PV in no
// VG, 2 the VG without an LV, 3 the LV.
func (v *volumeRuns) slotState(t *testing.T, run string, s volumeSlot) int {
	pv := v.lvmRows(t, run, "pvs", "pv", func(m map[string]string) bool { return m["pv_major"]+":"+m["pv_minor"] == s.devNumber })
	vg := v.lvmRows(t, run, "vgs", "vg", func(m map[string]string) bool { return m["vg_name"] == s.vg })
	lv := v.lvmRows(t, run, "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
	switch {
	case len(lv) > 0:
		return 3
	case len(vg) > 0:
		return 2
	case len(pv) > 0:
		return 1
	}
	return 0
}

// lvmRows are the rows of one report of a run that match.
func (v *volumeRuns) lvmRows(t *testing.T, run, report, kind string, match func(map[string]string) bool) []map[string]string {
	t.Helper()
	rep := v.lvm(t, run+"."+report+".json").Report[0]
	rows := map[string][]map[string]string{"pv": rep.PV, "vg": rep.VG, "lv": rep.LV}[kind]
	var out []map[string]string
	for _, m := range rows {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// checkStepRuns: Apply stopped after one step each time, as a crash after every step would,
// converges: every run but the last stops short, the last is done; each LVM command that
// creates something ran once per slot over all runs, with Prism's names, and each slot went
// through every state in turn (a PV in no VG, the VG without an LV, the LV), each found by a
// new process.
func (v *volumeRuns) checkStepRuns(t *testing.T) {
	steps := v.stepRuns()
	if len(steps) == 0 {
		t.Fatal("no step-limited runs")
	}
	created := map[string][][]string{}
	seen := make([][]int, len(v.slots))
	for i, s := range v.slots {
		seen[i] = []int{v.slotState(t, "initial", s)}
	}
	for k, r := range steps {
		last := k == len(steps)-1
		if (r.exit == 0) != last || !r.out.Changed {
			t.Errorf("%s: exit %d, changed %t; want each run to change something and only the last to be done", r.name, r.exit, r.out.Changed)
		}
		writes := v.writes(t, r.name)
		if len(writes) > 1 {
			t.Errorf("%s (--step-limit 1) ran %d commands that change something: %q", r.name, len(writes), writes)
		}
		for _, w := range writes {
			if lvmCommand(w) != nil {
				created[w[0]] = append(created[w[0]], w)
			}
		}
		for i, s := range v.slots {
			seen[i] = append(seen[i], v.slotState(t, r.name, s))
		}
		t.Logf("%s: exit %d, ran %q, slot states %v", r.name, r.exit, writes, func() []int {
			var st []int
			for i := range v.slots {
				st = append(st, seen[i][len(seen[i])-1])
			}
			return st
		}())
	}
	for i, s := range v.slots {
		tags := []string{"--addtag", tagDBSlot, "--addtag", tagPartUUID + s.partUUID}
		want := map[string][]string{
			"pvcreate": {"pvcreate", "--uuid", pvUUIDOf(s.partUUID), "--norestorefile", s.partition},
			"vgcreate": slices.Concat([]string{"vgcreate"}, tags, []string{s.vg, s.partition}),
			"lvcreate": slices.Concat([]string{"lvcreate", "--name", s.lv, "--extents", "100%FREE"}, tags, []string{s.vg}),
		}
		for cmd, argv := range want {
			n := 0
			for _, c := range created[cmd] {
				if slices.Equal(c, argv) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("slot partition %d: %q ran %d times over the step-limited runs, want once", s.number, argv, n)
			}
		}
		if !slices.IsSorted(seen[i]) || !slices.Equal(slices.Compact(slices.Clone(seen[i])), []int{0, 1, 2, 3}) {
			t.Errorf("slot partition %d: states over the runs %v (0 nothing, 1 PV, 2 VG, 3 LV); want each in turn", s.number, seen[i])
		}
	}
	for cmd, cs := range created {
		if cmd != "pvcreate" && cmd != "vgcreate" && cmd != "lvcreate" || len(cs) != len(v.slots) {
			t.Errorf("over the step-limited runs, %s ran %d times: %q", cmd, len(cs), cs)
		}
	}
	t.Logf("%d step-limited runs converged; each slot's pvcreate, vgcreate and lvcreate ran once", len(steps))
}

// checkVolumes: after run, every DB slot has Prism's VG and LV, of exactly Prism's names and
// tags, on its partition; the LV is active and fills the VG; its size is the one the run
// reported, the partition's less LVM's metadata area and at most one extent; the partition is
// the plan's size.
func (v *volumeRuns) checkVolumes(t *testing.T, run string) {
	r := v.run(t, run)
	if r.exit != 0 {
		t.Errorf("%s: exit %d", run, r.exit)
	}
	for _, s := range v.slots {
		tags := []string{tagDBSlot, tagPartUUID + s.partUUID}
		slices.Sort(tags)
		pvs := v.lvmRows(t, run, "pvs", "pv", func(m map[string]string) bool { return m["pv_major"]+":"+m["pv_minor"] == s.devNumber })
		vgs := v.lvmRows(t, run, "vgs", "vg", func(m map[string]string) bool { return m["vg_name"] == s.vg })
		lvs := v.lvmRows(t, run, "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
		if len(pvs) != 1 || len(vgs) != 1 || len(lvs) != 1 {
			t.Errorf("%s: slot partition %d (%s): PVs %v VGs %v LVs %v; want one of each", run, s.number, s.partition, pvs, vgs, lvs)
			continue
		}
		pv, vg, lv := pvs[0], vgs[0], lvs[0]
		if pv["pv_name"] != s.partition || pv["vg_name"] != s.vg {
			t.Errorf("%s: the PV on %s (%s) is %s in VG %q, want %s in %s", run, s.devNumber, s.partition, pv["pv_name"], pv["vg_name"], s.partition, s.vg)
		}
		if vg["pv_count"] != "1" || vg["lv_count"] != "1" || vg["vg_free"] != "0" || !slices.Equal(tagSet(vg["vg_tags"]), tags) {
			t.Errorf("%s: VG %v; want one PV, one LV, vg_free 0, tags %q", run, vg, tags)
		}
		if lv["lv_name"] != s.lv || lv["lv_path"] != "/dev/"+s.vg+"/"+s.lv || !slices.Equal(tagSet(lv["lv_tags"]), tags) ||
			len(lv["lv_attr"]) < 5 || lv["lv_attr"][4] != 'a' || lv["lv_active"] != "active" || lv["devices"] != s.partition+"(0)" {
			t.Errorf("%s: LV %v; want %s active on %s(0) with tags %q", run, lv, s.lv, s.partition, tags)
		}
		lvSize, extent, peStart := num(lv["lv_size"]), num(vg["vg_extent_size"]), num(pv["pe_start"])
		if lvSize <= 0 || lvSize > s.sizeBytes || s.sizeBytes-lvSize > 1<<20+extent || num(vg["vg_size"]) != lvSize {
			t.Errorf("%s: LV %d bytes, VG %s, extent %d, on a partition of %d; want the VG filled and within 1 MiB and an extent of the partition",
				run, lvSize, vg["vg_size"], extent, s.sizeBytes)
		}
		if s.sizeBytes != s.plannedSize {
			t.Errorf("%s: %d bytes (blockdev), the plan says %d", s.partition, s.sizeBytes, s.plannedSize)
		}
		p := v.partitionStatus(t, run, s)
		if p.Volume == nil || p.Volume.State != prismv1.DBVolumeReady || p.Volume.Path != lv["lv_path"] || p.Volume.SizeBytes != lvSize {
			t.Errorf("%s: partition %d reports volume %+v; want Ready at %s with %d bytes", run, s.number, p.Volume, lv["lv_path"], lvSize)
		}
		t.Logf("%s: %s (%s, GUID %s, %d bytes) -> PV (pe_start %d) -> VG %s (extent %d, free %s) -> LV %s %d bytes, attr %s, tags %s",
			run, s.partition, s.devNumber, s.partUUID, s.sizeBytes, peStart, s.vg, extent, vg["vg_free"], s.lv, lvSize, lv["lv_attr"], lv["lv_tags"])
	}
}

func (v *volumeRuns) partitionStatus(t *testing.T, run string, s volumeSlot) prismv1.PartitionStatus {
	t.Helper()
	for _, p := range v.run(t, run).out.Partitions {
		if p.Number == s.number && p.Device == s.plannedDevPath {
			return p
		}
	}
	t.Fatalf("%s: no partition %d of %s in the output", run, s.number, s.plannedDevPath)
	return prismv1.PartitionStatus{}
}

// tagSet is LVM's comma-separated tag list, sorted.
func tagSet(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// checkAgain: with everything made, one more Apply reads and changes nothing.
func (v *volumeRuns) checkAgain(t *testing.T) {
	steps := v.stepRuns()
	v.checkReadOnly(t, "again", steps[len(steps)-1].name)
}

// checkReactivation: with one of Prism's LVs deactivated (lvchange -an), the next Apply
// activates it with exactly one `lvchange --activate y <vg>/<lv>` and reports it Ready.
func (v *volumeRuns) checkReactivation(t *testing.T) {
	which := strings.TrimSpace(v.read(t, "deactivated.txt"))
	i := slices.IndexFunc(v.slots, func(s volumeSlot) bool { return s.vg+"/"+s.lv == which })
	if i < 0 {
		t.Fatalf("deactivated.txt names %q, not one of Prism's volumes", which)
	}
	s := v.slots[i]
	lv := v.lvmRows(t, "deactivated", "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
	if len(lv) != 1 || len(lv[0]["lv_attr"]) < 5 || lv[0]["lv_attr"][4] == 'a' || lv[0]["lv_active"] != "" {
		t.Fatalf("after lvchange -an %s, lvs says %v; want it inactive", which, lv)
	}
	r := v.run(t, "reactivate")
	writes := v.writes(t, "reactivate")
	if want := [][]string{{"lvchange", "--activate", "y", which}}; !reflect.DeepEqual(writes, want) || !r.out.Changed {
		t.Errorf("reactivate: changed %t, LVM commands that change something %q; want %q", r.out.Changed, writes, want)
	}
	before := v.lvmRows(t, "again", "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
	after := v.lvmRows(t, "reactivate", "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
	// The same LV, active again (its device-mapper minor may be another).
	same := func(m map[string]string) map[string]string {
		m = maps.Clone(m)
		delete(m, "lv_kernel_minor")
		return m
	}
	if len(before) != 1 || len(after) != 1 || !maps.Equal(same(before[0]), same(after[0])) {
		t.Errorf("the LV before lvchange -an %v and after the agent activated it %v differ", before, after)
	}
	t.Logf("lvchange -an %s: attr %s; the next Apply ran %q and it is %s again", which, lv[0]["lv_attr"], writes, after[0]["lv_attr"])
}

// lsblkDoc is `lsblk --json` with the columns db-volumes.sh asks for.
type lsblkDoc struct {
	BlockDevices []lsblkDev `json:"blockdevices"`
}

type lsblkDev struct {
	Name     string     `json:"name"`
	KName    string     `json:"kname"`
	MajMin   string     `json:"maj:min"`
	Type     string     `json:"type"`
	PTType   string     `json:"pttype"`
	PartUUID string     `json:"partuuid"`
	Children []lsblkDev `json:"children"`
}

func (r *results) lsblk(t *testing.T, name string) lsblkDoc {
	t.Helper()
	var doc lsblkDoc
	r.decode(t, name, &doc)
	return doc
}

// child is the devices named name directly under the top devices.
func (d lsblkDoc) child(name string) []lsblkDev {
	var out []lsblkDev
	for _, b := range d.BlockDevices {
		for _, c := range b.Children {
			if c.Name == name {
				out = append(out, c)
			}
		}
	}
	return out
}

// checkDeviceMapper: each LV is a device-mapper device with one linear segment mapping all
// of it onto its partition's device number past LVM's metadata area (dmsetup table); the
// kernel has the partition under it (sysfs slaves and holders) and lsblk shows it there; its
// size is the LV's.
func (v *volumeRuns) checkDeviceMapper(t *testing.T) {
	nodes := map[string][]string{} // LV path -> dm node, dm name, dev, size, slaves
	for _, l := range v.lines(t, "lv-nodes.txt") {
		f := strings.Fields(l)
		if len(f) < 6 {
			t.Fatalf("lv-nodes.txt: bad line %q", l)
		}
		nodes[f[0]] = f[1:]
	}
	tables := map[string]string{}
	for _, l := range v.lines(t, "dmsetup-table.txt") {
		name, table, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("dmsetup-table.txt: bad line %q", l)
		}
		if _, dup := tables[name]; dup {
			t.Errorf("dmsetup table: %s has more than one segment", name)
		}
		tables[name] = table
	}
	ls := v.lsblk(t, "lsblk-fast.json")
	for _, s := range v.slots {
		path := "/dev/" + s.vg + "/" + s.lv
		n := nodes[path]
		lv := v.lvmRows(t, "reactivate", "lvs", "lv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
		pv := v.lvmRows(t, "reactivate", "pvs", "pv", func(m map[string]string) bool { return m["vg_name"] == s.vg })
		if n == nil || len(lv) != 1 || len(pv) != 1 {
			t.Errorf("%s: lv-nodes %v, LVs %v, PVs %v", path, n, lv, pv)
			continue
		}
		node, dmName, dev, size, slaves := n[0], n[1], n[2], n[3], n[4]
		kname := strings.TrimPrefix(node, "/dev/")
		if !strings.HasPrefix(kname, "dm-") || dev != lv[0]["lv_kernel_major"]+":"+lv[0]["lv_kernel_minor"] || size != lv[0]["lv_size"] {
			t.Errorf("%s -> %s (%s, %s bytes); lvs says %s:%s, %s bytes", path, node, dev, size, lv[0]["lv_kernel_major"], lv[0]["lv_kernel_minor"], lv[0]["lv_size"])
		}
		part := strings.TrimPrefix(s.partition, "/dev/")
		if slaves != part || s.holders != kname {
			t.Errorf("%s: sysfs slaves %q, the partition's holders %q; want %s under %s", path, slaves, s.holders, part, kname)
		}
		lvSize, peStart := num(lv[0]["lv_size"]), num(pv[0]["pe_start"])
		want := fmt.Sprintf("0 %d linear %s %d", lvSize/512, s.devNumber, peStart/512)
		if got := tables[dmName]; got != want {
			t.Errorf("dmsetup table %s: %q, want %q (all of the LV onto %s past pe_start)", dmName, got, want, s.partition)
		}
		var under []lsblkDev
		for _, p := range ls.child(part) {
			under = p.Children
		}
		if len(under) != 1 || under[0].Type != "lvm" || under[0].KName != kname || under[0].Name != dmName {
			t.Errorf("lsblk: under %s %+v, want the lvm device %s (%s)", part, under, dmName, kname)
		}
		t.Logf("%s -> %s (%s, %s): dmsetup table %q", path, node, dmName, dev, tables[dmName])
	}
}

// checkLVCreateKills: db-volumes.sh step 8 killed lvcreate on entry to each io_submit that
// writes (decision 0039); each kill shows in its pass as a failed CreateLV, and the pass after
// it ends with every volume Ready.
func (v *volumeRuns) checkLVCreateKills(t *testing.T) {
	writes := strings.Fields(v.read(t, "lvcreate-writes.txt"))
	kills := strings.Fields(v.read(t, "lvcreate-kills.txt"))
	if len(writes) == 0 || !slices.Equal(writes, kills) {
		t.Fatalf("lvcreate wrote at io_submit %v; killed at %v: want each, once", writes, kills)
	}
	for _, w := range kills {
		killed := v.run(t, "lvcreate-kill-"+w)
		var after []string
		for _, p := range killed.out.Partitions {
			if p.Volume != nil && p.Volume.State != prismv1.DBVolumeReady {
				after = append(after, fmt.Sprintf("partition %d %s: %s", p.Number, p.Volume.State, p.Volume.Message))
			}
		}
		if len(after) != 1 || !strings.Contains(after[0], "CreateLV failed") || !strings.Contains(after[0], "killed by signal") {
			t.Errorf("lvcreate killed at io_submit %s: the pass reported %q; want one CreateLV killed", w, after)
		}
		resumed := v.run(t, "lvcreate-resume-"+w)
		if resumed.exit != 0 {
			t.Errorf("lvcreate killed at io_submit %s: the next pass exited %d", w, resumed.exit)
		}
		for _, p := range resumed.out.Partitions {
			if p.Volume == nil || p.Volume.State != prismv1.DBVolumeReady {
				t.Errorf("lvcreate killed at io_submit %s: after the next pass partition %d has volume %+v; want Ready", w, p.Number, p.Volume)
			}
		}
		t.Logf("lvcreate killed at io_submit %s: %s; resumed, every volume Ready", w, strings.Join(after, "; "))
	}
}
