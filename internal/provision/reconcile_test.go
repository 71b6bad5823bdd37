package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/gpt"
	"github.com/prism-storage/prism/internal/hostexec"
	"github.com/prism-storage/prism/internal/signature"
)

// fakeHost is a device and a kernel behind the executor: sfdisk, sgdisk, wipefs, partx and
// udevadm act on an in-memory partition table and kernel view, and the kernel view is
// mirrored into <root>/sys/class/block like the real sysfs. The device node is a sparse file
// under <root>/dev (all zeros: no signatures) so that signature detection reads something.
type fakeHost struct {
	t     *testing.T
	root  string
	name  string
	table gpt.Table
	// kernel is the kernel's partitions: number -> partition (start and size used).
	kernel map[int]gpt.Partition
	// fail makes the command whose argv starts with the key fail with the value.
	fail map[string]error
	// partxIgnores lists partitions partx "adds" without the kernel taking them (exit 0).
	partxIgnores []int
	ran          [][]string
}

func newFakeHost(t *testing.T) *fakeHost {
	h := &fakeHost{t: t, root: t.TempDir(), name: "nvme0n1", kernel: map[int]gpt.Partition{}, fail: map[string]error{}}
	if err := os.MkdirAll(filepath.Join(h.root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(h.root, "dev", h.name))
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

func (h *fakeHost) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	h.ran = append(h.ran, argv)
	for prefix, err := range h.fail {
		if strings.HasPrefix(strings.Join(argv, " "), prefix) {
			return nil, err
		}
	}
	if last := argv[len(argv)-1]; argv[0] != "udevadm" && last != h.devPath() {
		h.t.Errorf("%q: runs on %s, want the device under the host root %s", argv, last, h.devPath())
	}
	switch argv[0] + " " + argv[1] {
	case "sfdisk --json":
		if !h.table.HasTable() {
			return nil, &hostexec.ExitError{Argv: argv, ExitCode: 1, Stderr: "sfdisk: " + h.devPath() + ": " + gpt.NoTableMessage}
		}
		return h.render(), nil
	case "sgdisk --clear":
		h.table = gpt.Table{Label: gpt.LabelGPT, SectorSize: 512, FirstLBA: 34, LastLBA: 12*gib/512 - 34}
	case "sgdisk --zap-all", "wipefs --all":
		h.table = gpt.Table{}
	case "partx --update":
		hi, _ := strconv.Atoi(strings.TrimPrefix(argv[3], "1:"))
		for n := 1; n <= hi; n++ {
			if p, ok := h.table.Partition(n); ok && !slices.Contains(h.partxIgnores, n) {
				h.kernel[n] = p
			}
		}
	case "partx --delete":
		h.kernel = map[int]gpt.Partition{}
	case "udevadm settle":
	default:
		if argv[0] != "sgdisk" || !strings.HasPrefix(argv[1], "--new=") {
			h.t.Fatalf("unexpected command %q", argv)
		}
		var n int
		var start, end int64
		if _, err := fmt.Sscanf(argv[1], "--new=%d:%d:%d", &n, &start, &end); err != nil {
			h.t.Fatalf("%q: %v", argv, err)
		}
		if _, ok := h.table.Partition(n); ok {
			return nil, &hostexec.ExitError{Argv: argv, ExitCode: 4, Stderr: "Could not create partition " + strconv.Itoa(n)}
		}
		h.table.Partitions = append(h.table.Partitions, gpt.Partition{
			Number: n, StartBytes: start * 512, SizeBytes: (end - start + 1) * 512,
			Name:     strings.SplitN(argv[2], ":", 2)[1],
			TypeGUID: strings.SplitN(argv[3], ":", 2)[1],
		})
		slices.SortFunc(h.table.Partitions, func(a, b gpt.Partition) int { return a.Number - b.Number })
	}
	h.syncSysfs()
	return nil, nil
}

func (h *fakeHost) render() []byte {
	type part struct {
		Node  string `json:"node"`
		Start int64  `json:"start"`
		Size  int64  `json:"size"`
		Type  string `json:"type"`
		Name  string `json:"name"`
	}
	parts := []part{}
	for _, p := range h.table.Partitions {
		parts = append(parts, part{fmt.Sprintf("%sp%d", h.devPath(), p.Number), p.StartBytes / 512, p.SizeBytes / 512, strings.ToUpper(p.TypeGUID), p.Name})
	}
	b, _ := json.Marshal(map[string]any{"partitiontable": map[string]any{
		"label": h.table.Label, "unit": "sectors", "sectorsize": 512, "firstlba": h.table.FirstLBA, "lastlba": h.table.LastLBA, "partitions": parts,
	}})
	return b
}

func (h *fakeHost) syncSysfs() {
	dir := filepath.Join(h.root, "sys", "class", "block", h.name)
	if err := os.RemoveAll(dir); err != nil {
		h.t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
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
	}
}

// mutations are the commands run other than reads.
func (h *fakeHost) mutations() []string {
	var out []string
	for _, a := range h.ran {
		if a[0] != "sfdisk" {
			out = append(out, strings.Join(a, " "))
		}
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

func TestReconcileAppliesThenOnlyReads(t *testing.T) {
	h := newFakeHost(t)
	ctx := context.Background()
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || !res.Changed {
		t.Fatalf("first run: %s changed %t: %+v", got, res.Changed, res.Partitions)
	}
	host := func(s string) string { return strings.ReplaceAll(s, "/dev/nvme0n1", h.devPath()) }
	want := []string{host(clearCmd), host(new1), host(new2), host(new3), host(new4), host(reread), settle}
	if got := h.mutations(); !reflect.DeepEqual(got, want) {
		t.Fatalf("commands:\n got %q\nwant %q", got, want)
	}
	if len(h.table.Partitions) != 4 || len(h.kernel) != 4 {
		t.Fatalf("fake host after the run: table %+v kernel %+v", h.table, h.kernel)
	}

	h.ran = nil
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || res.Changed {
		t.Fatalf("second run: %s changed %t", got, res.Changed)
	}
	if len(h.mutations()) != 0 || len(h.ran) != 1 {
		t.Fatalf("second run ran %q, want only sfdisk --json", h.ran)
	}
}

func TestReconcileDryRunChangesNothing(t *testing.T) {
	for _, mode := range []prismv1.PolicyMode{prismv1.ModeDryRun, ""} {
		h := newFakeHost(t)
		res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), mode)
		if got := states(res.Partitions); got != "Pending,Pending,Pending,Pending" || res.Changed {
			t.Fatalf("mode %q: %s changed %t", mode, got, res.Changed)
		}
		for _, p := range res.Partitions {
			if !strings.HasPrefix(p.Message, "dry run") || !strings.Contains(p.Message, "sgdisk --new=") {
				t.Errorf("mode %q: message %q", mode, p.Message)
			}
		}
		if len(h.mutations()) != 0 {
			t.Fatalf("mode %q ran %q", mode, h.mutations())
		}
	}
}

// A crash after any number of steps leaves a state from which the next Reconcile finishes
// the same layout, without repeating a step that already took effect.
func TestReconcileResumesAfterACrashAtEveryStep(t *testing.T) {
	full := newFakeHost(t)
	Runner{Exec: full, HostRoot: full.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), full.inventory(), prismv1.ModeApply)
	for k := 1; k < 6; k++ { // 6 mutating steps: clear, 4 partitions, partx
		h := newFakeHost(t)
		res := Runner{Exec: h, HostRoot: h.root, StepLimit: k, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
		first := h.mutations()
		if len(first) != k {
			t.Fatalf("step limit %d ran %q", k, first)
		}
		for _, p := range res.Partitions {
			if p.State == prismv1.PartitionPending && !strings.Contains(p.Message, "step limit") {
				t.Errorf("k=%d: pending message %q", k, p.Message)
			}
		}
		h.ran = nil
		res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
		if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
			t.Fatalf("k=%d: after resuming %s: %+v", k, got, res.Partitions)
		}
		if !reflect.DeepEqual(h.table, full.table) {
			t.Fatalf("k=%d: table %+v, want %+v", k, h.table, full.table)
		}
		for _, cmd := range h.mutations() {
			if slices.Contains(first, cmd) && !strings.HasPrefix(cmd, "partx") && !strings.HasPrefix(cmd, "udevadm") {
				t.Errorf("k=%d: %q ran again after the crash", k, cmd)
			}
		}
	}
}

func TestReconcileReportsFailuresAndRecovers(t *testing.T) {
	h := newFakeHost(t)
	boom := &hostexec.ExitError{ExitCode: 4, Stderr: "Could not create partition 3 from 8390656 to 12584959"}
	h.fail["sgdisk --new=3:"] = boom
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || !res.Changed {
		t.Fatalf("with sgdisk failing: %s: %+v", got, res.Partitions)
	}
	if !strings.Contains(res.Partitions[2].Message, "CreatePartition 3 (prism-db-02) failed") || !strings.Contains(res.Partitions[2].Message, "Could not create partition 3") {
		t.Errorf("message %q", res.Partitions[2].Message)
	}
	if slices.ContainsFunc(h.mutations(), func(s string) bool { return strings.Contains(s, "--new=4:") }) {
		t.Error("a step ran after a failed one")
	}

	delete(h.fail, "sgdisk --new=3:")
	h.ran = nil
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("retry: %s: %+v", got, res.Partitions)
	}
	if m := h.mutations(); len(m) != 4 || !strings.Contains(m[0], "--new=3:") {
		t.Fatalf("retry ran %q, want partitions 3 and 4, partx, udevadm", m)
	}
}

// partx exits 0 when the kernel refuses a partition; the check against sysfs catches it.
func TestReconcileChecksTheKernelNotPartxExitCode(t *testing.T) {
	h := newFakeHost(t)
	h.partxIgnores = []int{4}
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Failed" {
		t.Fatalf("%s: %+v", got, res.Partitions)
	}
	if !strings.Contains(res.Partitions[3].Message, "kernel does not list it") {
		t.Errorf("message %q", res.Partitions[3].Message)
	}
	// Next time the kernel takes it: only partx runs.
	h.partxIgnores, h.ran = nil, nil
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || len(h.mutations()) != 2 || !strings.HasPrefix(h.mutations()[0], "partx --update") {
		t.Fatalf("%s after %q", got, h.mutations())
	}
}

// A kernel partition at another position than the table's is not "fixed" with partx, which
// would resize it in place if it is busy: the device is refused and nothing runs.
func TestReconcileRefusesAKernelPartitionThatDiffersFromTheTable(t *testing.T) {
	h := newFakeHost(t)
	Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	stale := h.kernel[2]
	stale.SizeBytes = gib
	h.kernel[2] = stale
	h.syncSysfs()
	h.ran = nil
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.mutations()) != 0 {
		t.Fatalf("%s after %q", got, h.mutations())
	}
	if msg := res.Partitions[0].Message; !strings.Contains(msg, "the kernel has nvme0n1p2 at 2049 MiB, size 1024 MiB, but the table says 2049 MiB, size 2048 MiB") {
		t.Errorf("message %q", msg)
	}
}

func TestReconcileWipesOnlyAGrantedDevice(t *testing.T) {
	foreign := gpt.Table{Label: gpt.LabelGPT, SectorSize: 512, FirstLBA: 34, LastLBA: 12*gib/512 - 34, Partitions: []gpt.Partition{
		{Number: 1, StartBytes: mib, SizeBytes: 100 * mib, Name: "data", TypeGUID: fsT},
	}}
	h := newFakeHost(t)
	h.table, h.kernel[1] = foreign, foreign.Partitions[0]
	h.syncSysfs()
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || res.Changed || len(h.mutations()) != 0 {
		t.Fatalf("not granted: %s, ran %q", got, h.mutations())
	}
	if !strings.Contains(res.Partitions[0].Message, `partition 1 "data"`) {
		t.Errorf("refusal %q", res.Partitions[0].Message)
	}

	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t, fast), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("granted: %s: %+v", got, res.Partitions)
	}
	if m := h.mutations(); len(m) < 3 || !strings.HasPrefix(m[0], "wipefs --all ") || !strings.HasPrefix(m[1], "sgdisk --zap-all ") || !strings.HasPrefix(m[2], "partx --delete ") {
		t.Fatalf("granted: ran %q", m)
	}
	// Once Prism's layout is there, the standing grant does nothing more.
	h.ran = nil
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t, fast), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" || len(h.mutations()) != 0 {
		t.Fatalf("after the wipe: %s, ran %q", got, h.mutations())
	}
}

func TestReconcileDeviceProblems(t *testing.T) {
	ctx := context.Background()
	h := newFakeHost(t)
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), nil, prismv1.ModeApply)
	if got := states(res.Partitions); got != "Pending,Pending,Pending,Pending" || !strings.Contains(res.Partitions[0].Message, "not in this node's inventory") {
		t.Fatalf("missing device: %s %q", got, res.Partitions[0].Message)
	}

	h.fail["sfdisk"] = &hostexec.ExitError{ExitCode: 1, Stderr: "sfdisk: cannot open /dev/nvme0n1: Permission denied"}
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Failed,Failed,Failed,Failed" || !strings.Contains(res.Partitions[0].Message, "Permission denied") || len(h.mutations()) != 0 {
		t.Fatalf("unreadable table: %s %q, ran %q", got, res.Partitions[0].Message, h.mutations())
	}
	delete(h.fail, "sfdisk")

	devs := h.inventory()
	devs[0].Path = "/dev/../etc/passwd"
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), devs, prismv1.ModeApply)
	if got := states(res.Partitions); got != "Refused,Refused,Refused,Refused" || len(h.ran) != 1 {
		t.Fatalf("bad path: %s, ran %q", got, h.ran)
	}

	// No udevadm: the settle step is skipped, the partitions are still Ready.
	h.fail["udevadm"] = fmt.Errorf("running udevadm: %w", &exec.Error{Name: "udevadm", Err: exec.ErrNotFound})
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), h.inventory(), prismv1.ModeApply)
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
	res = Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(ctx, nodePlan(t), h.inventory(), prismv1.ModeApply)
	if states(res.Partitions) != "Pending,Pending,Pending,Pending" || !strings.Contains(res.Partitions[0].Message, "now points to ../../nvme7n1") || len(h.ran) != 0 {
		t.Fatalf("renamed device: %+v, ran %q", res.Partitions, h.ran)
	}
	if !errors.Is(h.fail["udevadm"], exec.ErrNotFound) {
		t.Fatal("test setup: the udevadm error must wrap exec.ErrNotFound like hostexec.Local's")
	}
}

// TestReconcileClearsStaleLabelsInNewPartitions: a device whose table was zapped still
// carries an old OSD's BlueStore label (and its 1 GiB replica) where slot 2 now goes. The
// device as a whole shows no signature, so it is provisioned, and the new partition comes
// up without the label (ceph-volume would take it for an existing OSD).
func TestReconcileClearsStaleLabelsInNewPartitions(t *testing.T) {
	h := newFakeHost(t)
	fd := testPlan(t)
	p2 := fd.Slots[1].Partition
	label := []byte("bluestore block device\n2f7a2c3e-0000-4000-8000-000000000000\n")
	f, err := os.OpenFile(h.devPath(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{p2.StartBytes, p2.StartBytes + gib} {
		if _, err := f.WriteAt(label, off); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
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
	res := Runner{Exec: h, HostRoot: h.root, allowFiles: true}.Reconcile(context.Background(), nodePlan(t), h.inventory(), prismv1.ModeApply)
	if got := states(res.Partitions); got != "Ready,Ready,Ready,Ready" {
		t.Fatalf("states %s: %+v", got, res.Partitions)
	}
	if sigs := region(); len(sigs) != 0 {
		t.Errorf("partition 2 still shows %+v", sigs)
	}
}
