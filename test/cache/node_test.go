package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/opencas"
)

const fastDevice = "/dev/disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE0000000000AAAA"

// nodePlan is a plan as the operator writes it: one fast device with two DB slots (q1, q2)
// and the cache partition 3.
func nodePlan(t *testing.T, mode prismv1.CacheMode) *prismv1.NodePlan {
	return &prismv1.NodePlan{
		FastDevices: []prismv1.FastDevicePlan{{
			StablePath: fastDevice, SlotSizeBytes: 2 << 30, CacheID: 1,
			Slots: []prismv1.DBSlot{
				{Index: 0, Partition: prismv1.PlannedPartition{Number: 1, Label: "prism-db-0"}, DataDevice: q1},
				{Index: 1, Partition: prismv1.PlannedPartition{Number: 2, Label: "prism-db-1"}, DataDevice: q2},
			},
			Cache: &prismv1.PlannedPartition{Number: 3, Label: "prism-cache", StartBytes: 4<<30 + 1<<20, SizeBytes: 2 << 30},
		}},
		Cache: &prismv1.NodeCachePlan{Mode: mode, LineSizeKiB: 4, IOClassCSV: policyCSV(t),
			CacheSettings: prismv1.CacheSettings{Cleaning: &prismv1.CacheCleaning{Policy: prismv1.CleaningAcp}, DirtyData: prismv1.DirtyDataPreserve}},
	}
}

// partitions is the provisioning result that reports the cache partition (part) Ready.
var partitions = []prismv1.PartitionStatus{
	{Device: fastDevice, Number: 1, Label: "prism-db-0", Path: fastDevice + "-part1", State: prismv1.PartitionReady},
	{Device: fastDevice, Number: 2, Label: "prism-db-1", Path: fastDevice + "-part2", State: prismv1.PartitionReady},
	{Device: fastDevice, Number: 3, Label: "prism-cache", Path: part, State: prismv1.PartitionReady},
}

// zeroPartition puts an empty cache partition under the host root, where the agent scans it.
func (h *host) zeroPartition() {
	h.t.Helper()
	path := filepath.Join(h.root, part)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// TestNodeFromPlan: the agent's node-level pass takes a plan and the provisioning result to
// a running cache; a capacity device holding BlueStore is refused as a core and left alone;
// DryRun changes nothing; a second pass only reads; the statistics land in the status.
func TestNodeFromPlan(t *testing.T) { forEachRelease(t, testNodeFromPlan) }

func testNodeFromPlan(t *testing.T) {
	h := newHost(t)
	h.zeroPartition()
	devices := []prismv1.Device{
		{Name: "sda", StablePath: q1},
		{Name: "sdb", StablePath: q2, Signatures: []prismv1.DeviceSignature{{Kind: prismv1.SignatureCephBlueStore, Name: "ceph_bluestore"}}},
	}
	rec := &recorder{inner: hostexec.Local{}}
	r := opencas.Runner{Exec: rec, HostRoot: h.root}
	ctx := context.Background()
	p := nodePlan(t, prismv1.CacheWriteBack)

	dry := r.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeDryRun)
	if len(rec.mutating()) != 0 || dry.Changed {
		t.Fatalf("DryRun ran %v", rec.mutating())
	}
	if len(dry.Caches) != 1 || dry.Caches[0].State != prismv1.CachePending || !strings.HasPrefix(dry.Caches[0].Message, "dry run:") {
		t.Fatalf("DryRun status: %+v", dry.Caches)
	}
	if !strings.Contains(h.casadm("-L", "-o", "csv"), "No caches running") {
		t.Fatal("DryRun started a cache")
	}

	res := r.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply)
	if !res.Changed || len(res.Caches) != 1 {
		t.Fatalf("apply: %+v", res)
	}
	st := res.Caches[0]
	if st.CacheID != 1 || len(st.Cores) != 2 || st.Cores[0].State != prismv1.CoreReady || st.Cores[0].ExportedObject != "/dev/cas1-1" ||
		st.Cores[1].State != prismv1.CoreRefused || st.State != prismv1.CachePending {
		t.Fatalf("status after apply: %+v", st)
	}
	// The emulator's own view: one cache on the partition with q1 only, acp cleaning.
	list := h.casadm("-L", "-o", "csv", "-b")
	if !strings.Contains(list, "cache,1,"+part+",Running,wb") || !strings.Contains(list, "core,1,"+q1+",Active") || strings.Contains(list, q2) {
		t.Fatalf("casadm -L:\n%s", list)
	}
	if got := h.casadm("-G", "-n", "cleaning", "-i", "1", "-o", "csv"); !strings.Contains(got, "acp") {
		t.Errorf("cleaning: %s", got)
	}
	conf, err := os.ReadFile(filepath.Join(h.root, opencas.ConfPath))
	if err != nil || !strings.Contains(string(conf), part) || strings.Contains(string(conf), q2) {
		t.Errorf("opencas.conf (%v):\n%s", err, conf)
	}

	// Writes through the exported object; the next pass reports them.
	h.io(1, "size=4096,dir=write", 100)
	before := len(rec.mutating())
	again := r.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply)
	if again.Changed || len(rec.mutating()) != before {
		t.Fatalf("second pass changed the host: %v", rec.mutating()[before:])
	}
	s := h.stats()
	exported := s.Blocks.ExportedWrites.Value * 4096
	core := (s.Blocks.CoreWrites.Value + valueOf(s.Blocks.CleanerCoreWrites)) * 4096
	c := again.Caches[0]
	if c.ExportedWrittenBytes != int64(exported) || c.CoreWrittenBytes != int64(core) || exported == 0 {
		t.Errorf("writes in status: exported %d core %d; casadm says %d and %d", c.ExportedWrittenBytes, c.CoreWrittenBytes, exported, core)
	}
	if want := fmt.Sprintf("%.4f", 1-float64(core)/float64(exported)); c.WriteReduction != want || again.WriteReduction != want {
		t.Errorf("α %q (node %q), want %q", c.WriteReduction, again.WriteReduction, want)
	}
	var classWrites int64
	for _, u := range c.IOClasses {
		classWrites += u.WrittenBytes
	}
	if len(c.IOClasses) == 0 || classWrites != int64(exported) {
		t.Errorf("per-class writes add up to %d, exported %d: %+v", classWrites, exported, c.IOClasses)
	}

	// The cache goes off; its partition stays in the plan: the agent flushes and stops the
	// cache and takes it out of opencas.conf. The emulator lost no dirty data.
	if d := h.dump(); len(d.Caches) != 1 || !hasDirty(d) {
		t.Fatalf("expected dirty data in the write-back cache before stopping it: %+v", d)
	}
	off := &prismv1.NodePlan{FastDevices: p.FastDevices}
	stopped := r.ReconcileNode(ctx, off, devices, partitions, prismv1.ModeApply)
	if !stopped.Changed || len(stopped.Caches) != 1 || stopped.Caches[0].State != prismv1.CacheStopped {
		t.Fatalf("cache off: %+v", stopped)
	}
	if d := h.dump(); len(d.Caches) != 0 || d.LostDirtyBytes != 0 {
		t.Errorf("after the stop: %d caches, %d dirty bytes lost", len(d.Caches), d.LostDirtyBytes)
	}
	if conf, _ := os.ReadFile(filepath.Join(h.root, opencas.ConfPath)); strings.Contains(string(conf), part) {
		t.Errorf("opencas.conf still names the partition:\n%s", conf)
	}
	if again := r.ReconcileNode(ctx, off, devices, partitions, prismv1.ModeApply); again.Changed || again.Caches[0].State != prismv1.CacheStopped {
		t.Errorf("second pass with the cache off: %+v", again)
	}
}

func hasDirty(d dump) bool {
	for _, c := range d.Caches {
		for _, b := range c.Blocks {
			if b.Dirty {
				return true
			}
		}
	}
	return false
}

// TestNodeWaitsForPartition: no cache starts before provisioning reports the partition Ready.
func TestNodeWaitsForPartition(t *testing.T) { forEachRelease(t, testNodeWaitsForPartition) }

func testNodeWaitsForPartition(t *testing.T) {
	h := newHost(t)
	h.zeroPartition()
	rec := &recorder{inner: hostexec.Local{}}
	r := opencas.Runner{Exec: rec, HostRoot: h.root}
	pending := []prismv1.PartitionStatus{{Device: fastDevice, Number: 3, Label: "prism-cache", State: prismv1.PartitionPending}}
	res := r.ReconcileNode(context.Background(), nodePlan(t, prismv1.CacheWriteThrough), nil, pending, prismv1.ModeApply)
	if len(rec.argv) != 0 || len(res.Caches) != 1 || res.Caches[0].State != prismv1.CachePending ||
		res.Caches[0].Message != "waiting for cache partition 3 (Pending)" {
		t.Fatalf("ran %v; status %+v", rec.argv, res.Caches)
	}
}

func valueOf(c *casadm.Counter) uint64 {
	if c == nil {
		return 0
	}
	return c.Value
}

// TestNodeStartsNoCacheOverUnexplainedBytes: casadm -S --force overwrites the cache partition,
// so it runs only over zeros, as pvcreate on a DB slot does: a partition whose head holds bytes
// no format explains (raw data someone wrote through the partition, which neither libblkid nor
// Prism's detector names) is refused, and nothing is started. Bytes Prism's own start left,
// cut short by a crash, are known by the record Prism writes before it starts (IntentDir):
// the next pass starts the cache again, and the record goes once the cache runs.
func TestNodeStartsNoCacheOverUnexplainedBytes(t *testing.T) {
	forEachRelease(t, testNodeStartsNoCacheOverUnexplainedBytes)
}

func testNodeStartsNoCacheOverUnexplainedBytes(t *testing.T) {
	h := newHost(t)
	h.zeroPartition()
	h.putPartition(64<<10, []byte("someone's data, no format any probe knows"))
	devices := []prismv1.Device{{Name: "sda", StablePath: q1}, {Name: "sdb", StablePath: q2}}
	rec := &recorder{inner: hostexec.Local{}}
	r := opencas.Runner{Exec: rec, HostRoot: h.root, IntentDir: t.TempDir()}
	ctx := context.Background()
	p := nodePlan(t, prismv1.CacheWriteThrough)

	res := r.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply)
	if len(rec.mutating()) != 0 || res.Changed {
		t.Fatalf("a partition holding data: ran %q", rec.mutating())
	}
	if st := res.Caches[0]; st.State != prismv1.CacheRefused || !strings.Contains(st.Message, "non-zero bytes at byte 65536") {
		t.Fatalf("a partition holding data: %+v", st)
	}

	// Prism's own start cut short: the record is on the host, the start never finished and
	// left bytes of its own on the partition.
	h.zeroPartition()
	crash := &crashingStart{inner: rec, h: h}
	if res := (opencas.Runner{Exec: crash, HostRoot: h.root, IntentDir: r.IntentDir}).ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply); !crash.crashed || res.Caches[0].State != prismv1.CachePending {
		t.Fatalf("the crashing start: crashed %t, %+v", crash.crashed, res.Caches)
	}
	records, _ := filepath.Glob(filepath.Join(r.IntentDir, "cache-intent", "*"))
	if len(records) != 1 {
		t.Fatalf("records after the cut-short start: %q", records)
	}
	// Without the record, the same bytes are nobody's.
	other := opencas.Runner{Exec: rec, HostRoot: h.root, IntentDir: t.TempDir()}
	if res := other.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply); res.Caches[0].State != prismv1.CacheRefused {
		t.Fatalf("the cut-short start without its record: %+v", res.Caches[0])
	}
	res = r.ReconcileNode(ctx, p, devices, partitions, prismv1.ModeApply)
	if st := res.Caches[0]; st.State != prismv1.CacheRunning || !strings.Contains(h.casadm("-L", "-o", "csv", "-b"), "cache,1,"+part+",Running,wt") {
		t.Fatalf("resuming the cut-short start: %+v", st)
	}
	if records, _ := filepath.Glob(filepath.Join(r.IntentDir, "cache-intent", "*")); len(records) != 0 {
		t.Errorf("records once the cache runs: %q", records)
	}
}

// putPartition writes b at off in the cache partition, as someone else would.
func (h *host) putPartition(off int64, b []byte) {
	h.t.Helper()
	f, err := os.OpenFile(filepath.Join(h.root, part), os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		h.t.Fatal(err)
	}
}

// crashingStart plays a crash inside casadm -S: some of what the start writes reaches the
// partition (test data at its start, as OCF's volume test writes), and the start never ends.
type crashingStart struct {
	inner   hostexec.Executor
	h       *host
	crashed bool
}

func (c *crashingStart) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	if len(argv) > 1 && argv[1] == "-S" {
		c.crashed = true
		c.h.putPartition(0, []byte{0xff, 0xff, 0xff, 0xff})
		return nil, errors.New("killed (test)")
	}
	return c.inner.Run(ctx, argv, stdin)
}
