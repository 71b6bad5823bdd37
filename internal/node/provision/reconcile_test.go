package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/signature"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// fakeHost is a device file and a kernel behind the executor. The device is a sparse 12 GiB
// file under <root>/dev that the partitioner writes for real, and that the real read-only
// tools (wipefs --no-act, blkid --probe, sfdisk --json) and wipefs --all read and wipe for
// real; only the kernel is played: partx reads the table from the file into an in-memory
// kernel view mirrored into <root>/sys/class/block like the real sysfs.
type fakeHost struct {
	t    *testing.T
	root string
	name string
	// kernel is the kernel's partitions: number -> partition (start and size used).
	kernel map[int]gpt.Partition
	// fail makes the command whose argv starts with the key fail with the value.
	fail map[string]error
	// partxIgnores lists partitions partx "adds" without the kernel taking them (exit 0).
	partxIgnores []int
	ran          [][]string
	// byName lists the commands that mutate the device or the kernel's view of it and were
	// given its kernel name rather than a held descriptor.
	byName []string
	// tearAt, when positive, tears the tearAt-th device write: half of it reaches the file.
	tearAt, writes int
	// lvm, when set, plays the host's LVM (volumes_test.go).
	lvm *fakeLVM
	// attrs are kernel attributes of the device kept under /sys/class/block/<name>
	// (identity_test.go: wwid, serial, diskseq).
	attrs map[string]string
}

func newFakeHost(t *testing.T) *fakeHost {
	for _, tool := range []string{"wipefs", "blkid", "sfdisk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (util-linux, fdisk) is not installed: run hack/install-deps.sh test", tool)
		}
	}
	h := &fakeHost{t: t, root: t.TempDir(), name: "nvme0n1", kernel: map[int]gpt.Partition{}, fail: map[string]error{}}
	if err := os.MkdirAll(filepath.Join(h.root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A procfs with this process alone: the fixture's devices are files, its partitions'
	// numbers made up, so no process of this machine holds them.
	if err := os.MkdirAll(filepath.Join(h.root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("2", filepath.Join(h.root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(h.devPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(12 * gib); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h.syncSysfs()
	return h
}

func (h *fakeHost) devPath() string { return filepath.Join(h.root, "dev", h.name) }

func (h *fakeHost) runner() Runner {
	return Runner{Exec: h, Open: h.open, HostRoot: h.root, Proc: procfs.Proc{Dir: filepath.Join(h.root, "proc")}, allowFiles: true}
}

func (h *fakeHost) reconcile(p *prismv1.NodePlan) Result {
	return h.runner().Reconcile(context.Background(), p, h.inventory(), prismv1.ModeApply)
}

func (h *fakeHost) Run(ctx context.Context, given []string, stdin []byte) ([]byte, error) {
	// A tool given a held descriptor (hostexec.HeldPath) is checked and recorded with the
	// device it reaches, read back through /proc; the real tools below run as given.
	argv := given
	if held := last(given); strings.HasPrefix(held, fmt.Sprintf("/proc/%d/fd/", os.Getpid())) {
		target, err := os.Readlink(held)
		if err != nil {
			h.t.Fatalf("%q: %v", given, err)
		}
		argv = append(slices.Clone(given[:len(given)-1]), target)
	} else if given[0] == "partx" || slices.Contains(given, "--all") {
		h.byName = append(h.byName, strings.Join(given, " "))
	}
	h.ran = append(h.ran, argv)
	for prefix, err := range h.fail {
		if strings.HasPrefix(strings.Join(argv, " "), prefix) {
			return nil, err
		}
	}
	if h.lvm != nil && slices.Contains([]string{"pvs", "vgs", "lvs", "pvcreate", "vgcreate", "lvcreate", "lvchange"}, argv[0]) {
		return h.lvm.run(argv)
	}
	// The device, or a DB slot's logical volume (as the kernel names it: /dev/dm-N).
	lv := strings.HasPrefix(last(argv), filepath.Join(h.root, "dev", "dm-"))
	if argv[0] != "udevadm" && last(argv) != h.devPath() && !lv {
		h.t.Errorf("%q: runs on %s, want the device under the host root %s", argv, last(argv), h.devPath())
	}
	switch argv[0] + " " + argv[1] {
	case "wipefs --no-act", "blkid --probe", "sfdisk --json", "wipefs --all":
		return hostexec.Local{}.Run(ctx, given, stdin)
	case "partx --update":
		hi, _ := strconv.Atoi(strings.TrimPrefix(argv[3], "1:"))
		table := h.table()
		for n := 1; n <= hi; n++ {
			if p, ok := table.Partition(n); ok && !slices.Contains(h.partxIgnores, n) {
				h.kernel[n] = p
			}
		}
	case "partx --delete":
		h.kernel = map[int]gpt.Partition{}
	case "udevadm settle":
	default:
		h.t.Fatalf("unexpected command %q", argv)
	}
	h.syncSysfs()
	return nil, nil
}

// table is the file's GPT as Prism's own reader sees it.
func (h *fakeHost) table() gpt.Table {
	f, err := os.Open(h.devPath())
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	d, err := gpt.ReadDisk(f, 12*gib, 512)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.Table()
}

func (h *fakeHost) open(path string, exclusive bool) (hostexec.Device, error) {
	if path != h.devPath() {
		h.t.Errorf("opened %s, want %s", path, h.devPath())
	}
	f, err := hostexec.OpenDevice(path, exclusive)
	if err != nil {
		return nil, err
	}
	return &tornDevice{Device: f, h: h}, nil
}

type tornDevice struct {
	hostexec.Device
	h *fakeHost
}

func (d *tornDevice) WriteAt(b []byte, off int64) (int, error) {
	d.h.writes++
	d.h.ran = append(d.h.ran, []string{"pwrite", fmt.Sprintf("%d@%d", len(b), off)})
	if d.h.writes == d.h.tearAt {
		n, _ := d.Device.WriteAt(b[:len(b)/2], off)
		return n, errors.New("torn write (test)")
	}
	return d.Device.WriteAt(b, off)
}

func (h *fakeHost) syncSysfs() {
	dir := filepath.Join(h.root, "sys", "class", "block", h.name)
	if err := os.RemoveAll(dir); err != nil {
		h.t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	for f, v := range h.attrs {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v+"\n"), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	for n, p := range h.kernel {
		pd := filepath.Join(dir, partitionName(h.name, n))
		if err := os.MkdirAll(pd, 0o755); err != nil {
			h.t.Fatal(err)
		}
		for f, v := range map[string]int64{"partition": int64(n), "start": p.StartBytes / 512, "size": p.SizeBytes / 512} {
			if err := os.WriteFile(filepath.Join(pd, f), []byte(strconv.FormatInt(v, 10)+"\n"), 0o644); err != nil {
				h.t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(pd, "dev"), []byte(fmt.Sprintf("259:%d\n", n)), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
}

// mutations are the commands and device writes other than reads.
func (h *fakeHost) mutations() []string {
	var out []string
	for _, a := range h.ran {
		switch a[0] + " " + a[1] {
		case "wipefs --no-act", "blkid --probe", "sfdisk --json":
			continue
		}
		if slices.Contains([]string{"pvs", "vgs", "lvs"}, a[0]) {
			continue
		}
		out = append(out, strings.Join(a, " "))
	}
	return out
}

func (h *fakeHost) inventory() []prismv1.Device {
	d := device()
	for n := range h.kernel {
		d.Partitions = append(d.Partitions, partitionName(h.name, n))
	}
	return []prismv1.Device{d}
}

// put writes b at off in the device file, as someone else would.
func (h *fakeHost) put(off int64, b []byte) {
	f, err := os.OpenFile(h.devPath(), os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		h.t.Fatal(err)
	}
}

// gptArea is the bytes of the file a GPT occupies.
func (h *fakeHost) gptArea() []byte {
	f, err := os.Open(h.devPath())
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	var out []byte
	for _, r := range (gpt.Layout{SectorSize: 512, Sectors: 12 * gib / 512}).Regions() {
		if _, err := f.ReadAt(r.Data, r.Offset); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, r.Data...)
	}
	return out
}

func nodePlan(t *testing.T, wipe ...string) *prismv1.NodePlan {
	return &prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{testPlan(t)}, AllowWipe: wipe}
}

func states(ps []prismv1.PartitionStatus) string {
	var s []string
	for _, p := range ps {
		s = append(s, string(p.State))
	}
	return strings.Join(s, ",")
}

var tableWrites = []string{"pwrite 16384@12884884992", "pwrite 512@12884901376", "pwrite 16384@1024", "pwrite 512@512", "pwrite 512@0"}

func TestReconcileAppliesThenOnlyReads(t *testing.T) {
	h := newFakeHost(t)
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || !res.Changed {
		t.Fatalf("first run: %s changed %t: %+v", got, res.Changed, res.Partitions)
	}
	host := func(s string) string { return strings.ReplaceAll(s, "/dev/nvme0n1", h.devPath()) }
	want := append(slices.Clone(tableWrites), host(reread), settle)
	if got := h.mutations(); !slices.Equal(got, want) {
		t.Fatalf("commands:\n got %q\nwant %q", got, want)
	}
	if table := h.table(); len(table.Partitions) != 4 || len(h.kernel) != 4 || table.ID != DiskGUID(fast) {
		t.Fatalf("after the run: table %+v kernel %+v", table, h.kernel)
	}
	h.ran = nil
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("second run: %s changed %t, ran %q", got, res.Changed, h.mutations())
	}
}

func TestReconcileDryRunChangesNothing(t *testing.T) {
	for _, mode := range []prismv1.PolicyMode{prismv1.ModeDryRun, ""} {
		h := newFakeHost(t)
		res := h.runner().Reconcile(context.Background(), nodePlan(t), h.inventory(), mode)
		if got := states(res.Partitions); got != "Pending,Pending,Pending,Pending" || res.Changed {
			t.Fatalf("mode %q: %s changed %t", mode, got, res.Changed)
		}
		for _, p := range res.Partitions {
			if !strings.HasPrefix(p.Message, "dry run") || !strings.Contains(p.Message, "to be created: sectors") {
				t.Errorf("mode %q: message %q", mode, p.Message)
			}
		}
		if len(h.mutations()) != 0 || !bytes.Equal(h.gptArea(), make([]byte, len(h.gptArea()))) {
			t.Fatalf("mode %q ran %q", mode, h.mutations())
		}
	}
}

// A crash in the middle of any device write (the k-th is torn: half of it reaches the device)
// leaves a state from which the next Reconcile writes exactly the uninterrupted run's table.
func TestReconcileResumesAfterATornWriteAtEveryWrite(t *testing.T) {
	full := newFakeHost(t)
	full.reconcile(nodePlan(t))
	want := full.gptArea()
	for k := 1; k <= len(tableWrites); k++ {
		h := newFakeHost(t)
		h.tearAt = k
		res := h.reconcile(nodePlan(t))
		if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || !strings.Contains(res.Partitions[0].Message, "torn write") {
			t.Fatalf("k=%d: the torn run reports %s: %+v", k, got, res.Partitions)
		}
		h.tearAt, h.ran = 0, nil
		res = h.reconcile(nodePlan(t))
		if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
			t.Fatalf("k=%d: after resuming %s: %+v", k, got, res.Partitions)
		}
		if !bytes.Equal(h.gptArea(), want) {
			t.Fatalf("k=%d: the table differs from the uninterrupted run's", k)
		}
		// The resumed run rewrote only what the crash left different.
		if m := h.mutations(); len(m) > len(tableWrites)-k+3 {
			t.Errorf("k=%d: resumed with %q", k, m)
		}
	}
}

// A step limit stops the run as a crash between steps would; the next run finishes.
func TestReconcileResumesAfterAStepLimit(t *testing.T) {
	for k := 1; k <= 1; k++ { // the table write (partx is the second and last)
		h := newFakeHost(t)
		r := h.runner()
		r.StepLimit = k
		res := r.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
		for _, p := range res.Partitions {
			if p.State != prismv1.PartitionPending || !strings.Contains(p.Message, "step limit") {
				t.Errorf("k=%d: %+v", k, p)
			}
		}
		if got := states(h.reconcile(nodePlan(t)).Partitions); got != "Ready,Ready,Ready,Ready" {
			t.Fatalf("k=%d: after resuming %s", k, got)
		}
	}
}

func TestReconcileReportsFailuresAndRecovers(t *testing.T) {
	h := newFakeHost(t)
	h.fail["partx --update"] = &hostexec.ExitError{ExitCode: 1, Stderr: "partx: /dev/nvme0n1: failed to read partition table"}
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || !res.Changed {
		t.Fatalf("with partx failing: %s: %+v", got, res.Partitions)
	}
	if !strings.Contains(res.Partitions[2].Message, "RereadPartitions failed") || !strings.Contains(res.Partitions[2].Message, "failed to read partition table") {
		t.Errorf("message %q", res.Partitions[2].Message)
	}
	delete(h.fail, "partx --update")
	h.ran = nil
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("retry: %s: %+v", got, res.Partitions)
	}
	if m := h.mutations(); len(m) != 2 || !strings.HasPrefix(m[0], "partx --update") {
		t.Fatalf("retry ran %q, want partx and udevadm only", m)
	}
}

// partx exits 0 when the kernel refuses a partition; the check against sysfs catches it.
func TestReconcileChecksTheKernelNotPartxExitCode(t *testing.T) {
	h := newFakeHost(t)
	h.partxIgnores = []int{4}
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Failed" {
		t.Fatalf("%s: %+v", got, res.Partitions)
	}
	if !strings.Contains(res.Partitions[3].Message, "the kernel has not read it") {
		t.Errorf("message %q", res.Partitions[3].Message)
	}
	h.partxIgnores, h.ran = nil, nil
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || len(h.mutations()) != 2 || !strings.HasPrefix(h.mutations()[0], "partx --update") {
		t.Fatalf("%s after %q", got, h.mutations())
	}
}

// A kernel partition at another position than the table's is not "fixed" with partx, which
// would resize it in place if it is busy: the device is refused and nothing runs.
func TestReconcileRefusesAKernelPartitionThatDiffersFromTheTable(t *testing.T) {
	h := newFakeHost(t)
	h.reconcile(nodePlan(t))
	stale := h.kernel[2]
	stale.SizeBytes = gib
	h.kernel[2] = stale
	h.syncSysfs()
	h.ran = nil
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.mutations()) != 0 {
		t.Fatalf("%s after %q", got, h.mutations())
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, "the kernel has nvme0n1p2 at 2049 MiB, size 1024 MiB, but the table says 2049 MiB, size 2048 MiB") {
		t.Errorf("message %q", msg)
	}
}

// foreignGPT writes a GPT of someone else's (random disk GUID, a "data" partition) and lets
// the kernel know its partition.
func (h *fakeHost) foreignGPT() {
	l := gpt.Layout{SectorSize: 512, Sectors: 12 * gib / 512, DiskGUID: "5af06f18-dd3f-4b24-8f57-031b6e51cea7", Entries: []gpt.Entry{
		{Number: 1, TypeGUID: fsT, UUID: "0b3e3c9a-3c1b-4f59-9d8e-2b1f4c6a7d10", FirstLBA: 2048, LastLBA: 2048 + 100*mib/512 - 1, Name: "data"},
	}}
	ws, err := l.Writes()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, w := range ws {
		h.put(w.Offset, w.Data)
	}
	h.kernel[1] = gpt.Partition{Number: 1, StartBytes: mib, SizeBytes: 100 * mib}
	h.syncSysfs()
}

func TestReconcileWipesOnlyAGrantedDevice(t *testing.T) {
	h := newFakeHost(t)
	h.foreignGPT()
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("not granted: %s, ran %q", got, h.mutations())
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, `partition 1 "data"`) || !strings.Contains(msg, "a GPT Prism did not write (disk GUID 5af06f18") {
		t.Errorf("refusal %q", msg)
	}

	h.ran = nil
	res = h.reconcile(nodePlan(t, fast))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("granted: %s: %+v", got, res.Partitions)
	}
	m := h.mutations()
	if len(m) < 3 || !strings.HasPrefix(m[0], "partx --delete ") || !strings.HasPrefix(m[1], "wipefs --all --force ") || !strings.HasPrefix(m[2], "pwrite ") {
		t.Fatalf("granted: ran %q", m)
	}
	// wipefs and partx act on the device the hold (or a pin) has open, whose identity was
	// checked, never on a kernel name that may have moved on since (decision 0062).
	if len(h.byName) > 0 {
		t.Errorf("given the kernel name instead of the held device: %q", h.byName)
	}
	if h.table().ID != DiskGUID(fast) {
		t.Errorf("the new table's disk GUID is %s", h.table().ID)
	}
	// Once Prism's layout is there, the standing grant does nothing more.
	h.ran = nil
	res = h.reconcile(nodePlan(t, fast))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || len(h.mutations()) != 0 {
		t.Fatalf("after the wipe: %s, ran %q", got, h.mutations())
	}
}

func TestReconcileDeviceProblems(t *testing.T) {
	ctx := context.Background()
	h := newFakeHost(t)
	res := h.runner().Reconcile(ctx, nodePlan(t), nil, prismv1.ModeApply)
	if got := states(res.Partitions); got != "Pending,Pending,Pending,Pending" || !strings.Contains(res.Partitions[0].Message, "not in this node's inventory") {
		t.Fatalf("missing device: %s %q", got, res.Partitions[0].Message)
	}

	// A probe that fails fails the observation: nothing is written.
	h.fail["wipefs --no-act"] = &hostexec.ExitError{ExitCode: 1, Stderr: "wipefs: error: /dev/nvme0n1: probing initialization failed: Permission denied"}
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || !strings.Contains(res.Partitions[0].Message, "cannot be proven empty") || len(h.mutations()) != 0 {
		t.Fatalf("probe failing: %s %q, ran %q", got, res.Partitions[0].Message, h.mutations())
	}
	delete(h.fail, "wipefs --no-act")
	h.fail["blkid --probe --output export --offset"] = errors.New("blkid: killed")
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || len(h.mutations()) != 0 {
		t.Fatalf("range probe failing: %s %q, ran %q", got, res.Partitions[0].Message, h.mutations())
	}
	delete(h.fail, "blkid --probe --output export --offset")

	devs := h.inventory()
	devs[0].Path = "/dev/../etc/passwd"
	h.ran = nil
	res = h.runner().Reconcile(ctx, nodePlan(t), devs, prismv1.ModeApply)
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.ran) != 0 {
		t.Fatalf("bad path: %s, ran %q", got, h.ran)
	}

	// No udevadm: the settle step is skipped, the partitions are still Ready.
	h.fail["udevadm"] = fmt.Errorf("running udevadm: %w", &exec.Error{Name: "udevadm", Err: exec.ErrNotFound})
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("without udevadm: %s: %+v", got, res.Partitions)
	}
	if Reconcile(ctx, h, h.root, nil, h.inventory(), prismv1.ModeApply) != nil {
		t.Fatal("no plan: want no statuses")
	}
	// The package-level Reconcile insists on a block device: a regular file (a fixture host,
	// or a --host-root without the host's /dev) is refused before any command runs.
	h.ran = nil
	got := Reconcile(ctx, h, h.root, nodePlan(t), h.inventory(), prismv1.ModeApply)
	if states(got) != "Refused,Refused,Refused,Refused" || !strings.Contains(got[0].Message, "not a block device") || len(h.ran) != 0 {
		t.Fatalf("regular file: %+v, ran %q", got, h.ran)
	}
	// The by-id link points elsewhere than the inventory said: wait, touch nothing.
	if err := os.MkdirAll(filepath.Join(h.root, "dev", "disk", "by-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../nvme7n1", filepath.Join(h.root, fast)); err != nil {
		t.Fatal(err)
	}
	res = h.reconcile(nodePlan(t))
	if states(res.Partitions) != "Pending,Pending,Pending,Pending" || !strings.Contains(res.Partitions[0].Message, "now points to ../../nvme7n1") || len(h.ran) != 0 {
		t.Fatalf("renamed device: %+v, ran %q", res.Partitions, h.ran)
	}
	if !errors.Is(h.fail["udevadm"], exec.ErrNotFound) {
		t.Fatal("test setup: the udevadm error must wrap exec.ErrNotFound like hostexec.Local's")
	}
}

// An old OSD's BlueStore label (and its 1 GiB replica) where slot 2 goes: the device as a
// whole shows no signature, but slot 2's range is not empty. A device without a table is then
// not proven empty and is refused whole; on Prism's own table slot 2 is refused alone. With a
// grant, the range is cleared and slot 2 made.
func TestReconcileStaleLabelWhereAPartitionGoes(t *testing.T) {
	h := newFakeHost(t)
	p2 := testPlan(t).Slots[1].Partition
	label := []byte("bluestore block device\n2f7a2c3e-0000-4000-8000-000000000000\n")
	for _, off := range []int64{p2.StartBytes, p2.StartBytes + gib} {
		h.put(off, label)
	}
	region := func() []signature.Signature {
		f, err := os.Open(h.devPath())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sigs, err := signature.Detect(io.NewSectionReader(f, p2.StartBytes, p2.SizeBytes), p2.SizeBytes)
		if err != nil {
			t.Fatal(err)
		}
		return sigs
	}
	if len(region()) == 0 {
		t.Fatal("the stale label is not detected before provisioning: the test would prove nothing")
	}
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.mutations()) != 0 {
		t.Fatalf("no table: states %s, ran %q", got, h.mutations())
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, "the range of partition 2") || !strings.Contains(msg, "holds ceph_bluestore") || !strings.Contains(msg, "allowWipe") {
		t.Errorf("refusal %q", msg)
	}

	// Prism's table with slot 1 only, written before the label was there (the first table
	// needs the whole device zero at every sample), then the plan for all four.
	one := nodePlan(t)
	one.FastDevices[0].Slots, one.FastDevices[0].Cache = one.FastDevices[0].Slots[:1], nil
	for _, off := range []int64{p2.StartBytes, p2.StartBytes + gib} {
		h.put(off, make([]byte, len(label)))
	}
	if got := states(h.reconcile(one).Partitions); got != "Ready" {
		t.Fatalf("slot 1 alone: %s", got)
	}
	for _, off := range []int64{p2.StartBytes, p2.StartBytes + gib} {
		h.put(off, label)
	}
	res = h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Ready,Refused,Ready,Ready" {
		t.Fatalf("on Prism's table: states %s: %+v", got, res.Partitions)
	}
	if len(region()) == 0 {
		t.Fatal("the label was destroyed without a grant")
	}
	res = h.reconcile(nodePlan(t, fast))
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("granted: states %s: %+v", got, res.Partitions)
	}
	if sigs := region(); len(sigs) != 0 {
		t.Errorf("partition 2 still shows %+v", sigs)
	}
}

// A Prism partition that holds what Prism's OSD would never write (a file system) is not
// Ready, and the device is not extended while it does.
func TestReconcileForeignDataInsideAPrismPartition(t *testing.T) {
	h := newFakeHost(t)
	short := nodePlan(t)
	short.FastDevices[0].Cache = nil
	if got := states(h.reconcile(short).Partitions); got != "Ready,Ready,Ready" {
		t.Fatalf("setup: %s", got)
	}
	p1 := testPlan(t).Slots[0].Partition
	h.put(p1.StartBytes, []byte("XFSB\x00\x00\x10\x00")) // an XFS superblock's magic and block size
	h.ran = nil
	res := h.reconcile(nodePlan(t)) // the plan now adds the cache partition
	if got := states(res.Partitions); got != "Refused,Ready,Ready,Refused" {
		t.Fatalf("states %s: %+v", got, res.Partitions)
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, "holds xfs") {
		t.Errorf("partition 1: %q", msg)
	}
	if msg := res.Partitions[3].Message; !strings.Contains(msg, "not extended") {
		t.Errorf("partition 4: %q", msg)
	}
	if m := h.mutations(); len(m) != 0 {
		t.Fatalf("ran %q", m)
	}
	if _, ok := h.table().Partition(4); ok {
		t.Fatal("the device was extended")
	}
}

// blkid --probe exits 2, its "nothing found", also when it could not probe the device: it
// then says why on stderr ("blkid: error: <device>: ..."). That proves nothing empty: the
// observation fails and nothing is written. Before, exit 2 was taken as "nothing found"
// whatever blkid said, and the partitioner wrote the table.
func TestReconcileBlkidThatCouldNotProbeWritesNothing(t *testing.T) {
	h := newFakeHost(t)
	h.fail["blkid --probe"] = &hostexec.ExitError{Argv: []string{"blkid", "--probe"}, ExitCode: 2, Stderr: "blkid: error: " + h.devPath() + ": Input/output error"}
	res := h.reconcile(nodePlan(t))
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || res.Changed {
		t.Fatalf("with blkid failing to probe: %s changed %t: %+v", got, res.Changed, res.Partitions)
	}
	if m := h.mutations(); len(m) != 0 {
		t.Fatalf("with blkid failing to probe the partitioner ran %q", m)
	}
	if !strings.Contains(res.Partitions[0].Message, "Input/output error") {
		t.Errorf("message %q", res.Partitions[0].Message)
	}
	// The same exit without a word on stderr is blkid's "nothing found".
	delete(h.fail, "blkid --probe")
	if got := states(h.reconcile(nodePlan(t)).Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("after blkid recovered: %s", got)
	}
}

func last(argv []string) string { return argv[len(argv)-1] }

// A loop device bound to a partition of a granted device (losetup /dev/nvme0n1p1, with a file
// system mounted from the loop device) is a user of that partition that no holder list, no
// process's descriptors and no exclusive open shows: no grant lets Prism wipe the device
// under it. Nor is a loop device that cannot be asked taken for none.
func TestReconcileDoesNotWipeUnderALoopDevice(t *testing.T) {
	h := newFakeHost(t)
	h.foreignGPT()
	r := h.runner()
	r.loopBackings = func() ([]sysfs.LoopBacking, error) {
		return []sysfs.LoopBacking{{Loop: "loop6", Backing: 0}, {Loop: "loop7", Backing: unix.Mkdev(259, 1)}}, nil
	}
	res := r.Reconcile(context.Background(), nodePlan(t, fast), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("granted, partition 1 under loop7: %s, ran %q", got, h.mutations())
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, "partition 1 by loop7 (a loop device on it)") {
		t.Errorf("refusal %q does not name loop7", msg)
	}

	r.loopBackings = func() ([]sysfs.LoopBacking, error) {
		return nil, errors.New("asking loop7 what backs it: permission denied")
	}
	res = r.Reconcile(context.Background(), nodePlan(t, fast), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("loop devices unknown: %s, ran %q", got, h.mutations())
	}
}
