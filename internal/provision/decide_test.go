package provision

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/gpt"
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
	devs := []prismv1.Device{{Name: "nvme0n1", StablePath: fast, SizeBytes: 12 * gib}}
	sel := prismv1.NodeSelection{Node: "n1", Fast: []prismv1.SelectedDevice{{Name: "nvme0n1", StablePath: fast, SizeBytes: 12 * gib}}}
	for i, name := range []string{"nvme1n1", "nvme2n1", "nvme3n1"} {
		p := "/dev/disk/by-id/nvme-QLC_" + name
		devs = append(devs, prismv1.Device{Name: name, StablePath: p, SizeBytes: 100 * gib * int64(i+1)})
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: name, StablePath: p})
	}
	spec := &prismv1.HybridStoragePolicySpec{
		DB:    prismv1.DBSizing{Size: resource.NewQuantity(2*gib, resource.BinarySI)},
		Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteThrough},
	}
	l := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 || len(l.Plan.FastDevices) != 1 {
		t.Fatalf("planner: %+v", l)
	}
	fd := l.Plan.FastDevices[0]
	if len(fd.Slots) != 3 || fd.Cache == nil || fd.Cache.Number != 4 {
		t.Fatalf("unexpected plan %+v", fd)
	}
	return fd
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

var gptSigs = func(d *prismv1.Device) {
	d.Signatures = []prismv1.DeviceSignature{
		{Kind: prismv1.SignaturePartitionTable, Name: "gpt", OffsetBytes: 512},
		{Kind: prismv1.SignaturePartitionTable, Name: "gpt", OffsetBytes: 12*gib - 512},
	}
}

func withSig(kind prismv1.SignatureKind, name string, off int64) func(*prismv1.Device) {
	return func(d *prismv1.Device) {
		d.Signatures = append(d.Signatures, prismv1.DeviceSignature{Kind: kind, Name: name, OffsetBytes: off})
	}
}

// summary renders a decision compactly: the steps' argv, and each partition's state.
func summary(d Decision) (steps []string, states string) {
	for _, s := range d.Steps {
		steps = append(steps, strings.Join(s.Argv("/dev/nvme0n1"), " "))
	}
	var st []string
	for _, p := range d.Partitions {
		st = append(st, string(p.State))
	}
	return steps, strings.Join(st, ",")
}

const (
	clearCmd = "sgdisk --clear /dev/nvme0n1"
	new1     = "sgdisk --new=1:2048:4196351 --change-name=1:prism-db-00 --typecode=1:30cd0809-c2b2-499c-8879-2d6b78529876 /dev/nvme0n1"
	new2     = "sgdisk --new=2:4196352:8390655 --change-name=2:prism-db-01 --typecode=2:30cd0809-c2b2-499c-8879-2d6b78529876 /dev/nvme0n1"
	new3     = "sgdisk --new=3:8390656:12584959 --change-name=3:prism-db-02 --typecode=3:30cd0809-c2b2-499c-8879-2d6b78529876 /dev/nvme0n1"
	new4     = "sgdisk --new=4:12584960:25163775 --change-name=4:prism-cache --typecode=4:0fc63daf-8483-4772-8e79-3d69d8477de4 /dev/nvme0n1"
	reread   = "partx --update --nr 1:4 /dev/nvme0n1"
	settle   = "udevadm settle --timeout=30"
	wipefs   = "wipefs --all /dev/nvme0n1"
	zap      = "sgdisk --zap-all /dev/nvme0n1"
	forget   = "partx --delete --nr 1:128 /dev/nvme0n1"
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

	for _, tc := range []struct {
		name    string
		table   gpt.Table
		dev     prismv1.Device
		wipe    bool
		steps   []string
		states  string
		refused []string // substrings of the refusal
	}{
		{name: "empty device", table: gpt.Table{}, dev: device(),
			steps: []string{clearCmd, new1, new2, new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "fresh GPT without partitions (crash after sgdisk --clear)", table: gptTable(), dev: device(gptSigs),
			steps: []string{new1, new2, new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "partial Prism layout (crash after the second partition)", table: gptTable(p1, p2), dev: device(gptSigs, kernelHas("nvme0n1p1", "nvme0n1p2")),
			steps: []string{new3, new4, reread, settle}, states: "Ready,Ready,Pending,Pending"},
		{name: "partial layout the kernel has not read", table: gptTable(p1, p2), dev: device(gptSigs),
			steps: []string{new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "complete layout", table: gptTable(p1, p2, p3, p4), dev: device(gptSigs, all),
			states: "Ready,Ready,Ready,Ready"},
		{name: "complete on disk, crash before partx", table: gptTable(p1, p2, p3, p4), dev: device(gptSigs, kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3")),
			steps: []string{reread, settle}, states: "Ready,Ready,Ready,Pending"},
		{name: "complete layout with a BlueStore label inside slot 1 (an OSD's DB)", table: gptTable(p1, p2, p3, p4),
			dev: device(gptSigs, all, withSig(prismv1.SignatureCephBlueStore, "ceph_bluestore", 1<<30)), states: "Ready,Ready,Ready,Ready"},
		{name: "partial layout with a BlueStore label inside existing slot 1", table: gptTable(p1),
			dev:   device(gptSigs, kernelHas("nvme0n1p1"), withSig(prismv1.SignatureCephBlueStore, "ceph_bluestore", 1<<30)),
			steps: []string{new2, new3, new4, reread, settle}, states: "Ready,Pending,Pending,Pending"},
		{name: "BlueStore label where a missing partition goes", table: gptTable(p1),
			dev:    device(gptSigs, kernelHas("nvme0n1p1"), withSig(prismv1.SignatureCephBlueStore, "ceph_bluestore", 10<<30)),
			states: "Ready,Refused,Refused,Refused", refused: []string{"signature ceph_bluestore (CephBlueStore) at offset 10737418240"}},
		{name: "complete layout and a foreign partition after it: nothing to do", table: gptTable(p1, p2, p3, p4, foreign), dev: device(gptSigs, all, kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3", "nvme0n1p4", "nvme0n1p5")),
			states: "Ready,Ready,Ready,Ready"},
		{name: "foreign partition", table: gptTable(p1, foreign), dev: device(gptSigs, kernelHas("nvme0n1p1", "nvme0n1p5")),
			states: "Ready,Refused,Refused,Refused", refused: []string{`foreign partition 5 "data"`, "allowWipe"}},
		{name: "foreign partition at a planned number", table: gptTable(gpt.Partition{Number: 1, StartBytes: mib, SizeBytes: 100 * mib, Name: "EFI", TypeGUID: fsT}),
			dev: device(gptSigs), states: "Refused,Refused,Refused,Refused", refused: []string{`foreign partition 1 "EFI"`, `where the plan wants "prism-db-00"`}},
		{name: "Prism partition of another size", table: gptTable(p1, bigger), dev: device(gptSigs, kernelHas("nvme0n1p1", "nvme0n1p2")),
			states: "Ready,Refused,Refused,Refused", refused: []string{`Prism partition 2 "prism-db-01" (start 2049 MiB, size 3072 MiB`, "size 2048 MiB"}},
		{name: "Prism partition of another type", table: gptTable(wrongType), dev: device(gptSigs, kernelHas("nvme0n1p1")),
			states: "Refused,Refused,Refused,Refused", refused: []string{"type 0fc63daf", "type 30cd0809"}},
		{name: "Prism partition not in the plan", table: gptTable(p1, gpt.Partition{Number: 7, StartBytes: 12*gib - 200*mib, SizeBytes: 100 * mib, Name: "prism-db-06", TypeGUID: dbT}),
			dev: device(gptSigs), states: "Refused,Refused,Refused,Refused", refused: []string{`Prism partition 7 "prism-db-06"`, "not in the plan"}},
		{name: "filesystem on the whole device", table: gpt.Table{}, dev: device(withSig(prismv1.SignatureFilesystem, "ext4", 1024)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"signature ext4 (Filesystem) at offset 1024"}},
		{name: "LVM on the whole device", table: gpt.Table{}, dev: device(withSig(prismv1.SignatureLVM, "LVM2_member", 512)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"LVM2_member"}},
		{name: "Open CAS on the whole device", table: gpt.Table{}, dev: device(withSig(prismv1.SignatureOpenCAS, "open_cas", 0)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"open_cas"}},
		{name: "GPT headers but sfdisk sees no table", table: gpt.Table{}, dev: device(gptSigs),
			states: "Refused,Refused,Refused,Refused", refused: []string{"signature gpt (PartitionTable) at offset 512"}},
		{name: "dos table", table: gpt.Table{Label: gpt.LabelDOS, SectorSize: 512}, dev: device(withSig(prismv1.SignaturePartitionTable, "dos", 510)),
			states: "Refused,Refused,Refused,Refused", refused: []string{"a dos partition table"}},
		{name: "kernel partitions without a table", table: gpt.Table{}, dev: device(kernelHas("nvme0n1p1")),
			states: "Refused,Refused,Refused,Refused", refused: []string{"the kernel lists partition nvme0n1p1, which the partition table lacks"}},
		{name: "holders on an empty device", table: gpt.Table{}, dev: device(func(d *prismv1.Device) { d.Holders = []string{"dm-0"} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"in use by dm-0"}},
		{name: "holders win over a wipe grant", table: gpt.Table{}, wipe: true,
			dev:    device(withSig(prismv1.SignatureLVM, "LVM2_member", 512), func(d *prismv1.Device) { d.Holders = []string{"dm-0"} }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"in use by dm-0"}},
		{name: "read-only", table: gpt.Table{}, dev: device(func(d *prismv1.Device) { d.ReadOnly = true }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"read-only"}},
		{name: "wipe granted: filesystem", table: gpt.Table{}, wipe: true, dev: device(withSig(prismv1.SignatureFilesystem, "xfs", 0)),
			steps: []string{wipefs, zap, clearCmd, new1, new2, new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted: foreign GPT the kernel knows", table: gptTable(foreign), wipe: true, dev: device(gptSigs, kernelHas("nvme0n1p5")),
			steps: []string{wipefs, zap, forget, clearCmd, new1, new2, new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted but the device carries this plan's partitions", table: gptTable(p1, p2, foreign), wipe: true,
			dev: device(gptSigs, kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p5")), states: "Ready,Ready,Refused,Refused",
			refused: []string{"already carries partitions 1, 2 of this plan", `foreign partition 5 "data"`}},
		{name: "wipe granted on an empty device changes nothing", table: gpt.Table{}, wipe: true, dev: device(),
			steps: []string{clearCmd, new1, new2, new3, new4, reread, settle}, states: "Pending,Pending,Pending,Pending"},
		{name: "wipe granted on a partial Prism layout: no wipe", table: gptTable(p1), wipe: true, dev: device(gptSigs, kernelHas("nvme0n1p1")),
			steps: []string{new2, new3, new4, reread, settle}, states: "Ready,Pending,Pending,Pending"},
		{name: "another device", table: gpt.Table{}, dev: device(func(d *prismv1.Device) { d.StablePath = "/dev/disk/by-id/nvme-OTHER" }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"is not " + fast}},
		{name: "unknown sector size", table: gpt.Table{}, dev: device(func(d *prismv1.Device) { d.LogicalBlockSizeBytes = 0 }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"sector size is unknown"}},
		{name: "sfdisk and kernel disagree on the sector size", table: gptTable(), dev: device(gptSigs, func(d *prismv1.Device) { d.LogicalBlockSizeBytes = 4096 }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"512-byte sectors but the kernel reports 4096"}},
		{name: "device too small for the plan", table: gpt.Table{}, dev: device(func(d *prismv1.Device) { d.SizeBytes = 10 * gib }),
			states: "Refused,Refused,Refused,Refused", refused: []string{"does not fit /dev/nvme0n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(fd, tc.table, tc.dev, tc.wipe)
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
			if d.Wipe != (len(steps) > 0 && steps[0] == wipefs) {
				t.Errorf("Wipe = %t with steps %q", d.Wipe, steps)
			}
			for _, p := range d.Partitions {
				if p.Device != fast || p.Path != plan.PartitionPath(fast, p.Number) || p.Label == "" {
					t.Errorf("partition status %+v", p)
				}
				if p.State == prismv1.PartitionRefused && p.Message != d.Refused {
					t.Errorf("refused partition %d: message %q, want the refusal", p.Number, p.Message)
				}
				if p.State == prismv1.PartitionReady && p.Message != "" {
					t.Errorf("ready partition %d has message %q", p.Number, p.Message)
				}
				if len(p.Message) > MaxMessageLength {
					t.Errorf("partition %d: message of %d bytes", p.Number, len(p.Message))
				}
			}
		})
	}
}

// The plan, the real sfdisk capture of the layout (made with the same sgdisk argv) and
// Decide agree: that layout is complete, on 512 and on 4096 byte sectors.
func TestDecideOnRealCaptures(t *testing.T) {
	fd := testPlan(t)
	for _, tc := range []struct {
		file   string
		ss     int32
		kernel func(*prismv1.Device)
		states string
		steps  int
	}{
		{"prism-full.json", 512, all4, "Ready,Ready,Ready,Ready", 0},
		{"prism-4k.json", 4096, all4, "Ready,Ready,Ready,Ready", 0},
		{"prism-partial.json", 512, kernelHas("nvme0n1p1", "nvme0n1p2"), "Ready,Ready,Pending,Pending", 4},
		{"gpt-empty.json", 512, kernelHas(), "Pending,Pending,Pending,Pending", 6},
		// The kernel still lists partitions of the complete layout: someone removed them from the table.
		{"prism-partial.json", 512, all4, "Ready,Ready,Refused,Refused", 0},
	} {
		b, err := os.ReadFile(filepath.Join("..", "gpt", "testdata", "sfdisk", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		table, err := gpt.ParseSfdiskJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		d := Decide(fd, table, device(gptSigs, func(d *prismv1.Device) { d.LogicalBlockSizeBytes = tc.ss }, tc.kernel), false)
		if _, states := summary(d); states != tc.states || len(d.Steps) != tc.steps {
			t.Errorf("%s: states %s steps %d (%+v), want %s and %d steps", tc.file, states, len(d.Steps), d.Steps, tc.states, tc.steps)
		}
	}
}

var all4 = kernelHas("nvme0n1p1", "nvme0n1p2", "nvme0n1p3", "nvme0n1p4")

func TestDecide4KSectors(t *testing.T) {
	d := Decide(testPlan(t), gpt.Table{}, device(func(d *prismv1.Device) { d.LogicalBlockSizeBytes = 4096 }), false)
	steps, _ := summary(d)
	want := "sgdisk --new=1:256:524543 --change-name=1:prism-db-00 --typecode=1:30cd0809-c2b2-499c-8879-2d6b78529876 /dev/nvme0n1"
	if len(steps) < 2 || steps[1] != want {
		t.Fatalf("steps %q, want the second to be %q", steps, want)
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
		d := Decide(fd, gpt.Table{}, device(), true)
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
