//go:build linux

package ceph

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/ioclass/defaults"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

const (
	traceFastSize = 2 * gib
	// traceDBSize is small on purpose, so that a compaction spills within seconds instead
	// of hours of filling. `ceph tell osd.N compact` writes its output to RocksDB's first
	// path (the DB device) whatever the level sizes, so only a full DB device makes BlueFS
	// allocate on the slow one. A fresh OSD on Ceph 16.2.15 uses 298 MiB of its DB device
	// (db_used_bytes, the same in every run; 282 MiB of it is the WAL RocksDB preallocates,
	// 1.1 write buffers), which leaves traceHeadroom free. Before the compaction only the
	// BlueFS log grows the DB (the WAL stays inside its preallocation: the workloads write
	// about 110 MiB to it), and traceLogCompactMin bounds that; the compaction then flushes
	// and rewrites about 22 MiB of tables, more than the headroom. Prism's planner never makes
	// a slot this small (plan.MinSlotBytes); the slot is laid out by hand and partitioned by
	// the agent.
	traceDBSize = 312 * plan.MiB
	// traceHeadroom is what the fresh OSD leaves free on its DB slot. Its margins: the BlueFS
	// log grew the DB by 6 MiB before the compaction (logged per workload), and the
	// compaction took 22-24 MiB (decision 0043).
	traceHeadroom = 14 * plan.MiB
	// traceLogCompactMin is bluefs_log_compact_min_size. At Ceph's default, 16 MiB, the BlueFS
	// log grew by however many WAL syncs the load made the OSD do before BlueFS compacted
	// it, and on a loaded machine that alone filled the slot during rados-4k-write.
	traceLogCompactMin = plan.MiB
	// traceFile is the committed summary, relative to this package.
	traceFile = "../../internal/ioclass/defaults/testdata/ceph-osd-trace.json"
)

// traceConfig are the OSD settings that decide what its devices see; the summary records them.
var traceConfig = []string{
	"bluefs_buffered_io", "bluefs_log_compact_min_size", "bluestore_prefer_deferred_size_ssd", "bluestore_max_blob_size_ssd",
	"bluestore_volume_selection_policy", "bdev_aio", "bluestore_rocksdb_options",
}

// TestCephOSDTrace traces, with the block_bio_queue tracepoint, which tasks queue which bios
// to a real OSD's data device and DB partition during 4 KiB random writes, 4 MiB writes and
// a RocksDB compaction that spills onto the data device. It is the evidence for the default
// PRISM policy (internal/ioclass/defaults); PRISM_UPDATE_TRACE=1 rewrites the committed
// summary. Around the trace it proves Prism's BlueFS dashboard queries and spill-over alert
// on the mgr's real metrics (metrics_test.go). About 1.5-2.5 minutes.
func TestCephOSDTrace(t *testing.T) {
	began := time.Now()
	e := newEnv(t)

	fast := e.attachLoop("fast", traceFastSize, true)
	slowDev := e.attachLoop("qlc0", slowSize, false)
	devices, _ := inventory(fast, []*loopDev{slowDev})
	slot := prismv1.DBSlot{Partition: prismv1.PlannedPartition{Number: 1, Label: "prism-db-00", StartBytes: plan.MiB, SizeBytes: traceDBSize},
		DataDevice: slowDev.stablePath}
	fp := prismv1.FastDevicePlan{StablePath: fast.stablePath, SlotSizeBytes: traceDBSize, Slots: []prismv1.DBSlot{slot}}
	if _, err := partitionFast(e.ctx, hostexec.Local{Timeout: slow}, prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{fp}}, devices); err != nil {
		t.Fatalf("partitioning %s: %v", fast.dev, err)
	}
	checkPartitions(e, fast, fp)
	kernel := map[string]string{slowDev.stablePath: slowDev.dev, prismv1.PartitionPath(fp.StablePath, 1): fast.partitionDev(1)}

	c := e.bootstrap()
	// The setting that takes effect at mkfs on this Ceph (see minalloc_test.go): the
	// trace shows the OSD as Prism deploys it on QLC.
	c.mustCeph("config", "set", "osd", "bluestore_min_alloc_size", strconv.Itoa(qlcWriteUnit))
	c.mustCeph("config", "set", "osd", "bluefs_log_compact_min_size", strconv.FormatInt(traceLogCompactMin, 10))
	o := c.createOSD(rook.RookDevice{Name: slowDev.stablePath, Config: rook.DeviceConfigOf(map[string]string{
		"metadataDevice": prismv1.PartitionPath(fp.StablePath, 1), "databaseSizeMB": strconv.FormatInt(traceDBSize/plan.MiB, 10), "deviceClass": deviceClass,
	})}, kernel, fp)
	c.waitOSDsUpIn([]*osd{o})
	pool := c.createPool()
	t.Logf("%s up, pool %s clean (%.0f s since start)", o.name(), pool, time.Since(began).Seconds())
	// Ceph's metrics as Prometheus sees them, before and after the spill (metrics_test.go).
	metrics := c.startCephMetrics()
	metrics.checkNoSpillAlert(o)
	t.Logf("mgr prometheus module and Prometheus up (%.0f s since start)", time.Since(began).Seconds())

	b := c.bluefsCounters(o)
	t.Logf("%s bluefs at start: db_total %d db_used %d slow_used %d written_wal %d", o.name(), b["db_total_bytes"], b["db_used_bytes"], b["slow_used_bytes"], b["bytes_written_wal"])
	// The margins of traceDBSize hold only for the footprint they were measured on.
	if free := b["db_total_bytes"] - b["db_used_bytes"]; free < traceHeadroom-2*plan.MiB || free > traceHeadroom+2*plan.MiB {
		t.Fatalf("%s starts with %d MiB free on its DB slot, want %d MiB ± 2: this Ceph's footprint differs from the one traceDBSize was sized on; resize it so that the workloads cannot fill the slot and the compaction must", o.name(), free>>20, traceHeadroom>>20)
	}
	summary := blktrace.Summary{Host: c.traceHost(o, slowDev)}
	logThreads(t, o)
	data, fastNums := devNumbers(e, sysBlock(slowDev.name, "")), devNumbers(e, sysBlock(fast.name, ""))
	tb := &traceBed{o: o, fast: fast, slowDev: slowDev, bt: newBioTrace(e, data, fastNums),
		data: blktrace.Device{Major: data[0], Minor: data[1], Sectors: uint64(slowDev.size / 512)},
		db: blktrace.Device{Major: fastNums[0], Minor: fastNums[1],
			Start: uint64(readInt(t, sysBlock(fast.name, fast.name+"p1/start"))), Sectors: uint64(readInt(t, sysBlock(fast.name, fast.name+"p1/size")))}}
	for _, w := range c.traceWorkloads(pool, o) {
		summary.Workloads = append(summary.Workloads, c.traceOne(tb, w))
	}
	t.Log("\n" + blktrace.Markdown(&summary))
	checkTrace(t, &summary)
	metricsStart := time.Now()
	metrics.checkSpillMetrics(o, slowDev, fast)
	t.Logf("Prism's BlueFS panels and spill-over alert on real Ceph: %.0f s", time.Since(metricsStart).Seconds())
	t.Logf("total %.0f s", time.Since(began).Seconds())
}

// traceBed is what traceOne traces: the OSD, its two devices and the tracefs instance.
type traceBed struct {
	o             *osd
	fast, slowDev *loopDev
	bt            *bioTrace
	data, db      blktrace.Device
}

// traceOne runs one workload under the trace, waits until the devices are idle, and returns
// its summary with BlueFS's counters around it.
func (c *cluster) traceOne(tb *traceBed, w tracedWorkload) blktrace.Workload {
	t := c.e.t
	before := c.bluefsCounters(tb.o)
	if w.name == defaults.Compaction && (before["slow_used_bytes"] != 0 || before["bytes_written_slow"] != 0) {
		t.Fatalf("BlueFS spilled before the compaction (slow_used_bytes %d, bytes_written_slow %d): the trace could not tell the compaction's writes apart",
			before["slow_used_bytes"], before["bytes_written_slow"])
	}
	tb.bt.start()
	start := time.Now()
	out := c.e.must(10*time.Minute, w.argv...)
	secs := time.Since(start).Seconds()
	c.idleCounters(tb.fast, []*loopDev{tb.slowDev})
	tr := tb.bt.stop()
	after := c.bluefsCounters(tb.o)
	client := int64(0)
	if w.client != nil {
		var err error
		if client, err = w.client(out); err != nil || client <= 0 {
			t.Fatalf("%s: client bytes: %v\n%s", w.name, err, tail(out, 20))
		}
	}
	t.Logf("%s: %.1f s, %d bios traced, client %d bytes, bluefs slow_used %d -> %d, db_used %d -> %d, written_wal %d -> %d, log_bytes %d -> %d; %s",
		w.name, secs, len(tr.Records), client, before["slow_used_bytes"], after["slow_used_bytes"], before["db_used_bytes"], after["db_used_bytes"],
		before["bytes_written_wal"], after["bytes_written_wal"], before["log_bytes"], after["log_bytes"], tail(out, 1))
	if w.name != defaults.Compaction && (after["slow_used_bytes"] != 0 || after["bytes_written_slow"] != 0) {
		t.Fatalf("BlueFS spilled during %s, before the compaction (slow_used_bytes %d, bytes_written_slow %d, db_used_bytes %d of %d): the trace could not tell the compaction's writes apart",
			w.name, after["slow_used_bytes"], after["bytes_written_slow"], after["db_used_bytes"], after["db_total_bytes"])
	}
	pid := tb.o.daemon.cmd.Process.Pid
	return blktrace.Workload{
		Name: w.name, Command: strings.ReplaceAll(strings.Join(w.argv, " "), c.conf, "<conf>"), ClientBytes: client,
		BlueFS: blktrace.BlueFSDelta{SlowUsedBefore: before["slow_used_bytes"], SlowUsedAfter: after["slow_used_bytes"],
			WrittenSlowBefore: before["bytes_written_slow"], WrittenSlowAfter: after["bytes_written_slow"], DBUsedAfter: after["db_used_bytes"]},
		Data: blktrace.Aggregate(tr.Records, tb.data, pid),
		DB:   blktrace.Aggregate(tr.Records, tb.db, pid),
	}
}

// tracedWorkload is one command run under the trace.
type tracedWorkload struct {
	name string
	argv []string
	// client parses the bytes the client wrote; nil when it wrote none.
	client func(out string) (int64, error)
}

// traceWorkloads are, in order: 4 KiB random writes into an RBD image, 4 KiB object writes,
// 4 MiB object writes (sequential: each fills fresh 64 KiB allocation units), reads of those
// 4 MiB objects and 4 KiB random reads of the image, then a full RocksDB compaction, whose
// output spills onto the data device (traceDBSize). Write volumes are fixed (object counts,
// checked, and --io-total), so the metadata the compaction rewrites, and with it the spill,
// does not depend on the machine's speed.
func (c *cluster) traceWorkloads(pool string, o *osd) []tracedWorkload {
	rados := []string{"rados", "--cluster", clusterName, "-c", c.conf, "-p", pool}
	rbd := []string{"rbd", "--cluster", clusterName, "-c", c.conf}
	image := pool + "/prismtrace-img"
	c.e.must(quick, append(rbd, "create", "--size", "1G", image)...)
	return []tracedWorkload{
		{defaults.RBD4KRandWrite, append(rbd, "bench", "--io-type", "write", "--io-pattern", "rand", "--io-size", "4096",
			"--io-total", "128M", "--io-threads", "16", image), func(string) (int64, error) { return 128 << 20, nil }},
		{defaults.Rados4KWrite, append(rados, "bench", traceBenchSecs, "write", "-b", "4096", "-t", "16", "--max-objects", "16000",
			"--no-cleanup", "--run-name", "prismtrace4k"), radosBenchAll(16000 * 4096)},
		{defaults.Rados4MWrite, append(rados, "bench", traceBenchSecs, "write", "-b", "4194304", "-t", "16", "--max-objects", "128",
			"--no-cleanup", "--run-name", "prismtrace4m"), radosBenchAll(128 << 22)},
		{defaults.Rados4MRead, append(rados, "bench", traceBenchSecs, "seq", "-t", "16", "--run-name", "prismtrace4m"), nil},
		{defaults.RBD4KRandRead, append(rbd, "bench", "--io-type", "read", "--io-pattern", "rand", "--io-size", "4096",
			"--io-total", "32M", "--io-threads", "16", image), nil},
		{defaults.Compaction, []string{"ceph", "--cluster", clusterName, "-c", c.conf, "tell", o.name(), "compact"}, nil},
	}
}

// traceBenchSecs is rados bench's duration, only a bound: the object counts end the benches
// (a 4 KiB bench cut short at 120 s on a loaded machine would have left the compaction less
// metadata to rewrite, and perhaps no spill). It stays under traceOne's command timeout.
const traceBenchSecs = "480"

// radosBenchAll parses the bytes rados bench wrote and fails unless it wrote every object.
func radosBenchAll(want int64) func(string) (int64, error) {
	return func(out string) (int64, error) {
		n, err := radosBenchBytes(out)
		if err == nil && n != want {
			err = fmt.Errorf("rados bench wrote %d bytes, want %d: it stopped before its last object", n, want)
		}
		return n, err
	}
}

// bluefsCounters is `ceph tell osd.N perf dump bluefs`, the integer counters.
func (c *cluster) bluefsCounters(o *osd) map[string]int64 {
	var perf struct {
		BlueFS map[string]any `json:"bluefs"`
	}
	out, err := c.ceph(slow, "tell", o.name(), "perf", "dump", "bluefs")
	if err == nil {
		err = json.Unmarshal([]byte(out), &perf)
	}
	if err != nil {
		c.e.t.Fatalf("%s: perf dump bluefs: %v\n%s", o.name(), err, out)
	}
	b := map[string]int64{}
	for k, v := range perf.BlueFS {
		if f, ok := v.(float64); ok {
			b[k] = int64(f)
		}
	}
	return b
}

// traceHost records the versions and the OSD's IO-shaping settings.
func (c *cluster) traceHost(o *osd, slowDev *loopDev) blktrace.Host {
	e := c.e
	h := blktrace.Host{
		Kernel:    strings.TrimSpace(e.must(quick, "uname", "-r")),
		Ceph:      strings.TrimSpace(e.must(quick, "ceph-osd", "--version")),
		Config:    map[string]string{"bluestore_min_alloc_size": c.metadata(o)["bluestore_min_alloc_size"]},
		DataBytes: slowDev.size,
		DBBytes:   traceDBSize,
	}
	for _, k := range traceConfig {
		var cfg map[string]string
		if err := c.adminSocket(&cfg, o.name(), "config", "get", k); err != nil {
			e.t.Fatalf("%s: config get %s: %v", o.name(), k, err)
		}
		h.Config[k] = cfg[k]
	}
	e.t.Logf("host: %+v", h)
	return h
}

// logThreads lists the OSD's thread names: the comm values a trace can show for it.
func logThreads(t *testing.T, o *osd) {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", o.daemon.cmd.Process.Pid))
	count := map[string]int{}
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil {
			count[strings.TrimSpace(string(b))]++
		}
	}
	t.Logf("%s threads by name: %v", o.name(), count)
}

// checkTrace writes the summary with PRISM_UPDATE_TRACE=1; otherwise it compares its shape
// with the committed one and checks the facts the default policy rests on. Byte counts
// differ from run to run and are never compared.
func checkTrace(t *testing.T, s *blktrace.Summary) {
	if os.Getenv("PRISM_UPDATE_TRACE") != "" {
		data, err := json.MarshalIndent(s, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(traceFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("PRISM_UPDATE_TRACE is set: wrote %s", traceFile)
	} else {
		committed, err := blktrace.LoadSummary(traceFile)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := workloadNames(s), workloadNames(committed); got != want {
			t.Errorf("traced workloads %s, committed %s: rerun with PRISM_UPDATE_TRACE=1", got, want)
		}
	}
	for _, err := range defaults.CheckCephOSDFacts(s) {
		t.Error(err)
	}
	// The fresh trace, replayed through the shipped policy, must do what the policy is for.
	policy := ioclass.DefaultCephOSD()
	cfg, err := ioclass.Compile(&policy.Spec)
	if err != nil {
		t.Fatal(err)
	}
	shares, errs := defaults.CheckIntent(s, cfg, defaults.CephOSDIntent)
	for _, err := range errs {
		t.Errorf("default policy on this trace: %v", err)
	}
	names := map[int]string{}
	for _, c := range policy.Spec.Classes {
		names[int(c.ID)] = c.Name
	}
	t.Log("replay of this trace through the default policy:\n" + defaults.ReplayMarkdown(shares, names))
}

func workloadNames(s *blktrace.Summary) string {
	var names []string
	for _, w := range s.Workloads {
		names = append(names, w.Name)
	}
	return strings.Join(names, ",")
}
