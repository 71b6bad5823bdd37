package cache

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/node/opencas"
)

const (
	stateEnv   = "CASADM_EMULATOR_STATE"
	releaseEnv = "CASADM_EMULATOR_RELEASE"
	nowEnv     = "CASADM_EMULATOR_NOW"
	part       = "/dev/disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE0000000000AAAA-part3"
	q1         = "/dev/disk/by-id/wwn-0x5000000000000001"
	q2         = "/dev/disk/by-id/wwn-0x5000000000000002"
)

// TestMain builds the emulator once and puts it first on PATH as "casadm".
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "casadm-emulator-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		bin := filepath.Join(dir, "casadm-emulator")
		build := exec.Command("go", "build", "-o", bin, "./cmd/casadm-emulator")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the emulator: %v\n%s", err, out)
			return 1
		}
		if err := os.Symlink(bin, filepath.Join(dir, "casadm")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		return m.Run()
	}()
	os.Exit(code)
}

// host is one emulated node: the emulator's state and the host root.
type host struct {
	t    *testing.T
	root string
}

// emulatorReleases are the format sets every emulator-backed test runs with: the agent parses
// both what users install (the v26.03.2 release) and open-cas-linux master
// (docs/decisions/0016-emulator-release-mode.md).
var emulatorReleases = []string{"master", "v26.03.2"}

// forEachRelease runs test once per format set, as a subtest named after it.
func forEachRelease(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	for _, rel := range emulatorReleases {
		t.Run(rel, func(t *testing.T) {
			t.Setenv(releaseEnv, rel)
			test(t)
		})
	}
}

func newHost(t *testing.T) *host {
	t.Helper()
	if os.Getenv(releaseEnv) == "" {
		t.Fatalf("%s is not set: run the test through forEachRelease so it covers every format set", releaseEnv)
	}
	t.Setenv(stateEnv, filepath.Join(t.TempDir(), "casadm-state.json"))
	h := &host{t: t, root: t.TempDir()}
	h.casadm("--emulator-add-device", "--device", part, "--size", strconv.Itoa(2<<30))
	h.casadm("--emulator-add-device", "--device", q1, "--size", strconv.Itoa(8<<30))
	h.casadm("--emulator-add-device", "--device", q2, "--size", strconv.Itoa(8<<30))
	return h
}

// casadm runs the emulator directly (test setup and independent checks).
func (h *host) casadm(args ...string) string {
	h.t.Helper()
	cmd := exec.Command("casadm", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("casadm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

func (h *host) stats(args ...string) casadm.Stats {
	h.t.Helper()
	s, err := casadm.ParseStats(strings.NewReader(h.casadm(append([]string{"-P", "-i", "1", "-o", "csv", "-b"}, args...)...)))
	if err != nil {
		h.t.Fatal(err)
	}
	return s[0]
}

// dump is the emulator's state, as the emulator keeps it.
type dump struct {
	LostDirtyBytes uint64
	Caches         []struct {
		ID     int
		Mode   string
		Blocks []struct {
			Core  int
			Dirty bool
		}
		Cores []struct {
			ID       int
			Device   string
			Inactive bool
		}
	}
}

func (h *host) dump() dump {
	h.t.Helper()
	var d dump
	if err := json.Unmarshal([]byte(h.casadm("--emulator-dump")), &d); err != nil {
		h.t.Fatal(err)
	}
	return d
}

func (h *host) io(core int, spec string, count int, extra ...string) {
	h.t.Helper()
	h.casadm(append([]string{"--emulator-io", "--cache-id", "1", "--core-id", strconv.Itoa(core), "--io", spec, "--count", strconv.Itoa(count)}, extra...)...)
}

// ioFails drives IO the emulator has to fail (a failed cache device): every request gets EIO.
func (h *host) ioFails(core int, spec string, count int) {
	h.t.Helper()
	cmd := exec.Command("casadm", "--emulator-io", "--cache-id", "1", "--core-id", strconv.Itoa(core), "--io", spec, "--count", strconv.Itoa(count))
	out, err := cmd.CombinedOutput()
	want := fmt.Sprintf("casadm-emulator: --emulator-io: %d of %d requests failed: Input/output error (the cache device failed)\n", count, count)
	if err == nil || string(out) != want {
		h.t.Fatalf("IO %s x%d on a failed cache: %v %q, want exit 1 %q", spec, count, err, out, want)
	}
}

// recorder wraps the real executor and keeps every argv.
type recorder struct {
	inner hostexec.Executor
	mu    sync.Mutex
	argv  [][]string
	// stdin, when set, replaces what an IO class load feeds casadm.
	stdin []byte
}

func (r *recorder) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	r.mu.Lock()
	r.argv = append(r.argv, slices.Clone(argv))
	if r.stdin != nil && len(argv) > 2 && argv[1] == "-C" && argv[2] == "-C" {
		stdin = r.stdin
	}
	r.mu.Unlock()
	return r.inner.Run(ctx, argv, stdin)
}

// readOnly says whether a casadm command only reads.
func readOnly(argv []string) bool {
	switch argv[1] {
	case "-L", "-P", "-G", "-V", "-H":
		return true
	case "-C":
		return argv[2] == "-L"
	}
	return false
}

func (r *recorder) mutating() []string {
	var out []string
	for _, a := range r.argv {
		if !readOnly(a) {
			out = append(out, strings.Join(a, " "))
		}
	}
	return out
}

// policyCSV is the default Ceph OSD ClassificationPolicy, compiled.
func policyCSV(t *testing.T) string {
	t.Helper()
	cfg, err := ioclass.Compile(&ioclass.DefaultCephOSD().Spec)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CSV()
}

func desired(t *testing.T) opencas.Desired {
	return opencas.Desired{
		CacheID: 1, Partition: part, PartitionScanned: true, Mode: prismv1.CacheWriteBack, LineSizeKiB: 4,
		Cores: []string{q1, q2}, IOClassCSV: policyCSV(t),
		Params: opencas.Params{
			CleaningPolicy: "alru", Alru: &opencas.AlruParams{WakeUpSeconds: opencas.Ptr(5), StaleBufferSeconds: opencas.Ptr(30)},
			PromotionPolicy: "nhit", Nhit: &opencas.NhitParams{Threshold: opencas.Ptr(5), TriggerPercent: opencas.Ptr(70)},
			SeqCutoff: &opencas.SeqCutoff{Policy: "never", ThresholdKiB: 4096},
		},
	}
}

func (h *host) reconcile(d opencas.Desired, exec hostexec.Executor) opencas.Result {
	h.t.Helper()
	if exec == nil {
		exec = hostexec.Local{}
	}
	return opencas.Reconcile(context.Background(), exec, h.root, d)
}

func mustOK(t *testing.T, res opencas.Result) {
	t.Helper()
	if res.Err != nil || len(res.Refusals) > 0 {
		t.Fatalf("reconcile: err %v, refusals %v", res.Err, res.Refusals)
	}
}

// fingerprint is the node as the emulator and the host root hold it: everything a
// reconcile sets, read independently of internal/node/opencas.
func (h *host) fingerprint() string {
	h.t.Helper()
	var b strings.Builder
	b.WriteString(h.casadm("-L", "-o", "csv", "-b"))
	if strings.Contains(b.String(), "No caches running") {
		return b.String()
	}
	b.WriteString(h.casadm("-C", "-L", "-i", "1", "-o", "csv"))
	for _, ns := range []string{"cleaning", "cleaning-alru", "promotion", "promotion-nhit"} {
		b.WriteString(h.casadm("-G", "-n", ns, "-i", "1", "-o", "csv"))
	}
	for _, core := range []string{"1", "2"} {
		b.WriteString(h.casadm("-G", "-n", "seq-cutoff", "-i", "1", "-j", core, "-o", "csv"))
	}
	for _, f := range []string{opencas.ConfPath, opencas.IOClassFilePath(1)} {
		data, err := os.ReadFile(filepath.Join(h.root, f))
		if err != nil {
			h.t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestBarePartition: an empty partition becomes a write-back cache with both QLC devices
// as cores, the policy's IO classes, the parameters and opencas.conf; a second run only
// reads.
func TestBarePartition(t *testing.T) { forEachRelease(t, testBarePartition) }

func testBarePartition(t *testing.T) {
	h := newHost(t)
	d := desired(t)
	res := h.reconcile(d, nil)
	mustOK(t, res)
	want := map[string]string{q1: "/dev/cas1-1", q2: "/dev/cas1-2"}
	if !mapsEqual(res.ExportedObjects, want) {
		t.Errorf("exported objects %v, want %v", res.ExportedObjects, want)
	}
	if res.Ran[0].Argv[len(res.Ran[0].Argv)-1] != "--force" {
		t.Errorf("first step %s", res.Ran[0])
	}

	list := h.casadm("-L", "-o", "csv", "-b")
	wantList := "type,id,disk,status,write policy,device\ncache,1," + part + ",Running,wb,-\n" +
		"core,1," + q1 + ",Active,-,/dev/cas1-1\ncore,2," + q2 + ",Active,-,/dev/cas1-2\n"
	if list != wantList {
		t.Errorf("casadm -L:\n%s", list)
	}
	cfg, _ := ioclass.ParseCSV(strings.NewReader(d.IOClassCSV))
	var wantClasses strings.Builder
	wantClasses.WriteString("IO class id,IO class name,Eviction priority,Allocation\n")
	for _, c := range cfg.Classes {
		prio := ""
		if c.Priority != nil {
			prio = strconv.Itoa(*c.Priority)
		}
		fmt.Fprintf(&wantClasses, "%d,%s,%s,%d.%02d\n", c.ID, c.Rule, prio, c.MaxSizePercent()/100, c.MaxSizePercent()%100)
	}
	if got := h.casadm("-C", "-L", "-i", "1", "-o", "csv"); got != wantClasses.String() {
		t.Errorf("IO classes:\n%s\nwant\n%s", got, wantClasses.String())
	}
	for args, want := range map[string]string{
		"-G -n cleaning -i 1 -o csv":        "Cleaning policy type,alru",
		"-G -n cleaning-alru -i 1 -o csv":   "Wake up time [s],5\nStale buffer time [s],30\nFlush max buffers,100",
		"-G -n promotion -i 1 -o csv":       "Promotion policy type,nhit",
		"-G -n promotion-nhit -i 1 -o csv":  "Insertion threshold,5\nPolicy trigger [%],70",
		"-G -n seq-cutoff -i 1 -j 2 -o csv": "Sequential cutoff threshold [KiB],4096\nSequential cutoff policy,never",
	} {
		if got := h.casadm(strings.Fields(args)...); !strings.Contains(got, want) {
			t.Errorf("casadm %s:\n%s", args, got)
		}
	}
	if s := h.stats(); s.Cache.LineSizeKiB != 4 || s.Cache.WritePolicy != "wb" {
		t.Errorf("cache conf %+v", *s.Cache)
	}

	conf, err := os.ReadFile(filepath.Join(h.root, opencas.ConfPath))
	if err != nil {
		t.Fatal(err)
	}
	c, err := opencas.ParseConf(string(conf))
	if err != nil {
		t.Fatalf("opencas.conf does not parse as opencas.py reads it: %v\n%s", err, conf)
	}
	if !strings.HasPrefix(string(conf), "version=") || len(c.Caches) != 1 || c.Caches[0].Device != part || c.Caches[0].Mode != "wb" ||
		len(c.Cores) != 2 || c.Cores[1].Device != q2 || c.Cores[1].CoreID != 2 {
		t.Errorf("opencas.conf:\n%s", conf)
	}
	ioFile := ""
	for _, p := range c.Caches[0].Params {
		if p.Key == "ioclass_file" {
			ioFile = p.Value
		}
	}
	if data, err := os.ReadFile(filepath.Join(h.root, ioFile)); err != nil || string(data) != d.IOClassCSV {
		t.Errorf("ioclass_file %q: %v %q", ioFile, err, data)
	}

	// Second run: nothing but reads.
	rec := &recorder{inner: hostexec.Local{}}
	again := h.reconcile(d, rec)
	mustOK(t, again)
	if m := rec.mutating(); len(m) > 0 || again.Changed {
		t.Errorf("second run changed things: %v", m)
	}
	if !mapsEqual(again.ExportedObjects, want) {
		t.Errorf("second run: exported objects %v", again.ExportedObjects)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestResumeAfterCrash: a crash after any number of steps, then a full run, ends in the
// state an uninterrupted run reaches; a further run only reads.
func TestResumeAfterCrash(t *testing.T) { forEachRelease(t, testResumeAfterCrash) }

func testResumeAfterCrash(t *testing.T) {
	ref := newHost(t)
	res := ref.reconcile(desired(t), nil)
	mustOK(t, res)
	want := ref.fingerprint()
	n := len(res.Ran)
	if n < 8 {
		t.Fatalf("only %d steps", n)
	}
	for limit := 1; limit < n; limit++ {
		t.Run(fmt.Sprintf("after_%d_steps", limit), func(t *testing.T) {
			h := newHost(t)
			first := opencas.Runner{Exec: hostexec.Local{}, HostRoot: h.root, StepLimit: limit}.Reconcile(context.Background(), desired(t))
			if first.Err != nil || !first.Stopped || len(first.Ran) != limit {
				t.Fatalf("crash run: err %v stopped %v ran %d", first.Err, first.Stopped, len(first.Ran))
			}
			mustOK(t, h.reconcile(desired(t), nil))
			if got := h.fingerprint(); got != want {
				t.Errorf("resumed state differs:\n%s\nwant\n%s", got, want)
			}
			rec := &recorder{inner: hostexec.Local{}}
			mustOK(t, h.reconcile(desired(t), rec))
			if m := rec.mutating(); len(m) > 0 {
				t.Errorf("third run: %v", m)
			}
		})
	}
}

// TestLeaveWriteBackFlushesFirst: dirty data in write-back, then the policy asks for
// write-through: the flush runs first (-Q ... -f yes), every dirty block reaches the cores,
// nothing is lost.
func TestLeaveWriteBackFlushesFirst(t *testing.T) { forEachRelease(t, testLeaveWriteBackFlushesFirst) }

func testLeaveWriteBackFlushesFirst(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	h.io(1, "size=4096,dir=write,comm=tp_osd_tp,lba=0", 200)
	h.io(2, "size=16384,dir=write,comm=tp_osd_tp,lba=0", 25)
	before := h.stats()
	dirty := before.Usage.Dirty.Value
	if dirty != 300 {
		t.Fatalf("%d dirty blocks, want 300", dirty)
	}
	// master counts the flush in its own row, v26.03.2 in "Writes to core(s)".
	written := before.Blocks.CoreWrites.Value + valueOf(before.Blocks.CleanerCoreWrites)

	d := desired(t)
	d.Mode = prismv1.CacheWriteThrough
	rec := &recorder{inner: hostexec.Local{}}
	mustOK(t, h.reconcile(d, rec))
	m := rec.mutating()
	if len(m) == 0 || m[0] != "casadm -Q -c wt -i 1 -f yes" {
		t.Fatalf("mutating commands %v: the flushing mode switch must come first", m)
	}
	after := h.stats()
	got := after.Blocks.CoreWrites.Value + valueOf(after.Blocks.CleanerCoreWrites)
	if after.Usage.Dirty.Value != 0 || got != written+dirty || after.Cache.WritePolicy != "wt" {
		t.Errorf("after: dirty %d, blocks written to the cores %d (want %d), mode %s",
			after.Usage.Dirty.Value, got, written+dirty, after.Cache.WritePolicy)
	}
	if lost := h.dump().LostDirtyBytes; lost != 0 {
		t.Errorf("%d dirty bytes lost", lost)
	}
	if !strings.Contains(string(mustRead(t, h.root, opencas.ConfPath)), "\t"+part+"\twt\t") {
		t.Error("opencas.conf keeps the old mode")
	}
}

func mustRead(t *testing.T, root, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRemoveCoreWithDirtyData: a core leaving the plan is flushed, then removed without
// -f; an inactive core's dirty data cannot be flushed, so its removal is refused unless
// allowDirtyDataLoss.
func TestRemoveCoreWithDirtyData(t *testing.T) { forEachRelease(t, testRemoveCoreWithDirtyData) }

func testRemoveCoreWithDirtyData(t *testing.T) {
	t.Run("active", func(t *testing.T) {
		h := newHost(t)
		mustOK(t, h.reconcile(desired(t), nil))
		h.io(2, "size=4096,dir=write,lba=0", 50)
		if dirty := h.stats("-j", "2").Usage.Dirty.Value; dirty != 50 {
			t.Fatalf("core 2 has %d dirty blocks", dirty)
		}
		d := desired(t)
		d.Cores = []string{q1}
		rec := &recorder{inner: hostexec.Local{}}
		mustOK(t, h.reconcile(d, rec))
		m := rec.mutating()
		if len(m) < 2 || m[0] != "casadm -F -i 1 -j 2" || m[1] != "casadm -R -i 1 -j 2" {
			t.Fatalf("mutating commands %v", m)
		}
		for _, a := range m {
			if strings.HasSuffix(a, " -f") {
				t.Errorf("forced: %s", a)
			}
		}
		// The emulator either writes a dirty line back or counts it lost; a removed core's
		// counters leave with it, so "nothing lost" is the proof the 50 blocks were written.
		st := h.dump()
		if len(st.Caches[0].Cores) != 1 || st.LostDirtyBytes != 0 || len(st.Caches[0].Blocks) != 0 {
			t.Errorf("after removal: %+v", st)
		}
	})
	t.Run("inactive", func(t *testing.T) {
		h := newHost(t)
		mustOK(t, h.reconcile(desired(t), nil))
		h.io(2, "size=4096,dir=write,lba=0", 50)
		h.casadm("--emulator-reboot")
		h.casadm("--emulator-remove-device", "--device", q2)
		d := desired(t)
		d.Cores = []string{q1}
		// The inventory reads Open CAS metadata on the partition after the reboot.
		d.Signatures = []prismv1.DeviceSignature{{Kind: prismv1.SignatureOpenCAS, Name: "open_cas"}}
		rec := &recorder{inner: hostexec.Local{}}
		res := h.reconcile(d, rec)
		if res.Err != nil || len(res.Refusals) != 1 || !strings.Contains(res.Refusals[0], "allowDirtyDataLoss") {
			t.Fatalf("err %v refusals %v", res.Err, res.Refusals)
		}
		if m := rec.mutating(); len(m) != 1 || m[0] != "casadm -S -d "+part+" -l" {
			t.Errorf("mutating commands %v: only the load", m)
		}
		if !strings.Contains(h.casadm("-L", "-o", "csv", "-b"), "core,2,"+q2+",Inactive,-,/dev/cas1-2") {
			t.Error("core 2 is not listed inactive")
		}
		if st := h.dump(); st.LostDirtyBytes != 0 {
			t.Errorf("lost %d", st.LostDirtyBytes)
		}
		d.AllowDirtyDataLoss = true
		rec = &recorder{inner: hostexec.Local{}}
		mustOK(t, h.reconcile(d, rec))
		if m := rec.mutating(); len(m) == 0 || m[0] != "casadm --remove-inactive -i 1 -j 2 -f" {
			t.Errorf("mutating commands %v", m)
		}
		if st := h.dump(); len(st.Caches[0].Cores) != 1 || st.LostDirtyBytes != 50*4096 {
			t.Errorf("after: %+v", st)
		}
	})
}

// TestCacheFailure: after the cache device fails, Reconcile reports the failure and the
// cores as CacheFailed, and runs nothing, even though the policy changed.
func TestCacheFailure(t *testing.T) { forEachRelease(t, testCacheFailure) }

func testCacheFailure(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	h.io(1, "size=4096,dir=write,lba=0", 20)
	h.casadm("--emulator-fail-cache", "1")
	h.ioFails(1, "size=4096,dir=write,lba=5000", 10)
	d := desired(t)
	d.Mode = prismv1.CacheWriteThrough
	d.Cores = []string{q1}
	rec := &recorder{inner: hostexec.Local{}}
	res := h.reconcile(d, rec)
	if res.Err != nil || len(res.Refusals) == 0 {
		t.Fatalf("err %v refusals %v", res.Err, res.Refusals)
	}
	if m := rec.mutating(); len(m) > 0 {
		t.Errorf("ran %v on a failed cache", m)
	}
	if len(res.Conditions) != 1 || res.Conditions[0].Type != opencas.ConditionCacheFailed {
		t.Errorf("conditions %+v", res.Conditions)
	}
	if len(res.Cores) != 2 {
		t.Fatalf("cores %+v", res.Cores)
	}
	for _, c := range res.Cores {
		if c.State != opencas.CoreCacheFailed || !strings.Contains(c.Message, "20 dirty") || !strings.Contains(c.Message, "Not running") {
			t.Errorf("core %+v", c)
		}
	}
	if len(res.ExportedObjects) != 0 {
		t.Errorf("exported objects offered on a failed cache: %v", res.ExportedObjects)
	}
	s := h.stats()
	if s.Requests.PassThroughWrites.Value != 0 || s.Errors.CacheWrite.Value != 10 || s.Usage.Dirty.Value != 20 || s.Cache.Status.State != casadm.StateNotRunning {
		t.Errorf("emulator: pt writes %d, cache write errors %d, dirty %d, status %s",
			s.Requests.PassThroughWrites.Value, s.Errors.CacheWrite.Value, s.Usage.Dirty.Value, s.Cache.Status)
	}
}

// TestIOClassErrorsSurface: classes casadm would refuse are refused before casadm runs,
// with casadm's own message; and when casadm itself refuses a load, its message is the
// step's error and the cache keeps its previous classes.
func TestIOClassErrorsSurface(t *testing.T) { forEachRelease(t, testIOClassErrorsSurface) }

func testIOClassErrorsSurface(t *testing.T) {
	h := newHost(t)
	d := desired(t)
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,metadata&done,0,0.125\n"
	rec := &recorder{inner: hostexec.Local{}}
	res := h.reconcile(d, rec)
	if len(res.Refusals) != 1 || !strings.Contains(res.Refusals[0], "Cannot parse configuration file - error in line 3 in column 4 (Allocation).") {
		t.Errorf("refusals %v", res.Refusals)
	}
	if m := rec.mutating(); len(m) > 0 {
		t.Errorf("ran %v", m)
	}

	mustOK(t, h.reconcile(desired(t), nil))
	before := h.casadm("-C", "-L", "-i", "1", "-o", "csv")
	d = desired(t)
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,request_size:le:4096&done,1,1\n"
	// A casadm (or kernel) that disagrees with Prism's model: it gets a rule it refuses.
	rec = &recorder{inner: hostexec.Local{}, stdin: []byte("IO class id,IO class name,Eviction priority,Allocation\n1,request_size:xx:5&done,1,1\n")}
	res = h.reconcile(d, rec)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "Invalid classification rule syntax") {
		t.Errorf("err %v", res.Err)
	}
	if after := h.casadm("-C", "-L", "-i", "1", "-o", "csv"); after != before {
		t.Errorf("a refused load changed the classes:\n%s", after)
	}
	// And a file casadm's parser refuses: its exact output is in the error.
	rec.stdin = []byte("IO class id,IO class name,Eviction priority\n0,unclassified,22\n")
	res = h.reconcile(d, rec)
	want := "Cannot parse configuration file - missing column \"Allocation\".\nFailed to parse I/O classes configuration file header. It is either malformed or missing.\nPlease consult Admin Guide to check how columns in configuration file should be named."
	if res.Err == nil || !strings.Contains(res.Err.Error(), want) {
		t.Errorf("err %v", res.Err)
	}
}

// TestAlphaBeta: α and β from the emulator's statistics after known IO equal the values
// worked out by hand.
func TestAlphaBeta(t *testing.T) { forEachRelease(t, testAlphaBeta) }

func testAlphaBeta(t *testing.T) {
	h := newHost(t)
	d := desired(t)
	d.IOClassCSV = "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n" +
		"1,request_size:ge:1048576&done,255,0\n2,io_direction:write&done,1,1\n"
	mustOK(t, h.reconcile(d, nil))
	// Class 1 (allocation 0): 10 writes of 1 MiB, passed through: 2560 blocks to the core.
	h.io(1, "size=1048576,dir=write,lba=1000000", 10)
	// Class 2: 100 overwrites of one 4 KiB block on core 1, 50 new blocks on core 2.
	h.io(1, "size=4096,dir=write,lba=0", 100, "--stride", "0")
	h.io(2, "size=4096,dir=write,lba=0", 50)

	stats, err := opencas.Stats(context.Background(), hostexec.Local{})
	if err != nil {
		t.Fatal(err)
	}
	// Exported writes 2560 + 150; QLC writes 2560 (write-back keeps class 2 in the cache).
	alpha, ok := opencas.Alpha(stats)
	if want := 1 - 2560.0/2710.0; !ok || math.Abs(alpha-want) > 1e-12 {
		t.Errorf("alpha %v, want %v", alpha, want)
	}
	beta := map[int]opencas.ClassBeta{}
	for _, b := range opencas.Beta(stats) {
		beta[b.ClassID] = b
	}
	if b := beta[2]; !b.Defined || b.Writes != 150 || b.Occupancy != 51 || math.Abs(b.Beta-150.0/51.0) > 1e-12 {
		t.Errorf("class 2: %+v", b)
	}
	if b := beta[1]; b.Defined || b.Writes != 2560 || b.Occupancy != 0 {
		t.Errorf("class 1: %+v", b)
	}
	// A flush writes the 51 dirty blocks back: they reach the QLC devices now.
	h.casadm("-F", "-i", "1")
	stats, err = opencas.Stats(context.Background(), hostexec.Local{})
	if err != nil {
		t.Fatal(err)
	}
	alpha, _ = opencas.Alpha(stats)
	if want := 1 - 2611.0/2710.0; math.Abs(alpha-want) > 1e-12 {
		t.Errorf("alpha after flush %v, want %v", alpha, want)
	}
	if a := opencas.Absorbed(stats); a.ExportedWrites != 2710 || a.QLCWrites != 2611 {
		t.Errorf("absorption %+v", a)
	}
}

// TestModeNone: a policy that turns the cache off stops it (flushing) after removing it
// from opencas.conf; the metadata left behind is loaded, not overwritten, if the cache is
// turned back on.
func TestModeNone(t *testing.T) { forEachRelease(t, testModeNone) }

func testModeNone(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	h.io(1, "size=4096,dir=write,lba=0", 30)
	d := desired(t)
	d.Mode = prismv1.CacheNone
	rec := &recorder{inner: hostexec.Local{}}
	mustOK(t, h.reconcile(d, rec))
	if m := rec.mutating(); len(m) != 1 || m[0] != "casadm -T -i 1" {
		t.Errorf("mutating commands %v", m)
	}
	if out := h.casadm("-L", "-o", "csv"); out != "No caches running\n" {
		t.Errorf("after: %s", out)
	}
	c, err := opencas.ParseConf(string(mustRead(t, h.root, opencas.ConfPath)))
	if err != nil || len(c.Caches) != 0 || len(c.Cores) != 0 {
		t.Errorf("conf keeps the cache: %+v %v", c, err)
	}
	if st := h.dump(); st.LostDirtyBytes != 0 {
		t.Errorf("lost %d", st.LostDirtyBytes)
	}
	// Back on: the partition now carries Open CAS metadata; Prism loads it.
	d = desired(t)
	d.Signatures = []prismv1.DeviceSignature{{Kind: prismv1.SignatureOpenCAS, Name: "open_cas"}}
	rec = &recorder{inner: hostexec.Local{}}
	mustOK(t, h.reconcile(d, rec))
	if m := rec.mutating(); len(m) == 0 || m[0] != "casadm -S -d "+part+" -l" {
		t.Errorf("mutating commands %v", m)
	}
	for _, a := range rec.mutating() {
		if strings.Contains(a, "--force") {
			t.Errorf("forced start over metadata: %s", a)
		}
	}
	if s := h.stats(); s.Usage.Occupancy.Value != 30 {
		t.Errorf("the loaded cache lost its lines: %d", s.Usage.Occupancy.Value)
	}
}

// TestExecutorErrorsCarryCasadmOutput: a failing casadm's stderr reaches the error.
func TestExecutorErrorsCarryCasadmOutput(t *testing.T) {
	forEachRelease(t, testExecutorErrorsCarryCasadmOutput)
}

func testExecutorErrorsCarryCasadmOutput(t *testing.T) {
	newHost(t)
	_, err := hostexec.Local{}.Run(context.Background(), []string{"casadm", "-S", "-d", "/dev/nvme0n1p3"}, nil)
	var ee *hostexec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode != 1 || !strings.Contains(ee.Stderr, "Error during options handling") {
		t.Errorf("%v", err)
	}
}
