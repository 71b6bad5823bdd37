package provision

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/plan"
)

const (
	mib  = plan.MiB
	gib  = plan.GiB
	fast = "/dev/disk/by-id/nvme-INTEL_SSDPE21D280GA_PHM2913000QM280AGN"
	dbT  = gpt.CephBlockDBTypeGUID
	fsT  = gpt.LinuxFilesystemTypeGUID
)

// testPlan is what internal/plan makes for a 12 GiB fast device with three 2 GiB DB slots and
// a cache: slots 1-3 from 1 MiB, the cache (4) up to the last MiB.
func testPlan(t testing.TB) prismv1.FastDevicePlan {
	t.Helper()
	fd := planFor(t, prismv1.CacheWriteThrough)
	if len(fd.Slots) != 3 || fd.Cache == nil || fd.Cache.Number != 4 {
		t.Fatalf("unexpected plan %+v", fd)
	}
	return fd
}

// planFor is what internal/plan makes for the test's fast device and three QLC drives, with
// 2 GiB DB slots and this cache mode.
func planFor(t testing.TB, mode prismv1.CacheMode) prismv1.FastDevicePlan {
	t.Helper()
	devs := []prismv1.Device{{Name: "nvme0n1", StablePath: fast, SizeBytes: 12 * gib}}
	sel := prismv1.NodeSelection{Node: "n1", Fast: []prismv1.SelectedDevice{{Name: "nvme0n1", StablePath: fast, SizeBytes: 12 * gib}}}
	for i, name := range []string{"nvme1n1", "nvme2n1", "nvme3n1"} {
		p := "/dev/disk/by-id/nvme-QLC_" + name
		devs = append(devs, prismv1.Device{Name: name, StablePath: p, SizeBytes: 100 * gib * int64(i+1)})
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: name, StablePath: p})
	}
	spec := &prismv1.HybridStoragePolicySpec{
		DB:    prismv1.DBSizing{Size: resource.NewQuantity(2*gib, resource.BinarySI)},
		Cache: prismv1.CacheSpec{Mode: mode},
	}
	l := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 || len(l.Plan.FastDevices) != 1 {
		t.Fatalf("planner: %+v", l)
	}
	return l.Plan.FastDevices[0]
}

// part is the on-disk partition n of the test plan.
func part(t testing.TB, n int) gpt.Partition {
	for _, w := range Wanted(testPlan(t)) {
		if int(w.Number) == n {
			return gpt.Partition{Number: n, StartBytes: w.StartBytes, SizeBytes: w.SizeBytes, Name: w.Label, TypeGUID: w.TypeGUID}
		}
	}
	t.Fatalf("no planned partition %d", n)
	return gpt.Partition{}
}

func gptTable(ps ...gpt.Partition) gpt.Table {
	return gpt.Table{Label: gpt.LabelGPT, SectorSize: 512, FirstLBA: 34, LastLBA: 12*gib/512 - 34, Partitions: ps}
}

func device(mods ...func(*prismv1.Device)) prismv1.Device {
	d := prismv1.Device{Name: "nvme0n1", Path: "/dev/nvme0n1", StablePath: fast, SizeBytes: 12 * gib, LogicalBlockSizeBytes: 512, Tier: prismv1.TierFast}
	for _, m := range mods {
		m(&d)
	}
	return d
}

func kernelHas(names ...string) func(*prismv1.Device) {
	return func(d *prismv1.Device) { d.Partitions = names }
}

// memDisk is a sparse in-memory device: what was written, zeros elsewhere.
type memDisk struct{ chunks []gpt.Write }

func (m *memDisk) ReadAt(b []byte, off int64) (int, error) {
	clear(b)
	for _, c := range m.chunks {
		lo, hi := max(off, c.Offset), min(off+int64(len(b)), c.Offset+int64(len(c.Data)))
		if lo < hi {
			copy(b[lo-off:hi-off], c.Data[lo-c.Offset:hi-c.Offset])
		}
	}
	return len(b), nil
}

func (m *memDisk) put(off int64, b []byte) {
	m.chunks = append(m.chunks, gpt.Write{Offset: off, Data: b})
}

// layoutOf is a GPT holding the given partitions, with Prism's disk GUID for the test device.
func layoutOf(ss int64, ps ...gpt.Partition) gpt.Layout {
	l := gpt.Layout{SectorSize: ss, Sectors: 12 * gib / ss, DiskGUID: DiskGUID(fast)}
	for _, p := range ps {
		l.Entries = append(l.Entries, gpt.Entry{Number: p.Number, TypeGUID: p.TypeGUID, UUID: gpt.DerivedGUID("test", fmt.Sprint(p.Number)),
			FirstLBA: p.StartBytes / ss, LastLBA: (p.StartBytes+p.SizeBytes)/ss - 1, Name: p.Name})
	}
	return l
}

// disk is what Prism reads from a device holding the writes of the given layouts, in order
// (only the first n writes of the last one when n >= 0, as a crash would leave it).
func disk(t testing.TB, n int, layouts ...gpt.Layout) gpt.Disk {
	t.Helper()
	m := &memDisk{}
	ss := int64(512)
	for i, l := range layouts {
		ws, err := l.Writes()
		if err != nil {
			t.Fatal(err)
		}
		if i == len(layouts)-1 && n >= 0 {
			ws = ws[:n]
		}
		for _, w := range ws {
			m.put(w.Offset, w.Data)
		}
		ss = l.SectorSize
	}
	d, err := gpt.ReadDisk(m, 12*gib, ss)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func blank(t testing.TB) gpt.Disk { return disk(t, 0, layoutOf(512)) }

// obs is an observation of a device whose planned ranges hold nothing.
func obs(t testing.TB, d gpt.Disk, dev prismv1.Device, mods ...func(*Observation)) Observation {
	o := Observation{Device: dev, Disk: d, Content: map[int]Content{}}
	for n := 1; n <= 4; n++ {
		o.Content[n] = Content{NonZeroAt: -1}
	}
	for _, m := range mods {
		m(&o)
	}
	return o
}

func probed(typ string, off int64) func(*Observation) {
	return func(o *Observation) { o.Probe = append(o.Probe, blkid.Signature{Type: typ, Offset: off}) }
}

func holding(n int, c Content) func(*Observation) {
	return func(o *Observation) { o.Content[n] = c }
}

// whole is a sparse read of the whole 12 GiB device whose first non-zero byte is at.
func whole(at int64) func(*Observation) {
	return func(o *Observation) {
		o.Whole = &Sparse{Start: 0, Size: 12 * gib, Samples: 12 * gib / mib, NonZero: at / mib, At: at}
	}
}

// sampled is a sparse read of planned partition p's range whose first non-zero byte is at.
func sampled(p gpt.Partition, at int64) func(*Observation) {
	return func(o *Observation) {
		c := o.Content[p.Number]
		c.Sparse = &Sparse{Start: p.StartBytes, Size: p.SizeBytes, Samples: p.SizeBytes / mib, NonZero: (at - p.StartBytes) / mib, At: at}
		o.Content[p.Number] = c
	}
}

func withSig(kind prismv1.SignatureKind, name string, off int64) func(*prismv1.Device) {
	return func(d *prismv1.Device) {
		d.Signatures = append(d.Signatures, prismv1.DeviceSignature{Kind: kind, Name: name, OffsetBytes: off})
	}
}

// summary renders a decision compactly: the steps, and each partition's state.
func summary(d Decision) (steps []string, states string) {
	for _, s := range d.Steps {
		switch s.Kind {
		case StepWriteTable:
			var ns []string
			for _, e := range s.Table.Entries {
				ns = append(ns, fmt.Sprint(e.Number))
			}
			steps = append(steps, "WriteTable "+strings.Join(ns, ","))
		case StepZeroRegions:
			steps = append(steps, fmt.Sprintf("ZeroRegions %d", len(s.Regions)))
		default:
			steps = append(steps, strings.Join(s.Argv("/dev/nvme0n1"), " "))
		}
	}
	var st []string
	for _, p := range d.Partitions {
		st = append(st, string(p.State))
	}
	return steps, strings.Join(st, ",")
}

const (
	write1234 = "WriteTable 1,2,3,4"
	reread    = "partx --update --nr 1:4 /dev/nvme0n1"
	settle    = "udevadm settle --timeout=30"
	wipefs    = "wipefs --all --force /dev/nvme0n1"
	forget    = "partx --delete --nr 1:128 /dev/nvme0n1"
)

func TestDecide(t *testing.T) {
	fd := testPlan(t)
	p1, p2, p3, p4 := part(t, 1), part(t, 2), part(t, 3), part(t, 4)
	all := kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3", "nvme0n1p4")
	bigger := p2
	bigger.SizeBytes += gib
	wrongType := p1
	wrongType.TypeGUID = fsT
	foreign := gpt.Partition{Number: 5, StartBytes: 12*gib - 200*mib, SizeBytes: 100 * mib, Name: "data", TypeGUID: fsT}
	someones := func(ps ...gpt.Partition) gpt.Layout {
		l := layoutOf(512, ps...)
		l.DiskGUID = "5af06f18-dd3f-4b24-8f57-031b6e51cea7"
		return l
	}
	full := layoutOf(512, p1, p2, p3, p4)
	dos := &memDisk{}
	mbr := make([]byte, 512)
	mbr[446+4], mbr[510], mbr[511] = 0x83, 0x55, 0xaa
	dos.put(0, mbr)
	dosDisk, err := gpt.ReadDisk(dos, 12*gib, 512)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		obs     Observation
		wipe    bool
		steps   []string
		states  string
		refused []string // substrings of the refusal
	}{
		{name: "empty device", obs: obs(t, blank(t), device()),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "Prism's table, only the backup written (crash)", obs: obs(t, disk(t, 2, full), device()),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "Prism's table, backup and half the primary (crash)", obs: obs(t, disk(t, 3, full), device()),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "Prism's table without its protective MBR (crash)", obs: obs(t, disk(t, 4, full), device(all)),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "backup has slot 3, primary not yet (crash while extending)", obs: obs(t, disk(t, 2, layoutOf(512, p1, p2), layoutOf(512, p1, p2, p3)), device(kernelHas("nvme0n1p1", "nvme0n1p2"))),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "partial Prism layout", obs: obs(t, disk(t, -1, layoutOf(512, p1, p2)), device(kernelHas("nvme0n1p1", "nvme0n1p2"))),
			steps: []string{write1234, reread, settle}, states: "Ready,Ready,Pending,Pending"},
		{name: "partial layout the kernel has not read", obs: obs(t, disk(t, -1, layoutOf(512, p1, p2)), device()),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "complete layout", obs: obs(t, disk(t, -1, full), device(all)), states: "Ready,Ready,Ready,Ready"},
		{name: "complete on disk, crash before partx", obs: obs(t, disk(t, -1, full), device(kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3"))),
			steps: []string{reread, settle}, states: "Ready,Ready,Ready,Pending"},
		{name: "an OSD's BlueStore label in slot 1 and LVM in slot 2", obs: obs(t, disk(t, -1, full), device(all, withSig(prismv1.SignatureCephBlueStore, "ceph_bluestore", 1<<30)),
			holding(1, Content{Found: []string{"ceph_bluestore"}, NonZeroAt: 0}), holding(2, Content{Found: []string{"LVM2_member"}, NonZeroAt: 512})), states: "Ready,Ready,Ready,Ready"},
		{name: "an Open CAS cache in the cache partition", obs: obs(t, disk(t, -1, full), device(all), holding(4, Content{Found: []string{"open_cas"}, NonZeroAt: 0})),
			states: "Ready,Ready,Ready,Ready"},
		{name: "ext4 inside slot 1: not Ready, device not extended", obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1")), holding(1, Content{Found: []string{"ext4"}, NonZeroAt: 1024})),
			states: "Refused,Refused,Refused,Refused", refused: []string{"not extended", "partition 1 (\"prism-db-00\") holds ext4"}},
		{name: "non-zero bytes where a missing partition goes", obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1")), holding(3, Content{NonZeroAt: 77})),
			steps: []string{"WriteTable 1,2,4", reread, settle}, states: "Ready,Pending,Refused,Pending"},
		{name: "random bytes where a partition goes on a device without a table: not proven empty", obs: obs(t, blank(t), device(), holding(2, Content{NonZeroAt: 4096})),
			states: "Refused,Refused,Refused,Refused", refused: []string{"the range of partition 2", "non-zero bytes at offset 4096"}},
		{name: "a non-zero sample in the middle of a device without a table", obs: obs(t, blank(t), device(), whole(5000*mib+7)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"non-zero bytes at byte 5242880007 (4.9 GiB; sample 5001 of 12288, 4096 bytes every 1 MiB) (Prism's sparse read)", "allowWipe"}},
		{name: "a non-zero sample in the middle of a device without a table, granted: written over, not wiped", wipe: true, obs: obs(t, blank(t), device(), whole(5000*mib+7)),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "a non-zero sample where a missing partition goes", obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1")), sampled(p3, p3.StartBytes+700*mib)),
			steps: []string{"WriteTable 1,2,4", reread, settle}, states: "Ready,Pending,Refused,Pending"},
		{name: "a non-zero sample where a missing partition goes, granted: written over, nothing to zero", wipe: true, obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1")), sampled(p3, p3.StartBytes+700*mib)),
			steps: []string{write1234, reread, settle}, states: "Ready,Pending,Pending,Pending"},
		{name: "BlueStore label where a missing partition goes, granted", wipe: true, obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1")), holding(3, Content{Found: []string{"ceph_bluestore"}, NonZeroAt: 0})),
			steps: []string{"ZeroRegions 2", write1234, reread, settle}, states: "Ready,Pending,Pending,Pending"},
		{name: "slots as planned and a foreign partition where the cache goes: Ready slots, nothing written", obs: obs(t, disk(t, -1, layoutOf(512, p1, p2, p3, foreign)), device(kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3", "nvme0n1p5"))),
			states: "Ready,Ready,Ready,Refused", refused: []string{`foreign partition 5 "data"`}},
		{name: "foreign partition", obs: obs(t, disk(t, -1, layoutOf(512, p1, foreign)), device(kernelHas("nvme0n1p1", "nvme0n1p5"))),
			states: "Ready,Refused,Refused,Refused", refused: []string{`foreign partition 5 "data"`, "allowWipe"}},
		{name: "someone's GPT", obs: obs(t, disk(t, -1, someones(gpt.Partition{Number: 1, StartBytes: mib, SizeBytes: 100 * mib, Name: "EFI", TypeGUID: fsT})), device()),
			states: "Refused,Refused,Refused,Refused", refused: []string{`foreign partition 1 "EFI"`, `where the plan wants "prism-db-00"`, "a GPT Prism did not write (disk GUID 5af06f18"}},
		{name: "someone's empty GPT", obs: obs(t, disk(t, -1, someones()), device()),
			states: "Refused,Refused,Refused,Refused", refused: []string{"a GPT Prism did not write (disk GUID 5af06f18-dd3f-4b24-8f57-031b6e51cea7, 0 partitions)"}},
		{name: "someone's half-written GPT", obs: obs(t, disk(t, 2, someones()), device()),
			states: "Refused,Refused,Refused,Refused", refused: []string{"a GPT backup GPT header with disk GUID 5af06f18"}},
		{name: "Prism partition of another size", obs: obs(t, disk(t, -1, layoutOf(512, p1, bigger)), device(kernelHas("nvme0n1p1", "nvme0n1p2"))),
			states: "Ready,Refused,Refused,Refused", refused: []string{`Prism partition 2 "prism-db-01" (start 2049 MiB, size 3072 MiB`, "size 2048 MiB"}},
		{name: "Prism partition of another type", obs: obs(t, disk(t, -1, layoutOf(512, wrongType)), device(kernelHas("nvme0n1p1"))),
			states: "Refused,Refused,Refused,Refused", refused: []string{"type 0fc63daf", "type 30cd0809"}},
		{name: "Prism partition not in the plan", obs: obs(t, disk(t, -1, layoutOf(512, p1, gpt.Partition{Number: 7, StartBytes: 12*gib - 200*mib, SizeBytes: 100 * mib, Name: "prism-db-06", TypeGUID: dbT})), device()),
			states: "Refused,Refused,Refused,Refused", refused: []string{`Prism partition 7 "prism-db-06"`, "not in the plan"}},
		{name: "ext4 on the whole device (libblkid and Prism)", obs: obs(t, blank(t), device(withSig(prismv1.SignatureFilesystem, "ext4", 1080)), probed("ext4", 1080)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"ext4 at byte 1080 (libblkid)", "ext4 (Filesystem) at byte 1080 (Prism's detector)"}},
		{name: "f2fs, which only libblkid knows", obs: obs(t, blank(t), device(), probed("f2fs", 1024)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"f2fs at byte 1024 (libblkid)"}},
		{name: "LVM on the whole device", obs: obs(t, blank(t), device(withSig(prismv1.SignatureLVM, "LVM2_member", 512))),
			states: "Refused,Refused,Refused,Refused", refused: []string{"LVM2_member"}},
		{name: "GPT headers of someone else and nothing readable", obs: obs(t, blank(t), device(withSig(prismv1.SignaturePartitionTable, "gpt", 512))),
			states: "Refused,Refused,Refused,Refused", refused: []string{"gpt (PartitionTable) at byte 512"}},
		{name: "dos table", obs: obs(t, dosDisk, device(), probed("dos", 510)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"a master boot record", "dos at byte 510 (libblkid)"}},
		{name: "kernel partitions without a table", obs: obs(t, blank(t), device(kernelHas("nvme0n1p1"))),
			states: "Refused,Refused,Refused,Refused", refused: []string{"the kernel lists partition nvme0n1p1, which the partition table lacks"}},
		{name: "holders on an empty device", obs: obs(t, blank(t), device(func(d *prismv1.Device) { d.Holders = []string{"dm-0"} })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"in use by dm-0"}},
		{name: "holders win over a wipe grant", wipe: true,
			obs:    obs(t, blank(t), device(withSig(prismv1.SignatureLVM, "LVM2_member", 512), func(d *prismv1.Device) { d.Holders = []string{"dm-0"} })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"in use by dm-0"}},
		{name: "mounted, even with a grant", wipe: true, obs: obs(t, blank(t), device(), probed("squashfs", 0), func(o *Observation) { o.Mounts = []string{"nvme0n1 on /mnt"} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"is mounted: nvme0n1 on /mnt"}},
		{name: "held open by a program on an empty device", obs: obs(t, blank(t), device(), func(o *Observation) { o.Users = []string{"pid 77 (sleep)"} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"is in use: held open by pid 77 (sleep)"}},
		{name: "held open by a FUSE daemon, even with a grant", wipe: true, obs: obs(t, blank(t), device(withSig(prismv1.SignatureFilesystem, "vfat", 0)), probed("vfat", 0), func(o *Observation) { o.Users = []string{"pid 9 (fusefat)"} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"is in use: held open by pid 9 (fusefat)"}},
		{name: "a partition held open by a program blocks a wipe", wipe: true, obs: obs(t, disk(t, -1, someones(foreign)), device(kernelHas("nvme0n1p5")), func(o *Observation) { o.PartitionHolders = map[int][]string{5: {"pid 9 (fuseiso)"}} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"partition 5 by pid 9 (fuseiso)"}},
		{name: "a held partition blocks a wipe", wipe: true, obs: obs(t, disk(t, -1, someones(foreign)), device(kernelHas("nvme0n1p5")), func(o *Observation) { o.PartitionHolders = map[int][]string{5: {"md0"}} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"partition 5 by md0"}},
		{name: "read-only", obs: obs(t, blank(t), device(func(d *prismv1.Device) { d.ReadOnly = true })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"read-only"}},
		{name: "wipe granted: filesystem", wipe: true, obs: obs(t, blank(t), device(withSig(prismv1.SignatureFilesystem, "xfs", 0)), probed("xfs", 0)),
			steps: []string{wipefs, "ZeroRegions 11", write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted: foreign GPT the kernel knows", wipe: true, obs: obs(t, disk(t, -1, someones(foreign)), device(kernelHas("nvme0n1p5")), probed("gpt", 512)),
			steps: []string{forget, wipefs, "ZeroRegions 10", write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted but the device carries this plan's partitions", wipe: true, obs: obs(t, disk(t, -1, layoutOf(512, p1, p2, foreign)), device(kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p5"))),
			states: "Ready,Ready,Refused,Refused", refused: []string{"already carries partitions 1, 2 of this plan", `foreign partition 5 "data"`}},
		{name: "wipe granted on an empty device changes nothing more", wipe: true, obs: obs(t, blank(t), device()),
			steps: []string{write1234, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted on a partial Prism layout: no wipe", wipe: true, obs: obs(t, disk(t, -1, layoutOf(512, p1)), device(kernelHas("nvme0n1p1"))),
			steps: []string{write1234, reread, settle}, states: "Ready,Pending,Pending,Pending"},
		{name: "another device", obs: obs(t, blank(t), device(func(d *prismv1.Device) { d.StablePath = "/dev/disk/by-id/nvme-OTHER" })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"is not " + fast}},
		{name: "the table read with other sectors than the kernel's", obs: obs(t, blank(t), device(func(d *prismv1.Device) { d.LogicalBlockSizeBytes = 4096 })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"512-byte sectors but the kernel reports 4096"}},
		{name: "device too small for the plan", obs: obs(t, blank(t), device(func(d *prismv1.Device) { d.SizeBytes = 10 * gib })),
			states: "Refused,Refused,Refused,Refused", refused: []string{"does not fit /dev/nvme0n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(fd, tc.obs, tc.wipe)
			steps, states := summary(d)
			if !reflect.DeepEqual(steps, tc.steps) {
				t.Errorf("steps:\n got %q\nwant %q", steps, tc.steps)
			}
			if states != tc.states {
				t.Errorf("states %s, want %s (%+v)", states, tc.states, d.Partitions)
			}
			if (d.Refused != "") != (tc.refused != nil) {
				t.Errorf("refused %q, want a refusal: %t", d.Refused, tc.refused != nil)
			}
			for _, want := range tc.refused {
				if !strings.Contains(d.Refused, want) {
					t.Errorf("refusal %q does not mention %q", d.Refused, want)
				}
			}
			if d.Wipe != slices.ContainsFunc(d.Steps, func(s Step) bool { return s.Kind == StepZeroRegions && s.Regions[0].Offset == 0 }) {
				t.Errorf("Wipe = %t with steps %q", d.Wipe, steps)
			}
			for _, p := range d.Partitions {
				if p.Device != fast || p.Path != prismv1.PartitionPath(fast, p.Number) || p.Label == "" {
					t.Errorf("partition status %+v", p)
				}
				if p.State == prismv1.PartitionReady && p.Message != "" {
					t.Errorf("ready partition %d has message %q", p.Number, p.Message)
				}
				if p.State != prismv1.PartitionReady && p.Message == "" {
					t.Errorf("partition %d is %s without a message", p.Number, p.State)
				}
				if len(p.Message) > MaxMessageLength {
					t.Errorf("partition %d: message of %d bytes", p.Number, len(p.Message))
				}
			}
		})
	}
}

var all4 = kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3", "nvme0n1p4")

// The layout Decide writes is exactly the plan's, on 512 and 4096 byte sectors, and reading
// it back gives a complete table that needs nothing more.
func TestDecideWritesThePlannedTable(t *testing.T) {
	fd := testPlan(t)
	for _, ss := range []int64{512, 4096} {
		dev := device(func(d *prismv1.Device) { d.LogicalBlockSizeBytes = int32(ss) })
		d := Decide(fd, obs(t, disk(t, 0, layoutOf(ss)), dev), false)
		i := slices.IndexFunc(d.Steps, func(s Step) bool { return s.Kind == StepWriteTable })
		if i < 0 {
			t.Fatalf("%d: steps %+v", ss, d.Steps)
		}
		l := d.Steps[i].Table
		if l.SectorSize != ss || l.DiskGUID != DiskGUID(fast) || len(l.Entries) != 4 {
			t.Fatalf("%d: table %+v", ss, l)
		}
		for j, w := range Wanted(fd) {
			e := l.Entries[j]
			if e.Number != int(w.Number) || e.FirstLBA*ss != w.StartBytes || (e.LastLBA+1)*ss != w.StartBytes+w.SizeBytes || e.Name != w.Label || e.TypeGUID != w.TypeGUID {
				t.Errorf("%d: entry %+v for %+v", ss, e, w)
			}
		}
		again := Decide(fd, obs(t, disk(t, -1, l), device(all4, func(d *prismv1.Device) { d.LogicalBlockSizeBytes = int32(ss) })), false)
		if _, states := summary(again); states != "Ready,Ready,Ready,Ready" || len(again.Steps) != 0 {
			t.Errorf("%d: after writing: %s %+v", ss, states, again.Steps)
		}
	}
}

func TestDecideRejectsInvalidPlans(t *testing.T) {
	good := testPlan(t)
	for _, tc := range []struct {
		name string
		mod  func(*prismv1.FastDevicePlan)
		want string
	}{
		{"overlap", func(p *prismv1.FastDevicePlan) { p.Slots[1].Partition.StartBytes -= mib }, "overlap"},
		{"duplicate number", func(p *prismv1.FastDevicePlan) { p.Cache.Number = 3 }, "planned twice"},
		{"foreign label", func(p *prismv1.FastDevicePlan) { p.Slots[0].Partition.Label = "data" }, "not a Prism label"},
		{"number 0", func(p *prismv1.FastDevicePlan) { p.Slots[0].Partition.Number = 0 }, "partition number 0"},
		{"no partitions", func(p *prismv1.FastDevicePlan) { p.Slots, p.Cache = nil, nil }, "no partitions"},
	} {
		fd := *good.DeepCopy()
		tc.mod(&fd)
		d := Decide(fd, obs(t, blank(t), device()), true)
		if len(d.Steps) != 0 || !strings.Contains(d.Refused, tc.want) {
			t.Errorf("%s: refused %q steps %d, want a refusal mentioning %q", tc.name, d.Refused, len(d.Steps), tc.want)
		}
	}
}

func TestPartitionNames(t *testing.T) {
	for _, tc := range []struct {
		disk string
		n    int
		name string
	}{{"nvme0n1", 3, "nvme0n1p3"}, {"sda", 3, "sda3"}, {"loop7", 12, "loop7p12"}, {"vdb", 1, "vdb1"}} {
		if got := partitionName(tc.disk, tc.n); got != tc.name {
			t.Errorf("partitionName(%s, %d) = %s", tc.disk, tc.n, got)
		}
		if n, ok := parsePartitionName(tc.disk, tc.name); !ok || n != tc.n {
			t.Errorf("parsePartitionName(%s, %s) = %d, %t", tc.disk, tc.name, n, ok)
		}
	}
	for _, bad := range [][2]string{{"nvme0n1", "nvme0n13"}, {"sda", "sdab"}, {"sda", "sda0"}, {"sda", "sda01"}, {"loop1", "loop10"}, {"", "1"}} {
		if n, ok := parsePartitionName(bad[0], bad[1]); ok {
			t.Errorf("parsePartitionName(%q, %q) = %d, want no number", bad[0], bad[1], n)
		}
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	got := truncate(long)
	if len(got) > MaxMessageLength || !strings.HasSuffix(got, "...") || !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Fatalf("truncate: %d bytes, %q...", len(got), got[len(got)-8:])
	}
	if truncate("short") != "short" {
		t.Fatal("short message changed")
	}
}
