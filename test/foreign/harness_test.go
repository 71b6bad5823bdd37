//go:build linux

package foreign

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prism-storage/prism/test/support/loopdevs"

	"k8s.io/apimachinery/pkg/api/resource"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/internal/plan"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// devSize is the smallest device internal/plan gives two 2 GiB DB slots and a cache:
	// 1 MiB for the primary GPT, 2 x 2 GiB, the 1 GiB cache minimum, 1 MiB for the backup
	// GPT. Every case uses it (sparse), so that the partitioner would partition the device
	// if it took it for empty; formats that cannot span it get a size on the mkfs argv.
	devSize = 5*gib + 2*mib
	// extSize fits three slots: for a plan of two slots that is then extended by a third.
	extSize  = 6*gib + 2*mib
	slotSize = 2 * gib

	quick = 30 * time.Second // one command
)

var logOnce sync.Once

// env is what every case needs: a directory for backing files and mount points, a tag that
// makes this run's names unique (a killed run may have left loops, mounts or VGs behind),
// and the known file that the image formats carry and the mounts must keep.
type env struct {
	ctx   context.Context
	dir   string
	tag   string
	src   string // directory with knownName, the source of the image formats
	known []byte // knownName's content
}

const knownName = "prism-known.bin"

func setup(t *testing.T) *env {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to attach, format and mount loop devices (running as euid %d); run: sudo go test ./test/foreign/ -count=1 -v", os.Geteuid())
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver on this machine: %v", err)
	}
	logOnce.Do(func() { logf.SetLogger(zap.New(zap.WriteTo(io.Discard))) })
	e := &env{ctx: t.Context(), dir: t.TempDir(), tag: randomHex(t, 4), known: randomBytes(t, 8192+17)}
	// The partitioner's own tools, and the ones every case uses: without them no case runs.
	for _, tool := range []string{"losetup", "blkid", "wipefs", "partx", "sfdisk", "sgdisk", "mount", "umount"} {
		e.tool(t, tool, "")
	}
	e.src = filepath.Join(e.dir, "src")
	if err := os.Mkdir(e.src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.src, knownName), e.known, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// basePackage is the Debian package of each tool the harness itself runs.
var basePackage = map[string]string{
	"losetup": "mount", "mount": "mount", "umount": "mount", "swapon": "mount", "swapoff": "mount",
	"blkid": "util-linux", "wipefs": "util-linux", "partx": "util-linux", "fsfreeze": "util-linux", "mkswap": "util-linux",
	"sfdisk": "fdisk", "sgdisk": "gdisk", "sync": "coreutils", "dmsetup": "dmsetup", "mkfs.ext4": "e2fsprogs",
}

// tool finds a command in PATH or the sbin directories a non-login root PATH may lack, and
// skips the test (naming the Debian package) when it is missing. pkg "" means basePackage.
func (e *env) tool(t *testing.T, name, pkg string) string {
	t.Helper()
	if p, ok := lookTool(name); ok {
		return p
	}
	if pkg == "" {
		pkg = basePackage[name]
	}
	t.Skipf("%s is missing: install the Debian package %s (hack/packages.txt lists it)", name, pkg)
	return ""
}

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

// run runs argv (argv[0] already resolved) with stdin, in the C locale, and returns stdout.
func run(ctx context.Context, stdin string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, quick)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LVM_SUPPRESS_FD_WARNINGS=1")
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func (e *env) must(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := run(e.ctx, "", argv...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cleanupRun is run for a t.Cleanup: t.Context() is done by then.
func cleanupRun(argv ...string) error {
	_, err := run(context.Background(), "", argv...)
	return err
}

// loop is an attached loop device on a sparse backing file.
type loop struct {
	dev, name, file string
	// stablePath is the name the plan gives the device. There is no udev here, so no
	// /dev/disk/by-id link: the inventory record is given this path, as test/provision does.
	stablePath string
	size       int64
}

func (e *env) attach(t *testing.T, role string, size int64) *loop {
	t.Helper()
	if size%mib != 0 {
		t.Fatalf("device size %d is not a whole number of MiB", size)
	}
	// Unique per call: a test may attach the same role more than once (subtests, variants).
	role = strings.NewReplacer("/", "-", " ", "-").Replace(role) + "-" + randomHex(t, 2)
	file := filepath.Join(e.dir, role+".img")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	losetup, partx := e.tool(t, "losetup", ""), e.tool(t, "partx", "")
	t.Cleanup(func() { detachAll(t, losetup, partx, file) })
	dev := strings.TrimSpace(e.must(t, losetup, "--find", "--show", file))
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup printed %q", dev)
	}
	l := &loop{dev: dev, name: filepath.Base(dev), file: file, size: size,
		stablePath: "/dev/disk/by-id/prism-test-" + e.tag + "-" + role}
	// A reused loop can come with the kernel partitions of its last user (partx-added
	// partitions outlive losetup -d on a loop without partscan); they would point into our file.
	stale, err := loopdevs.DropStalePartitions(e.ctx, partx, dev)
	if len(stale) > 0 {
		t.Logf("%s came with stale kernel partitions %v; removed them", dev, stale)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// detachAll detaches every loop device backed by file, after dropping its kernel partitions.
func detachAll(t *testing.T, losetup, partx, file string) {
	out, err := run(context.Background(), "", losetup, "--list", "--noheadings", "--output", "NAME", "--associated", file)
	if err != nil {
		t.Errorf("cleanup: finding the loop devices of %s: %v", file, err)
		return
	}
	for _, dev := range strings.Fields(out) {
		_ = cleanupRun(partx, "--delete", dev) // exits 1 when there are none
		for attempt := 1; ; attempt++ {
			err := cleanupRun(losetup, "-d", dev)
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

// kernelPartitions lists the partitions the kernel has for a disk (sysfs).
func kernelPartitions(t *testing.T, name string) []string {
	t.Helper()
	parts, err := loopdevs.KernelPartitions(name)
	if err != nil {
		t.Fatal(err)
	}
	return parts
}

// holders lists what the kernel stacks on a disk (dm, md, bcache), from sysfs.
func holders(t *testing.T, name string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("/sys/class/block", name, "holders"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// devices is the node's real inventory (inventory.Take over this machine, loops included),
// reduced to the test's loops, each with the test's stable path: what the agent hands the
// partitioner.
func (e *env) devices(t *testing.T, loops ...*loop) []prismv1.Device {
	t.Helper()
	rep, err := inventory.Take(e.ctx, inventory.Options{Host: sysfs.Host{Root: "/"}, IncludeLoop: true, SignatureReaders: 1})
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
		if d.Path != l.dev || d.SizeBytes != l.size {
			t.Fatalf("inventory of %s: path %s, %d bytes; want %s, %d", l.name, d.Path, d.SizeBytes, l.dev, l.size)
		}
		out = append(out, d)
	}
	return out
}

// planOpts shapes a plan made by internal/plan, as the operator makes it.
type planOpts struct {
	slots    int  // DB slots per fast device (one per capacity device)
	cache    bool // a cache partition after the slots
	grant    []*loop
	previous *prismv1.NodePlan
}

// planFor plans the fast loops with opts.slots 2 GiB DB slots each (for capacity devices that
// need not exist: the plan only needs their sizes) and, with opts.cache, a write-through
// cache on the rest. allowWipe lists opts.grant and nothing else.
func planFor(t *testing.T, opts planOpts, fast ...*loop) *prismv1.NodePlan {
	t.Helper()
	sel := prismv1.NodeSelection{Node: "test"}
	var devs []prismv1.Device
	for _, l := range fast {
		sel.Fast = append(sel.Fast, prismv1.SelectedDevice{Name: l.name, StablePath: l.stablePath, SizeBytes: l.size})
		devs = append(devs, prismv1.Device{Name: l.name, StablePath: l.stablePath, SizeBytes: l.size})
	}
	for i := range opts.slots * len(fast) {
		p := fmt.Sprintf("/dev/disk/by-id/prism-test-qlc-%d", i)
		sel.Capacity = append(sel.Capacity, prismv1.SelectedDevice{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
		devs = append(devs, prismv1.Device{Name: fmt.Sprintf("qlc%d", i), StablePath: p, SizeBytes: 100 * gib})
	}
	spec := &prismv1.HybridStoragePolicySpec{
		Mode:  prismv1.ModeApply,
		DB:    prismv1.DBSizing{Size: resource.NewQuantity(slotSize, resource.BinarySI)},
		Cache: prismv1.CacheSpec{Mode: prismv1.CacheNone},
	}
	if opts.cache {
		spec.Cache.Mode = prismv1.CacheWriteThrough
	}
	for _, l := range opts.grant {
		spec.AllowWipe = append(spec.AllowWipe, prismv1.WipeGrant{Node: "test", Path: l.stablePath})
	}
	out := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devs, Spec: spec, Previous: opts.previous})
	if len(out.Problems) > 0 || len(out.Plan.FastDevices) != len(fast) {
		t.Fatalf("planner: problems %v, plan %+v", out.Problems, out.Plan)
	}
	for _, fd := range out.Plan.FastDevices {
		if len(fd.Slots) != opts.slots || (fd.Cache != nil) != opts.cache {
			t.Fatalf("plan for %s: want %d slots (cache %t), got %+v", fd.StablePath, opts.slots, opts.cache, fd)
		}
	}
	if len(out.Plan.AllowWipe) != len(opts.grant) {
		t.Fatalf("plan allowWipe %v, want %d grants", out.Plan.AllowWipe, len(opts.grant))
	}
	return &out.Plan
}

// recorder runs the real host executor and remembers every argv, for failure messages.
type recorder struct {
	mu   sync.Mutex
	argv []string
}

func (r *recorder) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	r.mu.Lock()
	r.argv = append(r.argv, strings.Join(argv, " "))
	r.mu.Unlock()
	return hostexec.Local{}.Run(ctx, argv, stdin)
}

// writes are the commands the partitioner ran other than reading the table with sfdisk --json.
func (r *recorder) writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []string
	for _, a := range r.argv {
		if !strings.HasPrefix(a, "sfdisk --json ") {
			w = append(w, a)
		}
	}
	return w
}

// pass is one run of the agent's partitioner in Apply mode with a fresh inventory.
func (e *env) pass(t *testing.T, p *prismv1.NodePlan, loops ...*loop) (provision.Result, *recorder) {
	t.Helper()
	return e.passWith(t, p, e.devices(t, loops...))
}

// passWith is pass on a given inventory (one read before the host changed).
func (e *env) passWith(t *testing.T, p *prismv1.NodePlan, devs []prismv1.Device) (provision.Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	res := provision.Runner{Exec: rec, HostRoot: "/", Proc: loopdevs.HostProc(t)}.Reconcile(e.ctx, p, devs, prismv1.ModeApply)
	return res, rec
}

// statuses are the partition states of one device in a result.
func statuses(res provision.Result, l *loop) []prismv1.PartitionStatus {
	var out []prismv1.PartitionStatus
	for _, s := range res.Partitions {
		if s.Device == l.stablePath {
			out = append(out, s)
		}
	}
	return out
}

func planned(p *prismv1.NodePlan, l *loop) int {
	for _, fd := range p.FastDevices {
		if fd.StablePath == l.stablePath {
			return len(provision.Wanted(fd))
		}
	}
	return 0
}

// --- whole-device digests ---

// digest is a SHA-256 of every MiB of a device.
type digest []([sha256.Size]byte)

var zeroMiB = sha256.Sum256(make([]byte, mib))

// digest fsyncs the loop device (so that every write made through it, by any process, is in
// the backing file), maps the backing file's holes, and hashes each MiB: read through the
// device, or, for a MiB wholly inside a hole, as the zeros a hole reads as.
func (e *env) digest(t *testing.T, l *loop) digest {
	t.Helper()
	dev, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := dev.Sync(); err != nil {
		t.Fatalf("fsync %s: %v", l.dev, err)
	}
	data, err := dataExtents(l.file, l.size)
	if err != nil {
		t.Fatalf("mapping the holes of %s: %v", l.file, err)
	}
	out := make(digest, l.size/mib)
	buf := make([]byte, mib)
	for i := range out {
		lo, hi := int64(i)*mib, int64(i+1)*mib
		if !slices.ContainsFunc(data, func(x [2]int64) bool { return x[0] < hi && x[1] > lo }) {
			out[i] = zeroMiB
			continue
		}
		if _, err := dev.ReadAt(buf, lo); err != nil {
			t.Fatalf("reading %s at %d: %v", l.dev, lo, err)
		}
		out[i] = sha256.Sum256(buf)
	}
	return out
}

// fullDigest reads every MiB through the device (slow on big sparse loops; the self-check).
func fullDigest(t *testing.T, l *loop) digest {
	t.Helper()
	dev, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	out := make(digest, l.size/mib)
	buf := make([]byte, mib)
	for i := range out {
		if _, err := dev.ReadAt(buf, int64(i)*mib); err != nil {
			t.Fatal(err)
		}
		out[i] = sha256.Sum256(buf)
	}
	return out
}

// dataExtents lists the [start, end) ranges of file that are not holes (lseek SEEK_DATA and
// SEEK_HOLE, which see dirty page-cache data too).
func dataExtents(file string, size int64) ([][2]int64, error) {
	const seekData, seekHole = 3, 4
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][2]int64
	for off := int64(0); off < size; {
		start, err := f.Seek(off, seekData)
		if errors.Is(err, syscall.ENXIO) {
			break
		}
		if err != nil {
			return nil, err
		}
		end, err := f.Seek(start, seekHole)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]int64{start, end})
		off = end
	}
	return out, nil
}

// sum is the digest as one SHA-256 (of the per-MiB list), for logs.
func (d digest) sum() string {
	h := sha256.New()
	for _, c := range d {
		h.Write(c[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// diff says which MiB differ ("" when none).
func (d digest) diff(other digest) string {
	if len(d) != len(other) {
		return fmt.Sprintf("the device changed size: %d MiB -> %d MiB", len(d), len(other))
	}
	var changed []string
	n := 0
	for i := range d {
		if d[i] != other[i] {
			n++
			if len(changed) < 8 {
				what := ""
				if other[i] == zeroMiB {
					what = " (now zero)"
				}
				changed = append(changed, fmt.Sprintf("MiB %d%s", i, what))
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d MiB changed: %s", n, strings.Join(changed, ", "))
}

// --- what blkid says ---

// probe is blkid's low-level probe of a device (blkid -p -o export), empty when it finds nothing.
func (e *env) probe(t *testing.T, dev string) map[string]string {
	t.Helper()
	out, err := run(e.ctx, "", e.tool(t, "blkid", ""), "-p", "-o", "export", dev)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return map[string]string{}
	} else if err != nil {
		// blkid exits 8 on an ambivalent probe (two file systems): report what it printed.
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Logf("blkid -p %s: %v", dev, err)
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

// foundName is what a refusal must name: blkid's TYPE, or its PTTYPE for a bare partition
// table, or "" when blkid names nothing (then only Refused and unchanged bytes are required).
func foundName(kv map[string]string) string {
	if kv["TYPE"] != "" {
		return kv["TYPE"]
	}
	return kv["PTTYPE"]
}

// --- the rule ---

// refusesAndKeeps runs one pass of the partitioner on l (a plan without a grant for it) and
// checks the rule: every planned partition of l Refused, the message naming name (compared
// without case: blkid spells some TYPEs in capitals, LVM2_member, crypto_LUKS), no change
// to the device's bytes and none to the kernel's partitions of it. others are more devices
// of the plan, handed to the partitioner but not checked here.
func (e *env) refusesAndKeeps(t *testing.T, l *loop, p *prismv1.NodePlan, name string, others ...*loop) provision.Result {
	t.Helper()
	return e.keeps(t, l, p, nil, name, others...)
}

// keeps is refusesAndKeeps for the partitions numbered in refused only (all when nil): the
// others may be Ready (Prism's own, empty) but the device must not change.
func (e *env) keeps(t *testing.T, l *loop, p *prismv1.NodePlan, refused []int32, name string, others ...*loop) provision.Result {
	t.Helper()
	if slices.Contains(p.AllowWipe, l.stablePath) {
		t.Fatalf("test bug: the plan grants a wipe of %s", l.stablePath)
	}
	return e.keepsEvenGranted(t, l, p, refused, name, others...)
}

// keepsEvenGranted is keeps for a plan that may grant a wipe of l: for what no grant
// overrides (a user of the device), the device must be kept all the same.
func (e *env) keepsEvenGranted(t *testing.T, l *loop, p *prismv1.NodePlan, refused []int32, name string, others ...*loop) provision.Result {
	t.Helper()
	before, kernelBefore := e.digest(t, l), kernelPartitions(t, l.name)
	res, rec := e.pass(t, p, append([]*loop{l}, others...)...)
	after, kernelAfter := e.digest(t, l), kernelPartitions(t, l.name)
	got := statuses(res, l)
	if d := before.diff(after); d != "" {
		t.Errorf("DATA LOSS: the partitioner changed %s: %s; it ran %q", l.dev, d, rec.writes())
	}
	if !slices.Equal(kernelBefore, kernelAfter) {
		t.Errorf("the kernel's partitions of %s changed: %v -> %v", l.dev, kernelBefore, kernelAfter)
	}
	if n := planned(p, l); len(got) != n {
		t.Fatalf("%d partition statuses for %s, want %d: %+v", len(got), l.dev, n, got)
	}
	var states, msgs []string
	for _, s := range got {
		states = append(states, fmt.Sprintf("%d %s", s.Number, s.State))
		if s.Message != "" && !slices.Contains(msgs, s.Message) {
			msgs = append(msgs, s.Message)
		}
		switch {
		case refused != nil && !slices.Contains(refused, s.Number):
		case s.State != prismv1.PartitionRefused:
			t.Errorf("partition %d (%s) is %s (%q), want Refused", s.Number, s.Label, s.State, s.Message)
		case name != "" && !strings.Contains(strings.ToLower(s.Message), strings.ToLower(name)):
			t.Errorf("partition %d is Refused but the message does not name %q (what blkid -p found): %q", s.Number, name, s.Message)
		}
	}
	if t.Failed() {
		t.Logf("%s: digest %s -> %s; partitioner ran %q", l.dev, before.sum(), after.sum(), rec.writes())
	} else {
		t.Logf("%s kept, %d MiB unchanged (%s); %s: %q", l.dev, len(after), after.sum(), strings.Join(states, ", "), msgs)
	}
	return res
}

// --- small helpers ---

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func randomHex(t *testing.T, n int) string { return hex.EncodeToString(randomBytes(t, n)) }

// writeAt writes b at off through the device and syncs.
func writeAt(t *testing.T, l *loop, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(l.dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// readAt reads n bytes at off through the device.
func readAt(t *testing.T, l *loop, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

func isZero(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }
