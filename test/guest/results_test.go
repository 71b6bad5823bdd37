//go:build linux

package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// cephBlockDBType is the GPT type GUID of a Ceph block.db partition, written out here rather
// than taken from internal/host/gpt so that the test checks the package instead of trusting it.
const cephBlockDBType = "30CD0809-C2B2-499C-8879-2D6B78529876"

// results is what the guest script saved, every file a tool's own output.
type results struct {
	dir string
	// fabric maps a QEMU serial to the NVMe-oF block device the guest saw (nvmeXnY).
	fabric, backing map[string]string
	inv             inventorydoc.Document
	plan            pluginPlan
	nodePlan        prismv1.NodePlan
	metadata        map[string]map[string]any // osd id -> `ceph osd metadata`
}

func loadResults(t *testing.T, dir string) *results {
	t.Helper()
	r := &results{dir: dir, fabric: map[string]string{}, backing: map[string]string{}}
	for _, line := range r.lines(t, "nvmet.txt") {
		f := strings.Fields(line)
		if len(f) < 4 {
			t.Fatalf("nvmet.txt: bad line %q", line)
		}
		r.backing[f[0]], r.fabric[f[0]] = f[1], f[2]
	}
	r.decode(t, "inventory.json", &r.inv)
	r.decode(t, "plan.json", &r.plan)
	return r
}

// loadOSDMetadata reads `ceph osd metadata` (rook-path.sh).
func (r *results) loadOSDMetadata(t *testing.T) {
	t.Helper()
	var all []map[string]any
	r.decode(t, "osd-metadata.json", &all)
	r.metadata = map[string]map[string]any{}
	for _, m := range all {
		r.metadata[fmt.Sprint(m["id"])] = m
	}
}

func (r *results) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		t.Fatalf("the guest did not save %s: %v", name, err)
	}
	return string(b)
}

func (r *results) lines(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for l := range strings.SplitSeq(r.read(t, name), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (r *results) decode(t *testing.T, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.read(t, name)), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func (r *results) device(t *testing.T, name string) prismv1.Device {
	t.Helper()
	for _, d := range r.inv.Devices {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("inventory has no device %s", name)
	return prismv1.Device{}
}

func diskBySerial(serial string) disk {
	for _, d := range disks {
		if d.qemuSerial == serial {
			return d
		}
	}
	panic("no disk " + serial)
}

// checkModelsAndTiers: the guest saw each drive's model through NVMe-oF, and the agent put it
// in its tier by that model; the emulated controllers behind them are Other.
func (r *results) checkModelsAndTiers(t *testing.T, ds []disk) {
	for _, want := range ds {
		name := r.fabric[want.qemuSerial]
		d := r.device(t, name)
		if d.Model != want.model || d.Serial != want.fabricSerial || d.SizeBytes != want.size {
			t.Errorf("%s: inventory says model %q serial %q size %d, want %q %q %d", name, d.Model, d.Serial, d.SizeBytes, want.model, want.fabricSerial, want.size)
		}
		if d.Tier != want.tier || !d.Eligibility.Eligible || d.StablePath == "" {
			t.Errorf("%s (%s): tier %s eligible %t stable path %q; want tier %s, eligible, a by-id path (%s)",
				name, d.Model, d.Tier, d.Eligibility.Eligible, d.StablePath, want.tier, d.TierReason)
		}
		t.Logf("inventory: %s %q serial %s %d bytes -> %s (%s), %s, write unit %d", name, d.Model, d.Serial, d.SizeBytes, d.Tier, d.TierReason, d.StablePath, d.InternalWriteUnitBytes)
		b := r.device(t, r.backing[want.qemuSerial])
		if b.Tier != prismv1.TierOther {
			t.Errorf("%s (the emulated controller %q behind %s): tier %s, want Other", b.Name, b.Model, name, b.Tier)
		}
	}
	var hidden []string
	for _, d := range r.inv.Devices {
		if regexp.MustCompile(`^nvme\d+c\d+n\d+$`).MatchString(d.Name) {
			hidden = append(hidden, d.Name)
		}
	}
	if len(hidden) > 0 {
		// Each NVMe-oF namespace has a hidden path disk nvmeXcYnZ (/sys/block/*/hidden = 1): the
		// same drive again, with no /dev node. The inventory leaves it out, as lsblk does.
		t.Errorf("inventory lists the hidden multipath paths %v", hidden)
	}
}

// checkPlan: kubectl-prism planned one slot of the policy's size on the 800 GB P5800X for the
// 30.72 TB P5316, a spare slot, and the Rook entry naming the slot partition.
func (r *results) checkPlan(t *testing.T, policyYAML []byte) {
	var policy prismv1.HybridStoragePolicy
	if err := yaml.UnmarshalStrict(policyYAML, &policy); err != nil {
		t.Fatalf("policy: %v", err)
	}
	if len(r.plan.Problems) > 0 || len(r.plan.Nodes) != 1 || r.plan.Nodes[0].Plan == nil {
		t.Fatalf("plan: problems %v, %d nodes", r.plan.Problems, len(r.plan.Nodes))
	}
	r.nodePlan = *r.plan.Nodes[0].Plan
	fastA := r.device(t, r.fabric["bk-fast-a"])
	qlcA := r.device(t, r.fabric["bk-qlc-a"])
	fps := r.nodePlan.FastDevices
	if len(fps) != 1 || fps[0].StablePath != fastA.StablePath {
		t.Fatalf("plan: fast devices %+v, want only %s", fps, fastA.StablePath)
	}
	fp := fps[0]
	if fp.SlotSizeBytes != policy.Spec.DB.Size.Value() || len(fp.Slots) != 1+int(policy.Spec.DB.SpareSlots) {
		t.Errorf("plan: %d slots of %d bytes, want %d of %d", len(fp.Slots), fp.SlotSizeBytes, 1+policy.Spec.DB.SpareSlots, policy.Spec.DB.Size.Value())
	}
	if fp.Slots[0].DataDevice != qlcA.StablePath {
		t.Errorf("plan: slot 0 serves %q, want %s", fp.Slots[0].DataDevice, qlcA.StablePath)
	}
	t.Logf("plan warnings: %v", r.plan.Nodes[0].Warnings)
	entries := r.plan.RookStorageNodes
	if len(entries) != 1 || len(entries[0].Devices) != 1 {
		t.Fatalf("plan: Rook entries %+v", entries)
	}
	dev := entries[0].Devices[0]
	slotPath := prismv1.PartitionPath(fp.StablePath, fp.Slots[0].Partition.Number)
	if dev.Name != qlcA.StablePath || dev.Config.MetadataDevice != slotPath {
		t.Errorf("Rook entry %+v, want %s with metadataDevice %s", dev, qlcA.StablePath, slotPath)
	}
	t.Logf("Rook entry: %s metadataDevice=%s node config %v", dev.Name, dev.Config.MetadataDevice, entries[0].Config)
}

// pluginPlan is what `kubectl-prism plan -o json` prints: the planner's result and the Rook
// entries of its plans (the rest, its Rook decision, is not read here).
type pluginPlan struct {
	plan.ClusterPlan
	RookStorageNodes []rook.RookNode `json:"rookStorageNodes"`
}

// sfdiskDoc is `sfdisk --json` of a GPT disk.
type sfdiskDoc struct {
	PartitionTable struct {
		Label      string            `json:"label"`
		Partitions []sfdiskPartition `json:"partitions"`
	} `json:"partitiontable"`
}

type sfdiskPartition struct {
	Node  string `json:"node"`
	Start int64  `json:"start"`
	Size  int64  `json:"size"`
	Type  string `json:"type"`
	Name  string `json:"name"`
	UUID  string `json:"uuid"`
}

type applyOutput struct {
	Changed    bool                      `json:"changed"`
	Partitions []prismv1.PartitionStatus `json:"partitions"`
}

// checkPartitions: the agent's partitioner made every planned partition (first run), found
// nothing to do the second time, and the kernel and the GPT agree with the plan.
func (r *results) checkPartitions(t *testing.T) {
	fp := r.nodePlan.FastDevices[0]
	for i, name := range []string{"apply-1.json", "apply-2.json"} {
		var a applyOutput
		r.decode(t, name, &a)
		if a.Changed != (i == 0) || len(a.Partitions) != len(fp.Slots) {
			t.Errorf("%s: changed %t with %d partitions; want changed %t, %d partitions", name, a.Changed, len(a.Partitions), i == 0, len(fp.Slots))
		}
		for _, p := range a.Partitions {
			if p.State != prismv1.PartitionReady {
				t.Errorf("%s: partition %d %s: %s", name, p.Number, p.State, p.Message)
			}
		}
	}
	sysfs := map[string][]int64{}
	for _, l := range r.lines(t, "partitions-sysfs.txt") {
		f := strings.Fields(l)
		var n []int64
		for _, s := range f[1:] {
			v, _ := strconv.ParseInt(s, 10, 64)
			n = append(n, v)
		}
		sysfs[f[1]] = n
	}
	var table sfdiskDoc
	r.decode(t, "sfdisk-fast.json", &table)
	if table.PartitionTable.Label != "gpt" || len(table.PartitionTable.Partitions) != len(fp.Slots) {
		t.Fatalf("sfdisk: %+v", table)
	}
	for i, s := range fp.Slots {
		k := sysfs[strconv.Itoa(int(s.Partition.Number))]
		if len(k) != 3 || k[1]*512 != s.Partition.StartBytes || k[2]*512 != s.Partition.SizeBytes {
			t.Errorf("partition %d: kernel says %v (number start size in sectors), plan says start %d size %d", s.Partition.Number, k, s.Partition.StartBytes, s.Partition.SizeBytes)
		}
		p := table.PartitionTable.Partitions[i]
		if p.Name != s.Partition.Label || !strings.EqualFold(p.Type, cephBlockDBType) {
			t.Errorf("%s: GPT name %q type %s, want %q %s", p.Node, p.Name, p.Type, s.Partition.Label, cephBlockDBType)
		}
		t.Logf("partition %s: %q type %s, start %d MiB, %d MiB", p.Node, p.Name, p.Type, p.Start*512/plan.MiB, p.Size*512/plan.MiB)
	}
}

// osdFiles are the paths of one OSD's block and block.db, as ceph-volume linked them and as
// they resolve, and their BlueStore labels.
type osdFiles struct {
	id                  string
	block, blockDB      string // resolved
	blockLink, dbLink   string // the symlink targets ceph-volume wrote
	blockLabel, dbLabel map[string]any
}

func (r *results) osd(t *testing.T, which string) osdFiles {
	t.Helper()
	o := osdFiles{id: strings.TrimSpace(r.read(t, which+".osd"))}
	if o.id == "" {
		t.Fatalf("%s made no OSD", which)
	}
	for _, l := range r.lines(t, "osd-"+o.id+"-paths.txt") {
		f := strings.Fields(l)
		switch f[0] {
		case "block":
			o.blockLink, o.block = f[1], f[2]
		case "block.db":
			o.dbLink, o.blockDB = f[1], f[2]
		}
	}
	o.blockLabel = r.label(t, o.id, "block")
	o.dbLabel = r.label(t, o.id, "block.db")
	return o
}

func (r *results) label(t *testing.T, id, file string) map[string]any {
	var m map[string]map[string]any
	r.decode(t, "osd-"+id+"-"+file+".label.json", &m)
	for _, v := range m {
		return v
	}
	t.Fatalf("show-label of osd.%s %s is empty", id, file)
	return nil
}

// num reads a number that Ceph prints either as a JSON number or as a string.
func num(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case json.Number:
		n, _ := x.Int64()
		return n
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return -1
}

// checkDB asserts what Ceph says of one OSD's DB: show-label on block.db, osd metadata and
// the BlueFS counters. It also asserts the metadata the mgr's ceph_disk_occupation is made
// of, on which Prism's dashboards join (decision 0017): in LVM mode the device BlueStore
// opened is a device-mapper node, and "devices" names the data and DB disks.
func (r *results) checkDB(t *testing.T, o osdFiles, dataDevice, dbDevice string, size int64) {
	if o.dbLabel["description"] != "bluefs db" || num(o.dbLabel["size"]) != size || o.dbLabel["osd_uuid"] != o.blockLabel["osd_uuid"] {
		t.Errorf("osd.%s show-label block.db: %v; want bluefs db of %d bytes for osd_uuid %v", o.id, o.dbLabel, size, o.blockLabel["osd_uuid"])
	}
	m := r.metadata[o.id]
	disks := []string{dataDevice, dbDevice}
	sort.Strings(disks)
	if !strings.HasPrefix(fmt.Sprint(m["bluestore_bdev_dev_node"]), "/dev/dm-") || m["devices"] != strings.Join(disks, ",") {
		t.Errorf("osd.%s metadata: bluestore_bdev_dev_node %v, devices %v; want a /dev/dm-N node and devices %s",
			o.id, m["bluestore_bdev_dev_node"], m["devices"], strings.Join(disks, ","))
	}
	t.Logf("osd.%s: osd metadata bluestore_bdev_dev_node=%v devices=%v (ceph_disk_occupation's device and devices)", o.id, m["bluestore_bdev_dev_node"], m["devices"])
	if m["bluefs_dedicated_db"] != "1" || num(m["bluefs_db_size"]) != size || m["bluefs_db_devices"] != dbDevice || m["bluefs_db_type"] != "ssd" {
		t.Errorf("osd.%s metadata: bluefs_dedicated_db %v bluefs_db_size %v bluefs_db_devices %v bluefs_db_type %v; want 1, %d, %s, ssd",
			o.id, m["bluefs_dedicated_db"], m["bluefs_db_size"], m["bluefs_db_devices"], m["bluefs_db_type"], size, dbDevice)
	}
	var perf struct {
		BlueFS map[string]any `json:"bluefs"`
	}
	r.decode(t, "osd-"+o.id+"-bluefs.json", &perf)
	dbTotal, dbUsed, slowUsed := num(perf.BlueFS["db_total_bytes"]), num(perf.BlueFS["db_used_bytes"]), num(perf.BlueFS["slow_used_bytes"])
	if dbUsed <= 0 || slowUsed != 0 || dbTotal <= 0 || dbTotal > size {
		t.Errorf("osd.%s bluefs counters: db_total_bytes %d db_used_bytes %d slow_used_bytes %d; want DB bytes on the DB device, none on slow", o.id, dbTotal, dbUsed, slowUsed)
	}
	t.Logf("osd.%s: show-label %s: description %q size %d osd_uuid %v", o.id, o.dbLink, o.dbLabel["description"], num(o.dbLabel["size"]), o.dbLabel["osd_uuid"])
	t.Logf("osd.%s: osd metadata bluefs_dedicated_db=%v bluefs_db_size=%v bluefs_db_devices=%v bluefs_db_partition_path=%v bluestore_bdev_devices=%v bluestore_bdev_size=%v bluestore_min_alloc_size=%v device_ids=%v",
		o.id, m["bluefs_dedicated_db"], m["bluefs_db_size"], m["bluefs_db_devices"], m["bluefs_db_partition_path"], m["bluestore_bdev_devices"], m["bluestore_bdev_size"], m["bluestore_min_alloc_size"], m["device_ids"])
	t.Logf("osd.%s: bluefs db_total_bytes=%d db_used_bytes=%d slow_used_bytes=%d", o.id, dbTotal, dbUsed, slowUsed)
}

type lvmReport struct {
	Report []struct {
		PV []map[string]string `json:"pv"`
		VG []map[string]string `json:"vg"`
		LV []map[string]string `json:"lv"`
	} `json:"report"`
}

func (r *results) lvm(t *testing.T, name string) lvmReport {
	var rep lvmReport
	r.decode(t, name, &rep)
	if len(rep.Report) != 1 {
		t.Fatalf("%s: %d reports", name, len(rep.Report))
	}
	return rep
}

// checkPrepareOSD: Rook's partition path. ceph-volume got exactly Rook's argv, put the data
// on an LV of a VG on the QLC drive, and used the slot partition itself as block.db.
func (r *results) checkPrepareOSD(t *testing.T) {
	fp := r.nodePlan.FastDevices[0]
	slot := fp.Slots[0]
	fastA, qlcA := r.fabric["bk-fast-a"], r.fabric["bk-qlc-a"]
	slotDev := fmt.Sprintf("/dev/%sp%d", fastA, slot.Partition.Number)
	want := []string{"stdbuf", "-oL", "ceph-volume", "--cluster", "prismguest", "--log-path", "/tmp/ceph-log", "lvm", "prepare", "--bluestore",
		"--data", "/dev/" + qlcA, "--block.db", slotDev, "--block.db-size", strconv.FormatInt(fp.SlotSizeBytes, 10), "--crush-device-class", "qlc"}
	if got := r.lines(t, "prepare.argv"); !slices.Equal(got, want) {
		t.Errorf("lvm prepare argv:\n got %q\nwant %q", got, want)
	}
	t.Logf("Rook's partition path ran: %s", strings.Join(r.lines(t, "prepare.argv"), " "))
	o := r.osd(t, "prepare")
	if o.blockDB != slotDev || o.dbLink != slotDev {
		t.Errorf("osd.%s block.db -> %s (%s), want the slot partition %s", o.id, o.dbLink, o.blockDB, slotDev)
	}
	r.checkDB(t, o, qlcA, fastA, slot.Partition.SizeBytes)
	m := r.metadata[o.id]
	if m["bluefs_db_partition_path"] != slotDev || m["bluestore_bdev_devices"] != qlcA {
		t.Errorf("osd.%s metadata: db partition %v, data devices %v; want %s and %s", o.id, m["bluefs_db_partition_path"], m["bluestore_bdev_devices"], slotDev, qlcA)
	}
	// What LVM holds: a VG on the whole QLC drive, nothing on the slot partition.
	var vgOnQLC string
	for _, pv := range r.lvm(t, "pvs.json").Report[0].PV {
		switch pv["pv_name"] {
		case "/dev/" + qlcA:
			vgOnQLC = pv["vg_name"]
		case slotDev:
			t.Errorf("the slot partition became an LVM PV (VG %s); ceph-volume 16.2 uses a partition directly", pv["vg_name"])
		}
	}
	if !strings.HasPrefix(vgOnQLC, "ceph-") || !strings.HasPrefix(o.blockLink, "/dev/"+vgOnQLC+"/osd-block-") {
		t.Errorf("osd.%s block -> %s; want an osd-block LV in the VG on /dev/%s (%q)", o.id, o.blockLink, qlcA, vgOnQLC)
	}
	blkid := r.read(t, "blkid-slot.txt")
	if !strings.Contains(blkid, "TYPE=ceph_bluestore") || strings.Contains(blkid, "LVM2_member") {
		t.Errorf("blkid -p of the slot partition:\n%s\nwant a BlueStore label and no LVM", blkid)
	}
	var list map[string][]struct {
		Type string            `json:"type"`
		Path string            `json:"path"`
		Tags map[string]string `json:"tags"`
	}
	r.decode(t, "lvm-list.json", &list)
	for _, e := range list[o.id] {
		if e.Type == "block" && e.Tags["ceph.db_device"] != slotDev {
			t.Errorf("ceph-volume lvm list osd.%s: ceph.db_device tag %q, want %s", o.id, e.Tags["ceph.db_device"], slotDev)
		}
		if e.Type == "db" {
			t.Logf("ceph-volume lvm list osd.%s: db %s tags %v (blkid: %s)", o.id, e.Path, e.Tags, strings.ReplaceAll(strings.TrimSpace(blkid), "\n", " "))
		}
	}
	t.Logf("osd.%s: block -> %s (%s), VG %s on /dev/%s", o.id, o.blockLink, o.block, vgOnQLC, qlcA)
}

// checkBatchOSD: Rook's whole-disk path. lvm batch made a VG on the whole fast device and a
// DB LV of the requested size in it.
func (r *results) checkBatchOSD(t *testing.T) {
	fastB, qlcB := r.fabric["bk-fast-b"], r.fabric["bk-qlc-b"]
	size := r.nodePlan.FastDevices[0].SlotSizeBytes
	var report []struct {
		Data    string `json:"data"`
		BlockDB string `json:"block_db"`
	}
	r.decode(t, "batch-report.json", &report)
	if len(report) != 1 || report[0].Data != "/dev/"+qlcB || report[0].BlockDB != "/dev/"+fastB {
		t.Errorf("lvm batch --report --format json: %+v; Rook wants one OSD of /dev/%s with block_db /dev/%s", report, qlcB, fastB)
	}
	t.Logf("Rook's whole-disk path ran: %s", strings.Join(r.lines(t, "batch.argv"), " "))
	o := r.osd(t, "batch")
	var dbLV map[string]string
	for _, lv := range r.lvm(t, "lvs.json").Report[0].LV {
		if lv["lv_path"] == o.dbLink {
			dbLV = lv
		}
	}
	if dbLV == nil || dbLV["devices"] != "/dev/"+fastB+"(0)" || num(dbLV["lv_size"]) != size || !strings.HasPrefix(dbLV["lv_name"], "osd-db-") {
		t.Errorf("osd.%s block.db -> %s; LV %v; want an osd-db LV of %d bytes on /dev/%s", o.id, o.dbLink, dbLV, size, fastB)
	}
	r.checkDB(t, o, qlcB, fastB, size)
	t.Logf("osd.%s: block.db -> %s (%s), LV %s of %s bytes on %s", o.id, o.dbLink, o.blockDB, dbLV["lv_name"], dbLV["lv_size"], dbLV["devices"])
}

// checkCluster: both OSDs up and in, in CRUSH class qlc, and BlueStore persisted the QLC
// drives' write unit (from the inventory) as its allocation unit.
func (r *results) checkCluster(t *testing.T) {
	var dump struct {
		OSDs []struct {
			OSD int `json:"osd"`
			Up  int `json:"up"`
			In  int `json:"in"`
		} `json:"osds"`
	}
	r.decode(t, "osd-dump.json", &dump)
	if len(dump.OSDs) != 2 {
		t.Errorf("osd dump: %d OSDs, want 2", len(dump.OSDs))
	}
	for _, o := range dump.OSDs {
		if o.Up != 1 || o.In != 1 {
			t.Errorf("osd.%d: up %d in %d", o.OSD, o.Up, o.In)
		}
	}
	var tree struct {
		Nodes []struct {
			Name, Type, Status string
			DeviceClass        string `json:"device_class"`
		} `json:"nodes"`
	}
	r.decode(t, "osd-tree.json", &tree)
	for _, n := range tree.Nodes {
		if n.Type == "osd" && (n.DeviceClass != "qlc" || n.Status != "up") {
			t.Errorf("osd tree: %s class %q status %q, want qlc, up", n.Name, n.DeviceClass, n.Status)
		}
	}
	iu := r.device(t, r.fabric["bk-qlc-a"]).InternalWriteUnitBytes
	if iu <= 0 {
		t.Fatalf("the inventory gives the P5316 no internal write unit")
	}
	for id, m := range r.metadata {
		if num(m["bluestore_min_alloc_size"]) != iu {
			t.Errorf("osd.%s bluestore_min_alloc_size %v, want the QLC write unit %d", id, m["bluestore_min_alloc_size"], iu)
		}
	}
	t.Logf("cluster: %d OSDs up and in, class qlc, bluestore_min_alloc_size %d", len(dump.OSDs), iu)
	t.Logf("steps (name, seconds, since start):\n%s", r.read(t, "steps.tsv"))
}

// checkUnseen: a drive the database lacks, whose evidence a real kernel reported (its NVMe
// target's Identify Namespace on a 16 KiB-physical-block backing device, no endurance group),
// is Other with an inferred Capacity tier of Low confidence: the same verdict
// internal/node/inventory's never-seen fixture gives the same evidence (nvme1n1 there).
func (r *results) checkUnseen(t *testing.T) {
	f := strings.Fields(r.read(t, "unseen.txt"))
	if len(f) < 2 {
		t.Fatalf("unseen.txt: %q", r.read(t, "unseen.txt"))
	}
	name := f[0]
	t.Logf("unseen drive: %s, backing %s", name, strings.TrimSpace(r.read(t, "unseen-backing.txt")))
	var idNs struct {
		Nsfeat int `json:"nsfeat"`
		Npwg   int `json:"npwg"`
		Nows   int `json:"nows"`
	}
	r.decode(t, "unseen-id-ns.json", &idNs)
	if idNs.Nsfeat&0x10 == 0 || idNs.Npwg != 3 {
		t.Fatalf("nvme id-ns: nsfeat %#x npwg %d; want the optimal-I/O bit and NPWG 3 (16 KiB of 4 KiB blocks)", idNs.Nsfeat, idNs.Npwg)
	}
	var inv inventorydoc.Document
	r.decode(t, "inventory-unseen.json", &inv)
	var d *prismv1.Device
	for i := range inv.Devices {
		if inv.Devices[i].Name == name {
			d = &inv.Devices[i]
		}
	}
	if d == nil {
		t.Fatalf("inventory-unseen.json has no device %s", name)
	}
	t.Logf("unseen: %s %q tier %s (%s), evidence %+v, inferred %+v", d.Name, d.Model, d.Tier, d.TierReason, d.Evidence, d.InferredTier)
	if d.Model != unseenDisk.model || d.Tier != prismv1.TierOther {
		t.Errorf("%s: model %q tier %s, want %q Other (not in the database: decision 0003)", name, d.Model, d.Tier, unseenDisk.model)
	}
	if d.Evidence == nil || d.Evidence.PreferredWriteGranularityBytes != 16384 || d.InternalWriteUnitBytes != 16384 {
		t.Errorf("%s: evidence %+v, write unit %d; want NPWG 16384 read from the kernel", name, d.Evidence, d.InternalWriteUnitBytes)
	}
	it := d.InferredTier
	if it == nil || it.Tier != prismv1.TierCapacity || it.Confidence != prismv1.ConfidenceLow {
		t.Fatalf("%s: inferred %+v, want Capacity with Low confidence (a coarse write unit alone)", name, it)
	}
	reasons := strings.Join(it.Reasons, "; ")
	for _, want := range []string{"NPWG) is 16 KiB", "no rated endurance reported"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("%s: reasons %q lack %q", name, reasons, want)
		}
	}
}
