//go:build linux

package ceph

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/bench/writes"
	"github.com/prism-storage/prism/internal/host/cephdaemon"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/osdstats"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rook"
)

const (
	// benchOutEnv names the counters file TestBenchWrites writes; unset, the test skips
	// (make bench-writes sets it; make test does not run the benchmark).
	benchOutEnv = "PRISM_BENCH_WRITES_OUT"
	// benchBudgetEnv is each small-write workload's byte budget in MiB (default 768, the published run).
	benchBudgetEnv = "PRISM_BENCH_WRITES_MIB"
	// benchTraceEnv names a prism-agent binary: each workload on Prism's layout is then traced
	// on the QLC device (prism-agent trace) into <counters>.traces/, for kubectl prism
	// simulate's cache model.
	benchTraceEnv = "PRISM_BENCH_WRITES_TRACE_AGENT"
	// benchTraceEvents bounds each trace (a bio is about 100 bytes of JSON).
	benchTraceEvents = 2_000_000
	benchFastSize    = 8 * gib
	benchDBSize      = "3Gi"
	aloneClass       = "qlcalone"
	aloneByID        = "/dev/disk/by-id/nvme-PRISMTEST_QLC_ALONE"
	// benchQuiet bounds the wait for the devices to go quiet around a run (no write for 3 s):
	// the compactions a run started are counted in its own figures, not the next run's.
	benchQuiet = 3 * time.Minute
	// benchRocksDBOptions are Ceph 16.2's bluestore_rocksdb_options with 16 MiB write
	// buffers (not 256 MiB) and a 32 MiB L1 (not 256 MiB), the same on both OSDs: a few
	// hundred MiB of client writes then push compaction to L2 and beyond, as terabytes do
	// with the defaults. The level sizes keep their ratios (multiplier 10).
	benchRocksDBOptions = "compression=kNoCompression,max_write_buffer_number=4,min_write_buffer_number_to_merge=1," +
		"recycle_log_file_num=4,write_buffer_size=16777216,writable_file_max_buffer_size=0,compaction_readahead_size=2097152," +
		"max_background_compactions=2,max_total_wal_size=1073741824,max_bytes_for_level_base=33554432"
)

// benchLayout is one layout's OSD, pool and devices.
type benchLayout struct {
	name        string
	osd         *osd
	pool, image string
	qlc, fast   *loopDev // fast is nil without a DB slot
}

// benchWorkload is one client workload; argv builds its command for a layout, and client
// parses the bytes the client wrote and read from the command's output.
type benchWorkload struct {
	name   string
	argv   func(l benchLayout) []string
	client func(out string) (written, read int64, err error)
}

// TestBenchWrites builds two OSDs on identical QLC loop devices in one cluster: one alone
// (no DB slot, Ceph's defaults) and one in Prism's layout (a DB slot planned by internal/plan
// and partitioned by the agent's partitioner on a fast loop device, min_alloc_size from the
// drive's write unit), runs the same workloads on each, one layout after the other, and
// records the kernel's write counters and Prism's per-OSD table around each run
// (bench/writes.Counters). bench/writes turns the file into docs/benchmarks.md's tables.
func TestBenchWrites(t *testing.T) {
	out := os.Getenv(benchOutEnv)
	if out == "" {
		t.Skipf("set %s=<counters.json> to run the write benchmark (make bench-writes)", benchOutEnv)
	}
	budget := int64(768)
	if v := os.Getenv(benchBudgetEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 16 {
			t.Fatalf("%s=%q: want a number of MiB, at least 16", benchBudgetEnv, v)
		}
		budget = n
	}
	began := time.Now().UTC()
	e := newEnv(t)
	rec := writes.Counters{Date: began.Format(time.RFC3339), Machine: machine(e), Versions: versions(e), Settings: map[string]string{}}

	fast := e.attachLoop("fast", benchFastSize, true)
	alone := e.attachLoop("qlc-alone", slowSize, false)
	qlc := e.attachLoop("qlc-prism", slowSize, false)
	alone.stablePath = aloneByID

	// Prism's plan for the fast device and the QLC drive of its layout, partitioned by the agent.
	devices, sel := inventory(fast, []*loopDev{qlc})
	size := resource.MustParse(benchDBSize)
	spec := &prismv1.HybridStoragePolicySpec{Mode: prismv1.ModeApply, DB: prismv1.DBSizing{Size: &size},
		OSD: prismv1.OSDSettings{DeviceClass: deviceClass, MinAllocSize: prismv1.MinAllocSizeAuto}}
	layout := plan.PlanLayout(plan.LayoutInput{Selection: sel, Devices: devices, Spec: spec})
	if len(layout.Problems) > 0 || len(layout.Unplaced) > 0 || len(layout.Plan.FastDevices) != 1 || len(layout.Plan.FastDevices[0].Slots) != 1 {
		t.Fatalf("plan: problems %v, unplaced %v, fast devices %+v", layout.Problems, layout.Unplaced, layout.Plan.FastDevices)
	}
	fp := layout.Plan.FastDevices[0]
	if _, err := partitionFast(e.ctx, hostexec.Local{Timeout: slow}, layout.Plan, devices); err != nil {
		t.Fatalf("partitioning %s: %v", fast.dev, err)
	}
	checkPartitions(e, fast, fp)
	kernel := map[string]string{qlc.stablePath: qlc.dev, alone.stablePath: alone.dev,
		prismv1.PartitionPath(fp.StablePath, fp.Slots[0].Partition.Number): fast.partitionDev(fp.Slots[0].Partition.Number)}
	entries := effectiveEntries(rook.RookNodes(map[string]prismv1.NodePlan{nodeName: layout.Plan}, deviceClass)[0])
	minAlloc, err := rook.MinAllocSize(devices[1:])
	if err != nil {
		t.Fatal(err)
	}

	c := e.bootstrap()
	c.mustCeph("config", "set", "osd", "bluestore_rocksdb_options", benchRocksDBOptions)
	c.mustCeph("config", "set", "osd", "rocksdb_perf", "true")
	c.mustCeph("config", "set", "osd", "rocksdb_collect_compaction_stats", "true")
	// The QLC drive alone first, under Ceph's defaults; then Prism's min_alloc_size in Prism's
	// section, as Rook's cephConfig gets it, before Prism's OSD is made.
	oAlone := c.createOSDAlone(rook.RookDevice{Name: alone.stablePath, Config: rook.DeviceConfigOf(map[string]string{"deviceClass": aloneClass})}, kernel, aloneClass)
	c.waitOSDsUpIn([]*osd{oAlone})
	c.mustCeph("config", "set", rook.CephConfigSection(deviceClass), "bluestore_min_alloc_size", strconv.FormatInt(minAlloc, 10))
	oPrism := c.createOSD(entries[0], kernel, fp)
	c.waitOSDsUpIn([]*osd{oAlone, oPrism})
	c.checkOSD(oPrism)

	imageBytes := 4 * budget << 20
	layouts := []benchLayout{
		{name: writes.LayoutAlone, osd: oAlone, pool: "bench-alone", qlc: alone},
		{name: writes.LayoutPrism, osd: oPrism, pool: "bench-prism", qlc: qlc, fast: fast},
	}
	for i := range layouts {
		l := &layouts[i]
		class := aloneClass
		if l.fast != nil {
			class = deviceClass
		}
		c.mustCeph("osd", "crush", "rule", "create-replicated", "rule-"+l.pool, "default", "osd", class)
		c.mustCeph("osd", "pool", "create", l.pool, strconv.Itoa(poolPGs), strconv.Itoa(poolPGs), "replicated", "rule-"+l.pool)
		c.mustCeph("osd", "pool", "set", l.pool, "size", "1", "--yes-i-really-mean-it")
		c.mustCeph("osd", "pool", "application", "enable", l.pool, "rbd")
		c.waitPoolClean(l.pool)
		l.image = "img"
		e.must(quick, "rbd", "--cluster", clusterName, "-c", c.conf, "create", "--size", fmt.Sprintf("%dM", imageBytes>>20), l.pool+"/"+l.image)
		md := c.metadata(l.osd)
		rec.Settings["min_alloc_size "+l.name] = md["bluestore_min_alloc_size"] + " (persisted at mkfs, ceph osd metadata)"
		rec.Settings["db "+l.name] = fmt.Sprintf("dedicated %s, %s bytes, device %q", md["bluefs_dedicated_db"], md["bluefs_db_size"], md["bluefs_db_partition_path"])
	}
	rec.Settings["bluestore_rocksdb_options"] = benchRocksDBOptions
	rec.Settings["devices"] = fmt.Sprintf("QLC loops %d GiB each (identical, sparse files, rotational=0); fast loop %d GiB; DB slot %d MiB planned by internal/plan (spec.db.size %s), a GPT partition made by the agent's partitioner (no LV: this kernel has no device-mapper targets)",
		slowSize/gib, benchFastSize/gib, fp.SlotSizeBytes/plan.MiB, benchDBSize)
	rec.Settings["budget"] = fmt.Sprintf("%d MiB per 4 KiB workload, %d MiB RBD image filled by the 64 KiB sequential write", budget, imageBytes>>20)

	traceDir := ""
	if os.Getenv(benchTraceEnv) != "" {
		traceDir = out + ".traces"
		if err := os.MkdirAll(traceDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range benchWorkloads(c, budget, imageBytes) {
		for _, l := range layouts {
			var tracer *daemon
			if traceDir != "" && l.fast != nil {
				tracer = e.startDaemon(fmt.Sprintf("trace-%d", i), os.Getenv(benchTraceEnv), "trace", "--device", l.qlc.dev,
					"--duration", "30m", "--max-events", strconv.Itoa(benchTraceEvents), "-o", filepath.Join(traceDir, fmt.Sprintf("%d.json", i+1)))
				time.Sleep(2 * time.Second) // the tracepoint armed before the first bio
			}
			rec.Runs = append(rec.Runs, c.benchRun(w, l, fast, alone, qlc))
			if tracer != nil {
				tracer.stop(t) // SIGTERM: the tracer writes what it recorded and exits
				if tracer.err != nil {
					t.Fatalf("prism-agent trace: %v\n%s", tracer.err, c.logTail(tracer.name))
				}
			}
		}
	}
	rec.Machine["load after"] = loadavg()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writes.Parse(data); err != nil {
		t.Fatalf("the recorded counters do not parse: %v", err)
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%.0f s)", out, time.Since(began).Seconds())
}

// benchWorkloads are the workloads in the order they run. The 64 KiB sequential write fills
// the image first, so that the 4 KiB writes overwrite allocated space, as on a used volume.
func benchWorkloads(c *cluster, budget, imageBytes int64) []benchWorkload {
	fio := func(extra ...string) func(l benchLayout) []string {
		return func(l benchLayout) []string {
			return append([]string{"fio", "--name=bench", "--ioengine=rbd", "--clientname=admin", "--pool=" + l.pool, "--rbdname=" + l.image,
				"--iodepth=16", "--size=" + strconv.FormatInt(imageBytes, 10), "--randseed=42", "--output-format=json"}, extra...)
		}
	}
	small := "--io_size=" + strconv.FormatInt(budget<<20, 10)
	objects := budget << 20 / (2 * 4096) // each op writes 4 KiB of data and a 4 KiB omap value
	return []benchWorkload{
		{"RBD 64 KiB sequential writes", fio("--rw=write", "--bs=64k"), fioBytes},
		{"RADOS 4 KiB objects + 4 KiB omap (RGW-like)", func(l benchLayout) []string {
			return []string{"rados", "--cluster", clusterName, "-c", c.conf, "-p", l.pool, "bench", "3600", "write", "-b", "4096", "-t", "16",
				"--max-objects", strconv.FormatInt(objects, 10), "--write-object", "--write-omap", "--no-cleanup", "--run-name", "omap"}
		}, func(out string) (int64, int64, error) {
			n, err := radosBenchBytes(out)
			return 2 * n, 0, err // the same buffer goes to the object and to its omap
		}},
		{"RBD 4 KiB random writes, uniform", fio("--rw=randwrite", "--bs=4k", small), fioBytes},
		{"RBD 4 KiB random writes, zipf 0.99", fio("--rw=randwrite", "--bs=4k", "--random_distribution=zipf:0.99", small), fioBytes},
		{"RBD 4 KiB 70/30 read/write mix", fio("--rw=randrw", "--rwmixread=70", "--bs=4k", small), fioBytes},
	}
}

// fioBytes is the bytes fio's JSON report says the job wrote and read.
func fioBytes(out string) (int64, int64, error) {
	var r struct {
		Jobs []struct {
			Read struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"read"`
			Write struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(jsonPart(out)), &r); err != nil {
		return 0, 0, fmt.Errorf("fio's JSON: %w", err)
	}
	if len(r.Jobs) != 1 {
		return 0, 0, fmt.Errorf("fio's JSON: %d jobs, want 1", len(r.Jobs))
	}
	return r.Jobs[0].Write.IOBytes, r.Jobs[0].Read.IOBytes, nil
}

// benchRun runs one workload on one layout between two idle snapshots of the devices'
// write counters and two readings of the layout's OSD.
func (c *cluster) benchRun(w benchWorkload, l benchLayout, fast, alone, qlc *loopDev) writes.Run {
	t := c.e.t
	ask := cephdaemon.Socket{Timeout: 30 * time.Second}
	sock := c.path("run", clusterName+"-"+l.osd.name()+".asok")
	index := map[*loopDev]int{fast: 0, alone: 1, qlc: 2}
	before := c.idleCountersWithin(benchQuiet, fast, []*loopDev{alone, qlc})
	r0 := osdstats.ReadOSD(c.e.ctx, ask, l.osd.id, sock, time.Now)
	argv := w.argv(l)
	start := time.Now()
	out := c.e.must(20*time.Minute, argv...)
	secs := time.Since(start).Seconds()
	after := c.idleCountersWithin(benchQuiet, fast, []*loopDev{alone, qlc})
	r1 := osdstats.ReadOSD(c.e.ctx, ask, l.osd.id, sock, time.Now)
	// A part of a reading that failed leaves its classes unknown in the table; the
	// single-device OSD prints no bluefs stats usage matrix, so its WAL and SST occupancy
	// are unknown. Without the perf counters there is no table at all.
	if r0.BlueFS == nil || r0.Store == nil || r1.BlueFS == nil || r1.Store == nil {
		t.Fatalf("%s on %s: reading %s: %v %v", w.name, l.name, l.osd.name(), r0.Errors, r1.Errors)
	}
	if len(r1.Errors) > 0 {
		t.Logf("%s on %s: %s's table is partial: %v", w.name, l.name, l.osd.name(), r1.Errors)
	}
	// Every column family's levels after the run, from RocksDB's lines in the OSD log (the
	// admin socket's kv stats print only the default family's).
	osdLog, err := os.ReadFile(c.path("log", clusterName+"-"+l.osd.name()+".log"))
	if err != nil {
		t.Fatal(err)
	}
	levels, err := writes.LevelFiles(osdLog)
	if err != nil {
		t.Fatalf("%s's log: %v", l.osd.name(), err)
	}
	wrote, read, err := w.client(out)
	if err != nil || wrote <= 0 {
		t.Fatalf("%s on %s: client bytes %d: %v\n%s", w.name, l.name, wrote, err, tail(out, 20))
	}
	run := writes.Run{Workload: w.name, Layout: l.name, Command: strings.ReplaceAll(strings.Join(argv, " "), c.conf, "<conf>"),
		ClientBytes: wrote, ClientReadBytes: read, Seconds: secs, Load: loadavg(),
		QLCBytes: after[index[l.qlc]] - before[index[l.qlc]], Classes: classDeltas(r0, r1), LevelFiles: levels}
	if l.fast != nil {
		run.FastBytes = after[0] - before[0]
	}
	other := alone
	if l.qlc == alone {
		other = qlc
	}
	t.Logf("%s on %s: %.0f s, client wrote %d MiB read %d MiB; fast %d MiB, QLC %d MiB (the other QLC: %d MiB); deepest RocksDB level with files L%d; load %s",
		w.name, l.name, secs, wrote>>20, read>>20, run.FastBytes>>20, run.QLCBytes>>20, (after[index[other]]-before[index[other]])>>20, writes.DeepestLevel(levels), run.Load)
	return run
}

// classDeltas is Prism's per-OSD table after a run with each class's writes during it.
func classDeltas(before, after osdstats.Reading) []writes.Class {
	written := map[string]uint64{}
	for _, r := range osdstats.Table(nil, before) {
		if r.Written != nil {
			written[r.Class] = *r.Written
		}
	}
	var out []writes.Class
	for _, r := range osdstats.Table(nil, after) {
		c := writes.Class{Class: r.Class, Breakdown: r.Breakdown}
		if r.Occupied != nil {
			c.OccupiedBytes = i64(int64(*r.Occupied))
		}
		if prev := written[r.Class]; r.Written != nil && *r.Written >= prev {
			c.WrittenBytes = i64(int64(*r.Written - prev)) // a level absent before had written nothing
		}
		out = append(out, c)
	}
	return out
}

func i64(v int64) *int64 { return &v }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func machine(e *env) map[string]string {
	m := map[string]string{"cpus": strconv.Itoa(runtime.NumCPU()), "load before": loadavg()}
	if out, err := e.run(quick, "uname", "-r"); err == nil {
		m["kernel"] = strings.TrimSpace(out)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m["memory"] = strings.Join(strings.Fields(firstLine(string(b), "MemTotal"))[1:], " ")
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(firstLine(string(b), "model name")), "model name\t:"))
	}
	return m
}

func versions(e *env) map[string]string {
	v := map[string]string{"go": runtime.Version()}
	for name, argv := range map[string][]string{"ceph": {"ceph", "--version"}, "fio": {"fio", "--version"}} {
		if out, err := e.run(quick, argv...); err == nil {
			v[name] = strings.TrimSpace(out)
		}
	}
	return v
}
