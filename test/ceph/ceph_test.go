//go:build linux

package ceph

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

const (
	gib = plan.GiB

	fastSize = 12 * gib
	slowSize = 10 * gib
	numSlow  = 3
	// dbSize is the policy's spec.db.size: three 3 GiB slots fit the 12 GiB fast device.
	dbSize = "3Gi"
	// qlcWriteUnit is the internal write unit the fake QLC drives report, which
	// rook.MinAllocSize turns into bluestore_min_alloc_size.
	qlcWriteUnit = 64 << 10
	deviceClass  = "qlc"
	nodeName     = "prismtest-node"
	fastByID     = "/dev/disk/by-id/nvme-PRISMTEST_OPTANE_FAST"
	qlcByID      = "/dev/disk/by-id/nvme-PRISMTEST_QLC_%d"
)

// TestRealCephLayout plans a node with internal/plan, partitions the fast device from the plan,
// builds a real Ceph cluster whose OSDs use the planned slots exactly as Rook would be told to
// (rook.RookNodes), and checks the result with Ceph's own tools and a real workload.
func TestRealCephLayout(t *testing.T) {
	began := time.Now()
	e := newEnv(t)
	ctx := e.ctx

	// 1. Loop devices: a fast one and the "QLC" ones, all non-rotational.
	fast := e.attachLoop("fast", fastSize, true)
	var slowDevs []*loopDev
	for i := range numSlow {
		slowDevs = append(slowDevs, e.attachLoop(fmt.Sprintf("qlc%d", i), slowSize, false))
	}

	// 2. A real plan for them, and the fast device partitioned from it.
	devices, sel := inventory(fast, slowDevs)
	size := resource.MustParse(dbSize)
	spec := &prismv1.HybridStoragePolicySpec{
		Mode: prismv1.ModeApply,
		DB:   prismv1.DBSizing{Size: &size},
		OSD:  prismv1.OSDSettings{DeviceClass: deviceClass, MinAllocSize: prismv1.MinAllocSizeAuto},
	}
	layout := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devices, Spec: spec})
	if len(layout.Problems) > 0 || len(layout.Unplaced) > 0 || len(layout.Plan.FastDevices) != 1 {
		t.Fatalf("plan: problems %v, unplaced %v, %d fast devices", layout.Problems, layout.Unplaced, len(layout.Plan.FastDevices))
	}
	fp := layout.Plan.FastDevices[0]
	if len(fp.Slots) != numSlow || fp.SlotSizeBytes != size.Value() || fp.SlotSizeBytes < plan.MinSlotBytes {
		t.Fatalf("plan: %d slots of %d bytes, want %d of %d", len(fp.Slots), fp.SlotSizeBytes, numSlow, size.Value())
	}
	for _, s := range fp.Slots {
		t.Logf("plan: slot %d = partition %d %q at %d MiB, %d MiB, for %s",
			s.Index, s.Partition.Number, s.Partition.Label, s.Partition.StartBytes/plan.MiB, s.Partition.SizeBytes/plan.MiB, s.DataDevice)
	}
	t.Logf("partitioner: %s", partitioner)
	statuses, err := partitionFast(ctx, hostexec.Local{Timeout: slow}, layout.Plan, devices)
	if err != nil {
		t.Fatalf("partitioning %s from the plan: %v", fast.dev, err)
	}
	for _, s := range statuses {
		t.Logf("partitioner: %s partition %d %q (%s): %s", s.Device, s.Number, s.Label, s.Path, s.State)
	}
	checkPartitions(e, fast, fp)

	// What Prism would write into the CephCluster, resolved to this machine's devices.
	kernel := map[string]string{}
	for _, d := range devices {
		kernel[d.StablePath] = d.Path
	}
	for _, s := range fp.Slots {
		kernel[prismv1.PartitionPath(fp.StablePath, s.Partition.Number)] = fast.partitionDev(s.Partition.Number)
	}
	rookNodes := rook.RookNodes(map[string]prismv1.NodePlan{nodeName: layout.Plan}, deviceClass)
	if len(rookNodes) != 1 || len(rookNodes[0].Devices) != numSlow {
		t.Fatalf("RookNodes: %+v", rookNodes)
	}
	entries := effectiveEntries(rookNodes[0])
	for _, d := range entries {
		t.Logf("Rook entry: %s %v", d.Name, d.Config)
	}
	var capacity []prismv1.Device
	for _, d := range devices {
		if d.Tier == prismv1.TierCapacity {
			capacity = append(capacity, d)
		}
	}
	minAlloc, err := rook.MinAllocSize(capacity)
	if err != nil || minAlloc != qlcWriteUnit {
		t.Fatalf("MinAllocSize = %d, %v; want %d", minAlloc, err, qlcWriteUnit)
	}
	section := rook.CephConfigSection(deviceClass)

	// 3. The cluster.
	c := e.bootstrap()
	t.Logf("cluster %s (fsid %s) up: mon on 127.0.0.1:%d, mgr available (%.0f s since start)", clusterName, c.fsid, c.monPort, time.Since(began).Seconds())

	// 4. bluestore_min_alloc_size in the mon's config database before any OSD exists, first
	// under Prism's section, exactly as Rook's cephConfig would set it, and 5. one OSD per
	// Rook entry: ceph-volume raw prepare with the planned slot as block.db. The first OSD
	// finds out which configuration BlueStore honours at mkfs.
	first, chosen, probes := c.createFirstOSDProbing(entries[0], kernel, fp, section, minAlloc)
	osds := []*osd{first}
	for _, d := range entries[1:] {
		osds = append(osds, c.createOSD(d, kernel, fp))
	}
	c.waitOSDsUpIn(osds)
	t.Logf("%d OSDs up and in (%.0f s since start)", len(osds), time.Since(began).Seconds())

	// 6. What Ceph says about each OSD.
	for _, o := range osds {
		c.checkOSD(o)
	}
	checkMinAlloc(c, osds, section, chosen, probes, minAlloc)

	// 7. A real workload, and where its bytes went.
	pool := c.createPool()
	results := c.runWorkloads(pool, fast, slowDevs)
	for _, o := range osds {
		c.checkNoSpill(o)
	}
	logSplit(t, results, fast, slowDevs)
	checkSplit(t, results)
	t.Logf("total %.0f s", time.Since(began).Seconds())
}

// effectiveEntries is each device of a Rook node entry with the config Rook applies to it:
// the node's config, overridden by the device's own.
func effectiveEntries(n rook.RookNode) []rook.RookDevice {
	var out []rook.RookDevice
	for _, d := range n.Devices {
		cfg := map[string]string{}
		maps.Copy(cfg, n.Config)
		maps.Copy(cfg, d.Config.Map())
		out = append(out, rook.RookDevice{Name: d.Name, Config: rook.DeviceConfigOf(cfg)})
	}
	return out
}

// inventory is what the agent would report for the loop devices: fake by-id stable paths
// (udev does not run here), the QLC drives' write unit, and the policy's selection.
func inventory(fast *loopDev, slowDevs []*loopDev) ([]prismv1.Device, prismv1.NodeSelection) {
	fast.stablePath = fastByID
	devices := []prismv1.Device{{
		Name: fast.name, Path: fast.dev, StablePath: fast.stablePath, SizeBytes: fast.size,
		Model: "PRISMTEST OPTANE (loop)", Media: "3DXPoint", Tier: prismv1.TierFast, TierReason: "test",
		LogicalBlockSizeBytes: 512, PhysicalBlockSizeBytes: 512, Transport: "loop",
		Eligibility: prismv1.Eligibility{Eligible: true},
	}}
	sel := prismv1.NodeSelection{Node: nodeName, Fast: []prismv1.SelectedDevice{{Name: fast.name, StablePath: fast.stablePath, SizeBytes: fast.size}}}
	for i, l := range slowDevs {
		l.stablePath = fmt.Sprintf(qlcByID, i)
		devices = append(devices, prismv1.Device{
			Name: l.name, Path: l.dev, StablePath: l.stablePath, SizeBytes: l.size,
			Model: "PRISMTEST QLC (loop)", Media: "QLC", Tier: prismv1.TierCapacity, TierReason: "test",
			LogicalBlockSizeBytes: 512, PhysicalBlockSizeBytes: 512, Transport: "loop",
			InternalWriteUnitBytes: qlcWriteUnit, InternalWriteUnitSource: "test",
			Eligibility: prismv1.Eligibility{Eligible: true},
		})
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: l.name, StablePath: l.stablePath, SizeBytes: l.size})
	}
	return devices, sel
}

// checkPartitions compares the kernel's view (sysfs start and size) and sgdisk's (name) of
// every slot partition with the plan.
func checkPartitions(e *env, fast *loopDev, fp prismv1.FastDevicePlan) {
	t := e.t
	for _, s := range fp.Slots {
		part := fmt.Sprintf("%sp%d", fast.name, s.Partition.Number)
		e.waitFor(30*time.Second, "/dev/"+part, func() (bool, string) {
			_, err := os.Stat("/dev/" + part)
			return err == nil, fmt.Sprint(err)
		})
		start := readInt(t, filepath.Join("/sys/block", fast.name, part, "start")) * 512
		sz := readInt(t, filepath.Join("/sys/block", fast.name, part, "size")) * 512
		if start != s.Partition.StartBytes || sz != s.Partition.SizeBytes {
			t.Fatalf("%s: kernel says start %d size %d, plan says start %d size %d", part, start, sz, s.Partition.StartBytes, s.Partition.SizeBytes)
		}
		info := e.must(quick, "sgdisk", fmt.Sprintf("--info=%d", s.Partition.Number), fast.dev)
		if !strings.Contains(info, fmt.Sprintf("Partition name: '%s'", s.Partition.Label)) {
			t.Fatalf("%s: sgdisk --info does not show the name %q:\n%s", part, s.Partition.Label, info)
		}
		t.Logf("/dev/%s: start %d MiB, %d MiB, %q (%s)", part, start/plan.MiB, sz/plan.MiB, s.Partition.Label, firstLine(info, "Partition GUID code"))
	}
}

func readInt(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(readFile(t, path), &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

func firstLine(s, prefix string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// checkConfigDump checks that the mon stored the setting where it was set (section and mask).
func checkConfigDump(c *cluster, cfg minAllocConfig, want int64) {
	var dump []struct {
		Section string `json:"section"`
		Name    string `json:"name"`
		Value   string `json:"value"`
		Mask    string `json:"mask"`
	}
	c.mustCephJSON(&dump, "config", "dump")
	who, mask, _ := strings.Cut(cfg.who, "/")
	for _, o := range dump {
		if o.Name == cfg.option && o.Section == who && o.Mask == mask && o.Value == fmt.Sprint(want) {
			c.e.t.Logf("config dump: section %q mask %q %s = %s", o.Section, o.Mask, o.Name, o.Value)
			return
		}
	}
	c.e.t.Fatalf("ceph config dump has no %s = %d for %s: %+v", cfg.option, want, cfg.who, dump)
}

func logVersions(e *env) {
	for _, argv := range [][]string{{"ceph", "--version"}, {"uname", "-r"}, {"nproc"}} {
		if out, err := e.run(quick, argv...); err == nil {
			e.t.Logf("%s: %s", strings.Join(argv, " "), strings.TrimSpace(out))
		}
	}
	if out, err := e.run(quick, "dpkg-query", "-W", "ceph-osd", "ceph-mon", "ceph-mgr", "ceph-common"); err == nil {
		e.t.Logf("packages: %s", strings.Join(strings.Fields(out), " "))
	}
}
