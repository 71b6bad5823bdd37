//go:build linux

package provision

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prism-storage/prism/test/support/loopdevs"
	"golang.org/x/sys/unix"

	"k8s.io/apimachinery/pkg/api/resource"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/internal/plan"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// The type GUIDs the partitions must carry, written out here rather than taken from
	// internal/host/gpt, so that the test checks the package instead of trusting it.
	cephBlockDB = "30cd0809-c2b2-499c-8879-2d6b78529876"
	linuxFS     = "0fc63daf-8483-4772-8e79-3d69d8477de4"

	quick = 30 * time.Second
	apt   = 5 * time.Minute
)

var logOnce sync.Once

// env is what every case needs: the tools and a directory for backing files.
type env struct {
	ctx   context.Context
	tools map[string]string
	dir   string
	tag   string // makes this run's stable paths unique
	proc  procfs.Proc
}

func setup(t *testing.T) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to attach loop devices and partition them (running as euid %d); run: sudo go test ./test/provision/ -count=1 -v", os.Geteuid())
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver on this machine: %v", err)
	}
	// The runner logs through controller-runtime; keep it quiet (the test logs the commands).
	logOnce.Do(func() { logf.SetLogger(zap.New(zap.WriteTo(io.Discard))) })
	ctx := t.Context()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return &env{
		ctx:   ctx,
		tools: ensureTools(ctx, t, "losetup", "sfdisk", "sgdisk", "wipefs", "partx", "blkid", "mkfs.ext4", "mount", "umount"),
		dir:   t.TempDir(),
		tag:   hex.EncodeToString(b),
		proc:  loopdevs.HostProc(t),
	}
}

// loop is an attached loop device with the stable path the test gives it (there is no udev
// here, so no /dev/disk/by-id link: the test's device list maps the path to the loop).
type loop struct {
	dev, name, file, stablePath string
	sectorSize                  int64
	size                        int64
}

func (e *env) attach(t *testing.T, role string, size int64, sectorSize int64) *loop {
	t.Helper()
	file := filepath.Join(e.dir, role+".img")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(size) // sparse
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { detachAll(t, e.tools["losetup"], e.tools["partx"], file) })
	args := []string{"--find", "--show"}
	if sectorSize != 512 {
		args = append(args, "--sector-size", strconv.FormatInt(sectorSize, 10))
	}
	dev := strings.TrimSpace(mustRun(e.ctx, t, e.tools["losetup"], append(args, file)...))
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup printed %q", dev)
	}
	// On a loop device without partscan, partitions added with partx outlive losetup -d: a
	// reused loop can come with its last user's partitions. They point into our new file, so
	// drop them (Prism itself would refuse the device: the kernel lists partitions that the
	// table lacks).
	stale, err := loopdevs.DropStalePartitions(e.ctx, e.tools["partx"], dev)
	if len(stale) > 0 {
		t.Logf("%s came with stale kernel partitions %v; removed them", dev, stale)
	}
	if err != nil {
		t.Fatal(err)
	}
	l := &loop{dev: dev, name: filepath.Base(dev), file: file, sectorSize: sectorSize, size: size,
		stablePath: "/dev/disk/by-id/prism-test-" + e.tag + "-" + role}
	if _, err := os.Lstat(l.stablePath); err == nil {
		t.Fatalf("test setup: %s exists on this machine", l.stablePath)
	}
	t.Logf("%s: %s (%d GiB, %d-byte sectors) as %s", role, dev, size/gib, sectorSize, l.stablePath)
	return l
}

// kernelPartitions lists the partitions the kernel has for a disk (sysfs).
func kernelPartitions(t *testing.T, name string) []string {
	t.Helper()
	parts, err := loopdevs.KernelPartitions(name)
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

// detachAll detaches every loop device backed by file, even if losetup's output was lost,
// after removing its kernel partitions (losetup -d leaves them on a loop without partscan,
// and the next user of the loop would inherit them).
func detachAll(t *testing.T, losetup, partx, file string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // t.Context() is done
	defer cancel()
	out, err := exec.CommandContext(ctx, losetup, "--list", "--noheadings", "--output", "NAME", "--associated", file).Output()
	if err != nil {
		t.Errorf("cleanup: finding the loop devices of %s: %v", file, err)
		return
	}
	for _, dev := range strings.Fields(string(out)) {
		_ = exec.CommandContext(ctx, partx, "--delete", dev).Run() // exits 1 when there are none
		for attempt := 1; ; attempt++ {
			err := exec.CommandContext(ctx, losetup, "-d", dev).Run()
			if err == nil {
				break
			}
			if attempt == 10 {
				t.Errorf("cleanup: could not detach %s (backing %s): %v", dev, file, err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// devices is the node's real inventory (inventory.Take over this machine's block devices,
// loops included), with the test's stable paths on the test's loops.
func (e *env) devices(t *testing.T, loops ...*loop) []prismv1.Device {
	t.Helper()
	rep, err := inventory.Take(e.ctx, inventory.Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []prismv1.Device
	for _, l := range loops {
		i := slices.IndexFunc(rep.Devices, func(d prismv1.Device) bool { return d.Name == l.name })
		if i < 0 {
			t.Fatalf("%s is not in the inventory", l.name)
		}
		d := rep.Devices[i]
		d.StablePath = l.stablePath
		if d.Path != l.dev || int64(d.LogicalBlockSizeBytes) != l.sectorSize || d.SizeBytes != l.size {
			t.Fatalf("inventory of %s: path %s, %d-byte sectors, %d bytes", l.name, d.Path, d.LogicalBlockSizeBytes, d.SizeBytes)
		}
		out = append(out, d)
	}
	return out
}

// fastPlan plans, with internal/plan, three 2 GiB DB slots and a cache on fast, for three
// capacity devices (which need not exist: the plan only needs their sizes).
func fastPlan(t *testing.T, fast *loop, wipe bool) *prismv1.NodePlan {
	t.Helper()
	sel := prismv1.NodeSelection{Node: "test", Fast: []prismv1.SelectedDevice{{Name: fast.name, StablePath: fast.stablePath, SizeBytes: fast.size}}}
	devs := []prismv1.Device{{Name: fast.name, StablePath: fast.stablePath, SizeBytes: fast.size}}
	for i := range 3 {
		p := fmt.Sprintf("/dev/disk/by-id/prism-test-qlc-%d", i)
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
		devs = append(devs, prismv1.Device{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
	}
	spec := &prismv1.HybridStoragePolicySpec{
		Mode:  prismv1.ModeApply,
		DB:    prismv1.DBSizing{Size: resource.NewQuantity(2*gib, resource.BinarySI)},
		Cache: prismv1.CacheSpec{Mode: prismv1.CacheWriteThrough},
	}
	if wipe {
		spec.AllowWipe = []prismv1.WipeGrant{{Node: "test", Path: fast.stablePath}}
	}
	l := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devs, Spec: spec})
	if len(l.Problems) > 0 || len(l.Plan.FastDevices) != 1 {
		t.Fatalf("planner: problems %v, plan %+v", l.Problems, l.Plan)
	}
	fd := l.Plan.FastDevices[0]
	if len(fd.Slots) != 3 || fd.Cache == nil {
		t.Fatalf("plan: want 3 slots and a cache, got %+v", fd)
	}
	return &l.Plan
}

// recorder runs the real executor and remembers every argv, and every write the
// partitioner makes to a device itself (as "pwrite <bytes>@<offset>").
type recorder struct {
	mu   sync.Mutex
	argv [][]string
	// tearAt, when positive, makes the tearAt-th device write (counting from 1) write only
	// its first half and fail, as a crash in the middle of it would leave the device.
	tearAt, nWrites int
}

func (r *recorder) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	rec := slices.Clone(argv)
	// A held descriptor (hostexec.HeldPath) is recorded as "held:" and the device it reaches.
	if i := len(rec) - 1; i > 0 && strings.HasPrefix(rec[i], fmt.Sprintf("/proc/%d/fd/", os.Getpid())) {
		if target, err := os.Readlink(rec[i]); err == nil {
			rec[i] = "held:" + target
		}
	}
	r.mu.Lock()
	r.argv = append(r.argv, rec)
	r.mu.Unlock()
	return hostexec.Local{}.Run(ctx, argv, stdin)
}

// open is the runner's device opener: the real one, with every write recorded (and torn).
func (r *recorder) open(path string, exclusive bool) (hostexec.Device, error) {
	d, err := hostexec.OpenDevice(path, exclusive)
	if err != nil {
		return nil, err
	}
	return &recordedDevice{Device: d, r: r}, nil
}

type recordedDevice struct {
	hostexec.Device
	r *recorder
}

func (d *recordedDevice) WriteAt(b []byte, off int64) (int, error) {
	d.r.mu.Lock()
	d.r.nWrites++
	n := d.r.nWrites
	d.r.argv = append(d.r.argv, []string{"pwrite", fmt.Sprintf("%d@%d", len(b), off)})
	d.r.mu.Unlock()
	if n == d.r.tearAt {
		m, _ := d.Device.WriteAt(b[:len(b)/2], off)
		_ = d.Device.Sync()
		return m, errors.New("torn write (test)")
	}
	return d.Device.WriteAt(b, off)
}

// reads are the commands that only read: the partitioner's observations and cross-check.
func isRead(a []string) bool {
	return len(a) >= 2 && (a[0] == "sfdisk" && a[1] == "--json" || a[0] == "wipefs" && a[1] == "--no-act" || a[0] == "blkid" && a[1] == "--probe")
}

// writes are the commands and device writes other than reads.
func (r *recorder) writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []string
	for _, a := range r.argv {
		if !isRead(a) {
			w = append(w, strings.Join(a, " "))
		}
	}
	return w
}

func (r *recorder) reset() { r.mu.Lock(); r.argv, r.nWrites = nil, 0; r.mu.Unlock() }

func reconcile(e *env, rec *recorder, p *prismv1.NodePlan, devs []prismv1.Device, mode prismv1.PolicyMode, limit int) provision.Result {
	return provision.Runner{Exec: rec, Open: rec.open, HostRoot: "/", StepLimit: limit, Proc: e.proc}.Reconcile(e.ctx, p, devs, mode)
}

func wantStates(t *testing.T, what string, got []prismv1.PartitionStatus, state prismv1.PartitionState, msg string) {
	t.Helper()
	if len(got) != 4 {
		t.Fatalf("%s: %d partition statuses, want 4: %+v", what, len(got), got)
	}
	for _, p := range got {
		if p.State != state || !strings.Contains(p.Message, msg) {
			t.Fatalf("%s: partition %d is %s %q, want %s with %q", what, p.Number, p.State, p.Message, state, msg)
		}
		if p.Path != prismv1.PartitionPath(p.Device, p.Number) {
			t.Errorf("%s: partition %d path %q", what, p.Number, p.Path)
		}
	}
}

// sfdiskTable is sfdisk --json decoded by the test itself, not by internal/host/gpt.
type sfdiskTable struct {
	PartitionTable struct {
		Label      string `json:"label"`
		SectorSize int64  `json:"sectorsize"`
		Partitions []struct {
			Node  string `json:"node"`
			Start int64  `json:"start"`
			Size  int64  `json:"size"`
			Type  string `json:"type"`
			Name  string `json:"name"`
		} `json:"partitions"`
	} `json:"partitiontable"`
}

// layout is a partition table reduced to what the plan fixes (no random GUIDs).
type layout []string

func readLayout(e *env, t *testing.T, l *loop) (layout, sfdiskTable) {
	t.Helper()
	var tab sfdiskTable
	raw, err := run(e.ctx, e.tools["sfdisk"], "--json", l.dev)
	if err != nil && strings.Contains(err.Error(), "does not contain a recognized partition table") {
		return nil, tab
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &tab); err != nil {
		t.Fatal(err)
	}
	var out layout
	for _, p := range tab.PartitionTable.Partitions {
		out = append(out, fmt.Sprintf("%s start=%d size=%d type=%s name=%s", p.Node, p.Start, p.Size, strings.ToLower(p.Type), p.Name))
	}
	return out, tab
}

// verifyLayout checks with sfdisk, blkid -p and sysfs that the device holds exactly the
// planned partitions, numbers, offsets, sizes, names and types, and nothing else.
func verifyLayout(e *env, t *testing.T, l *loop, p *prismv1.NodePlan) layout {
	t.Helper()
	type want struct {
		number            int32
		label, typ        string
		startBytes, bytes int64
	}
	fd := p.FastDevices[0]
	var wants []want
	for _, s := range fd.Slots {
		wants = append(wants, want{s.Partition.Number, s.Partition.Label, cephBlockDB, s.Partition.StartBytes, s.Partition.SizeBytes})
	}
	wants = append(wants, want{fd.Cache.Number, fd.Cache.Label, linuxFS, fd.Cache.StartBytes, fd.Cache.SizeBytes})

	got, tab := readLayout(e, t, l)
	if tab.PartitionTable.Label != "gpt" || tab.PartitionTable.SectorSize != l.sectorSize || len(tab.PartitionTable.Partitions) != len(wants) {
		t.Fatalf("%s: sfdisk says %s with %d-byte sectors and %d partitions, want gpt, %d, %d:\n%s",
			l.dev, tab.PartitionTable.Label, tab.PartitionTable.SectorSize, len(tab.PartitionTable.Partitions), l.sectorSize, len(wants), strings.Join(got, "\n"))
	}
	ss := l.sectorSize
	for i, w := range wants {
		sp := tab.PartitionTable.Partitions[i]
		node := fmt.Sprintf("%sp%d", l.dev, w.number)
		if sp.Node != node || sp.Start*ss != w.startBytes || sp.Size*ss != w.bytes || !strings.EqualFold(sp.Type, w.typ) || sp.Name != w.label {
			t.Errorf("sfdisk: %+v, want %s at %d bytes, %d bytes, type %s, name %s", sp, node, w.startBytes, w.bytes, w.typ, w.label)
		}
		// blkid's low-level probe of the partition node (offsets in 512-byte units).
		b := blkid(e, t, node)
		for k, v := range map[string]string{
			"PART_ENTRY_SCHEME": "gpt", "PART_ENTRY_NAME": w.label, "PART_ENTRY_TYPE": w.typ,
			"PART_ENTRY_NUMBER": strconv.Itoa(int(w.number)), "PART_ENTRY_OFFSET": strconv.FormatInt(w.startBytes/512, 10),
			"PART_ENTRY_SIZE": strconv.FormatInt(w.bytes/512, 10),
		} {
			if b[k] != v {
				t.Errorf("blkid -p %s: %s=%q, want %q", node, k, b[k], v)
			}
		}
		// The kernel's own record of the partition.
		sys := filepath.Join("/sys/class/block", filepath.Base(node))
		if start, size := readSysInt(t, sys, "start"), readSysInt(t, sys, "size"); start*512 != w.startBytes || size*512 != w.bytes {
			t.Errorf("kernel: %s at %d, %d sectors of 512; want %d, %d bytes", node, start, size, w.startBytes, w.bytes)
		}
	}
	// The whole device: a GPT and nothing else.
	if whole := blkid(e, t, l.dev); whole["PTTYPE"] != "gpt" || whole["TYPE"] != "" {
		t.Errorf("blkid -p %s: %v, want only PTTYPE=gpt", l.dev, whole)
	}
	return got
}

func blkid(e *env, t *testing.T, dev string) map[string]string {
	t.Helper()
	out, err := run(e.ctx, e.tools["blkid"], "-p", "-o", "export", dev)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return map[string]string{} // nothing found
	} else if err != nil {
		t.Fatalf("blkid -p %s: %v", dev, err)
	}
	kv := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// digest is the first and last MiB of a device: what a refusal must leave alone.
func digest(t *testing.T, l *loop) string {
	t.Helper()
	f, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	for _, off := range []int64{0, l.size - mib} {
		if _, err := io.Copy(h, io.NewSectionReader(f, off, mib)); err != nil {
			t.Fatal(err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestProvisionEmptyDeviceThenIdempotent(t *testing.T) {
	e := setup(t)
	for _, ss := range []int64{512, 4096} {
		t.Run(fmt.Sprintf("%d-byte sectors", ss), func(t *testing.T) {
			fast := e.attach(t, fmt.Sprintf("fast-%d", ss), 12*gib, ss)
			p := fastPlan(t, fast, false)
			rec := &recorder{}

			// DryRun first: reports, touches nothing.
			before := digest(t, fast)
			res := reconcile(e, rec, p, e.devices(t, fast), prismv1.ModeDryRun, 0)
			wantStates(t, "dry run", res.Partitions, prismv1.PartitionPending, "dry run")
			if w := rec.writes(); len(w) != 0 || digest(t, fast) != before {
				t.Fatalf("dry run changed the device or ran %q", w)
			}

			rec.reset()
			res = reconcile(e, rec, p, e.devices(t, fast), prismv1.ModeApply, 0)
			wantStates(t, "apply", res.Partitions, prismv1.PartitionReady, "")
			t.Logf("apply ran:\n  %s", strings.Join(rec.writes(), "\n  "))
			// Five writes of the table (backup entries and header, primary entries and
			// header, protective MBR), then the kernel is told.
			if w := rec.writes(); len(w) != 7 || !strings.HasPrefix(w[0], "pwrite 16384@") || w[4] != fmt.Sprintf("pwrite %d@0", ss) || !strings.HasPrefix(w[5], "partx --update --nr 1:4 ") {
				t.Errorf("apply ran %q", w)
			}
			final := verifyLayout(e, t, fast, p)

			// Twice more, each from a fresh inventory: only reads, same table, same bytes.
			for i := range 2 {
				rec.reset()
				head := digest(t, fast)
				res = reconcile(e, rec, p, e.devices(t, fast), prismv1.ModeApply, 0)
				wantStates(t, "again", res.Partitions, prismv1.PartitionReady, "")
				if w := rec.writes(); len(w) != 0 || res.Changed {
					t.Fatalf("run %d after the layout exists ran %q (changed %t), want only reads", i+2, w, res.Changed)
				}
				if got, _ := readLayout(e, t, fast); !slices.Equal(got, final) || digest(t, fast) != head {
					t.Fatalf("run %d changed the device", i+2)
				}
			}
			for _, a := range rec.argv {
				if !isRead(a) || a[len(a)-1] != fast.dev {
					t.Fatalf("idempotent run ran %q", a)
				}
			}
		})
	}
}

// A crash in the middle of any of the partitioner's writes (the k-th write is torn: half of
// it reaches the device) leaves a device from which the next Reconcile makes exactly the
// layout of an uninterrupted run. (test/crash kills the real binary at every write instead.)
func TestProvisionResumesAfterACrash(t *testing.T) {
	e := setup(t)
	ref := e.attach(t, "reference", 12*gib, 512)
	p := fastPlan(t, ref, false)
	rec := &recorder{}
	wantStates(t, "reference", reconcile(e, rec, p, e.devices(t, ref), prismv1.ModeApply, 0).Partitions, prismv1.PartitionReady, "")
	want := verifyLayout(e, t, ref, p)
	strip := func(l layout, dev string) layout {
		out := slices.Clone(l)
		for i := range out {
			out[i] = strings.Replace(out[i], dev, "DEV", 1)
		}
		return out
	}
	total := rec.nWrites
	if total != 5 {
		t.Fatalf("an uninterrupted run made %d device writes, want 5", total)
	}

	for k := 1; k <= total; k++ {
		t.Run(fmt.Sprintf("write %d torn", k), func(t *testing.T) {
			l := e.attach(t, fmt.Sprintf("crash-%d", k), 12*gib, 512)
			// The plan names the device by stable path: re-plan for this loop.
			pk := fastPlan(t, l, false)
			rec := &recorder{tearAt: k}
			res := reconcile(e, rec, pk, e.devices(t, l), prismv1.ModeApply, 0)
			t.Logf("before the crash: %q", rec.writes())
			for _, s := range res.Partitions {
				if s.State == prismv1.PartitionReady {
					t.Fatalf("interrupted run reports %+v", s)
				}
			}

			rec = &recorder{}
			res = reconcile(e, rec, pk, e.devices(t, l), prismv1.ModeApply, 0)
			wantStates(t, "resumed", res.Partitions, prismv1.PartitionReady, "")
			t.Logf("resumed with: %q", rec.writes())
			got := verifyLayout(e, t, l, pk)
			if !slices.Equal(strip(got, l.dev), strip(want, ref.dev)) {
				t.Fatalf("after resuming:\n%s\nwant (uninterrupted):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestProvisionRefusesDevicesHoldingData(t *testing.T) {
	e := setup(t)

	ext4 := e.attach(t, "ext4", 12*gib, 512)
	mustRun(e.ctx, t, e.tools["mkfs.ext4"], "-F", "-q", ext4.dev)

	foreign := e.attach(t, "foreign", 12*gib, 512)
	mustRun(e.ctx, t, e.tools["sgdisk"], "--new=1:0:+100M", "--change-name=1:data", "--typecode=1:8300", foreign.dev)
	mustRun(e.ctx, t, e.tools["partx"], "--update", foreign.dev)

	for _, tc := range []struct {
		l    *loop
		want []string
	}{
		{ext4, []string{"ext4 at byte 1080 (libblkid)", "ext4 (Filesystem) at byte 1080 (Prism's detector)", "allowWipe"}}, // the superblock magic
		{foreign, []string{`foreign partition 1 "data"`, "allowWipe"}},
	} {
		p := fastPlan(t, tc.l, false)
		before := digest(t, tc.l)
		beforeTable, _ := readLayout(e, t, tc.l)
		rec := &recorder{}
		for _, mode := range []prismv1.PolicyMode{prismv1.ModeApply, prismv1.ModeDryRun} {
			res := reconcile(e, rec, p, e.devices(t, tc.l), mode, 0)
			wantStates(t, tc.l.dev, res.Partitions, prismv1.PartitionRefused, tc.want[0])
			for _, w := range tc.want {
				if !strings.Contains(res.Partitions[0].Message, w) {
					t.Errorf("%s: refusal %q does not mention %q", tc.l.dev, res.Partitions[0].Message, w)
				}
			}
		}
		t.Logf("%s refused: %s", tc.l.dev, rec.argv)
		if w := rec.writes(); len(w) != 0 {
			t.Errorf("%s: a refused device saw %q", tc.l.dev, w)
		}
		if after := digest(t, tc.l); after != before {
			t.Errorf("%s: first/last MiB changed (sha256 %s -> %s)", tc.l.dev, before, after)
		}
		if afterTable, _ := readLayout(e, t, tc.l); !slices.Equal(afterTable, beforeTable) {
			t.Errorf("%s: table changed: %q -> %q", tc.l.dev, beforeTable, afterTable)
		}
	}
	if b := blkid(e, t, ext4.dev); b["TYPE"] != "ext4" {
		t.Errorf("ext4 loop after the refusal: blkid %v", b)
	}
}

func TestProvisionWipesOnlyWhenGranted(t *testing.T) {
	e := setup(t)

	ext4 := e.attach(t, "wipe-ext4", 12*gib, 512)
	mustRun(e.ctx, t, e.tools["mkfs.ext4"], "-F", "-q", ext4.dev)

	// A foreign GPT the kernel knows (loopNp1): the wipe must make the kernel forget it.
	foreign := e.attach(t, "wipe-foreign", 12*gib, 512)
	mustRun(e.ctx, t, e.tools["sgdisk"], "--new=1:0:+100M", "--change-name=1:data", "--typecode=1:8300", foreign.dev)
	mustRun(e.ctx, t, e.tools["partx"], "--update", foreign.dev)

	for _, l := range []*loop{ext4, foreign} {
		p := fastPlan(t, l, true)
		if !slices.Contains(p.AllowWipe, l.stablePath) {
			t.Fatalf("plan allowWipe %v lacks %s", p.AllowWipe, l.stablePath)
		}
		rec := &recorder{}
		res := reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0)
		wantStates(t, "granted "+l.dev, res.Partitions, prismv1.PartitionReady, "")
		w := rec.writes()
		t.Logf("%s wiped with: %q", l.dev, w)
		// Both on the device the exclusive hold has open, not on its name (decision 0062).
		if i := slices.Index(w, "wipefs --all --force held:"+l.dev); i < 0 || i > 1 || (i == 1 && w[0] != "partx --delete --nr 1:128 held:"+l.dev) {
			t.Fatalf("%s: ran %q, want wipefs first (after partx --delete when the kernel lists partitions), each on the held device", l.dev, w)
		}
		verifyLayout(e, t, l, p)

		// The grant stays in the plan; with Prism's layout in place it does nothing more.
		rec.reset()
		res = reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0)
		wantStates(t, "granted, again", res.Partitions, prismv1.PartitionReady, "")
		if w := rec.writes(); len(w) != 0 {
			t.Fatalf("%s: second run ran %q", l.dev, w)
		}
	}
}

// A granted device whose partition is mounted is not wiped: Prism sees the mount and refuses
// (and the kernel would refuse its exclusive open), and the filesystem and table are intact.
func TestProvisionDoesNotWipeAMountedDevice(t *testing.T) {
	e := setup(t)
	l := e.attach(t, "mounted", 12*gib, 512)
	mustRun(e.ctx, t, e.tools["sgdisk"], "--new=1:0:+100M", "--change-name=1:data", "--typecode=1:8300", l.dev)
	mustRun(e.ctx, t, e.tools["partx"], "--update", l.dev)
	part := l.dev + "p1"
	mustRun(e.ctx, t, e.tools["mkfs.ext4"], "-F", "-q", part)
	mnt := filepath.Join(e.dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := run(e.ctx, e.tools["mount"], part, mnt); err != nil {
		t.Skipf("cannot mount ext4 here (%v): the in-use case needs a mount", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), quick)
		defer cancel()
		if err := exec.CommandContext(ctx, e.tools["umount"], mnt).Run(); err != nil {
			t.Errorf("cleanup: umount %s: %v", mnt, err)
		}
	})
	if err := os.WriteFile(filepath.Join(mnt, "precious"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := readLayout(e, t, l)

	p := fastPlan(t, l, true)
	rec := &recorder{}
	res := reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0)
	wantStates(t, "mounted", res.Partitions, prismv1.PartitionRefused, "is mounted: "+filepath.Base(part)+" on "+mnt)
	if w := rec.writes(); len(w) != 0 {
		t.Fatalf("ran %q, want nothing but reads", w)
	}
	t.Logf("refused to wipe: %s", res.Partitions[0].Message)
	if after, _ := readLayout(e, t, l); !slices.Equal(after, before) {
		t.Fatalf("table changed: %q -> %q", before, after)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "precious")); err != nil || string(b) != "data" {
		t.Fatalf("the mounted file system lost data: %q, %v", b, err)
	}
}

// --- small helpers ---

func readSysInt(t *testing.T, dir, file string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func mustRun(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := run(ctx, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// debianPackage names the Debian 12 package of each tool.
var debianPackage = map[string]string{
	"losetup": "mount", "mount": "mount", "umount": "mount", "sfdisk": "fdisk", "sgdisk": "gdisk",
	"wipefs": "util-linux", "partx": "util-linux", "blkid": "util-linux", "mkfs.ext4": "e2fsprogs",
}

// ensureTools finds the tools, installing missing ones with apt-get (the test runs as root).
func ensureTools(ctx context.Context, t *testing.T, names ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	var missing, pkgs []string
	for _, n := range names {
		if p, ok := lookTool(n); ok {
			paths[n] = p
			continue
		}
		missing = append(missing, n)
		if pkg := debianPackage[n]; !slices.Contains(pkgs, pkg) {
			pkgs = append(pkgs, pkg)
		}
	}
	if len(missing) == 0 {
		return paths
	}
	aptGet, ok := lookTool("apt-get")
	if !ok {
		t.Skipf("missing %v (Debian packages %v) and no apt-get to install them", missing, pkgs)
	}
	t.Logf("installing %v for %v", pkgs, missing)
	actx, cancel := context.WithTimeout(ctx, apt)
	defer cancel()
	_ = exec.CommandContext(actx, aptGet, "update").Run()
	if out, err := exec.CommandContext(actx, aptGet, append([]string{"install", "-y", "--no-install-recommends"}, pkgs...)...).CombinedOutput(); err != nil {
		t.Fatalf("installing %v: %v\n%s", pkgs, err, out)
	}
	for _, n := range missing {
		p, ok := lookTool(n)
		if !ok {
			t.Fatalf("%s still missing after apt-get install %s", n, debianPackage[n])
		}
		paths[n] = p
	}
	return paths
}

// lookTool finds a tool in PATH or in the sbin directories a non-login root PATH may lack.
func lookTool(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// A device whose Prism partition is in use (held exclusively, as an OSD's device-mapper LV or a
// running cache holds it) cannot be held whole; the partitioner still adds the missing
// partitions when the refusal is proven to come from that partition (here: the other
// partition's exclusive open succeeds). A device held whole by someone else is refused and not
// written, and so is one whose only partition is held with nothing to prove by whom.
func TestProvisionBesidePartitionsInUse(t *testing.T) {
	e := setup(t)
	l := e.attach(t, "in-use", 12*gib, 512)
	full := fastPlan(t, l, false)
	first := fastPlan(t, l, false)
	first.FastDevices[0].Slots, first.FastDevices[0].Cache = first.FastDevices[0].Slots[:1], nil
	rec := &recorder{}
	if res := reconcile(e, rec, first, e.devices(t, l), prismv1.ModeApply, 0); states(res.Partitions) != "Ready" {
		t.Fatalf("slot 1 alone: %+v", res.Partitions)
	}
	// Its only partition held, by a program with no trace in sysfs or the mount table.
	only, err := os.OpenFile(l.dev+"p1", os.O_RDONLY|os.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	two := fastPlan(t, l, false)
	two.FastDevices[0].Slots, two.FastDevices[0].Cache = two.FastDevices[0].Slots[:2], nil
	res := reconcile(e, rec, two, e.devices(t, l), prismv1.ModeApply, 0)
	only.Close()
	if got := states(res.Partitions); got != "Ready,Failed" || !strings.Contains(res.Partitions[1].Message, "is in use") {
		t.Fatalf("the only partition held: %s %+v", got, res.Partitions)
	}
	if res := reconcile(e, rec, two, e.devices(t, l), prismv1.ModeApply, 0); states(res.Partitions) != "Ready,Ready" {
		t.Fatalf("slots 1 and 2: %+v", res.Partitions)
	}

	// Someone else holds the whole device: nothing is written.
	whole, err := os.OpenFile(l.dev, os.O_RDONLY|os.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	before := digest(t, l)
	rec.reset()
	res = reconcile(e, rec, full, e.devices(t, l), prismv1.ModeApply, 0)
	whole.Close()
	if got := states(res.Partitions); got != "Ready,Ready,Failed,Failed" || !strings.Contains(res.Partitions[2].Message, "is in use") {
		t.Fatalf("device held whole by another: %s %+v", got, res.Partitions)
	}
	if w := rec.writes(); len(w) != 0 || digest(t, l) != before {
		t.Fatalf("a device held by another was written: %q", w)
	}

	// Partition 1 in use, partition 2 not: the others are added beside them.
	part, err := os.OpenFile(l.dev+"p1", os.O_RDONLY|os.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Close()
	rec.reset()
	res = reconcile(e, rec, full, e.devices(t, l), prismv1.ModeApply, 0)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("beside partition 1 in use: %s %+v", got, res.Partitions)
	}
	verifyLayout(e, t, l, full)
}

func states(ps []prismv1.PartitionStatus) string {
	var s []string
	for _, p := range ps {
		s = append(s, string(p.State))
	}
	return strings.Join(s, ",")
}

// What someone writes through a partition's own device node is seen on the next pass, also
// while the whole device stays open (a partition in use by device-mapper, an OSD, a cache):
// the kernel keeps the whole device's page cache, which Prism and libblkid read through, apart
// from the partition's, and drops it only when the last opener closes. Seen in the e2e chain
// (2026-11-26): the agent read its own partition through a cache from before LVM wrote it.
func TestProvisionSeesWritesThroughAPartitionWhileTheDeviceIsOpen(t *testing.T) {
	e := setup(t)
	l := e.attach(t, "coherent", 12*gib, 512)
	p := fastPlan(t, l, false)
	rec := &recorder{}
	if res := reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0); states(res.Partitions) != "Ready,Ready,Ready,Ready" {
		t.Fatalf("first pass: %+v", res.Partitions)
	}
	held, err := os.OpenFile(l.dev+"p1", os.O_RDONLY|os.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// A pass while partition 1 is held reads partition 2's head through the whole device.
	if res := reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0); states(res.Partitions) != "Ready,Ready,Ready,Ready" {
		t.Fatalf("second pass: %+v", res.Partitions)
	}
	mustRun(e.ctx, t, e.tools["mkfs.ext4"], "-q", "-F", l.dev+"p2")
	res := reconcile(e, rec, p, e.devices(t, l), prismv1.ModeApply, 0)
	if got := states(res.Partitions); got != "Ready,Refused,Ready,Ready" || !strings.Contains(res.Partitions[1].Message, "ext4") {
		t.Fatalf("after mkfs.ext4 on partition 2: %s %+v", got, res.Partitions)
	}
}

// Without the kernel's view of the device (no /sys/class/block/<name> under the host root's
// sysfs: a device name that no longer matches, or a device gone), the device's
// holders and its partitions' holders and mounts cannot be read, so it cannot be proven
// unused: the partitioner fails the observation and writes nothing. Before, it went on with
// the inventory's holders and no partition view, and partitioned the device.
func TestProvisionWithoutTheKernelsViewWritesNothing(t *testing.T) {
	e := setup(t)
	fast := e.attach(t, "nosysfs", 12*gib, 512)
	var st unix.Stat_t
	if err := unix.Stat(fast.dev, &st); err != nil {
		t.Fatal(err)
	}
	// A host root with the device node and a sysfs without it (/sys/class/block lacks it: a
	// name that no longer matches, or a device gone). A root with no /sys/class/block at all
	// is a fixture tree (the demo), where the table alone is checked.
	root := t.TempDir()
	for _, d := range []string{"dev", "sys/class/block"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mknod(filepath.Join(root, "dev", fast.name), unix.S_IFBLK|0o600, int(st.Rdev)); err != nil {
		t.Fatal(err)
	}
	p := fastPlan(t, fast, false)
	before := digest(t, fast)
	rec := &recorder{}
	res := provision.Runner{Exec: rec, Open: rec.open, HostRoot: root, Proc: e.proc}.Reconcile(e.ctx, p, e.devices(t, fast), prismv1.ModeApply)
	wantStates(t, "no sysfs", res.Partitions, prismv1.PartitionFailed, "cannot be proven unused")
	if w := rec.writes(); len(w) != 0 || res.Changed {
		t.Errorf("without the kernel's view the partitioner ran %q (changed %t)", w, res.Changed)
	}
	if digest(t, fast) != before {
		t.Error("without the kernel's view the device changed")
	}
	t.Logf("refused: %s", res.Partitions[0].Message)
}
