package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prism-storage/prism/internal/host/casadm"
	"github.com/prism-storage/prism/internal/ioclass"
)

// classStats reads -P -i 1 -d N -o csv.
func (e *env) classStats(id int) casadm.Stats {
	e.t.Helper()
	s, err := casadm.ParseStats(strings.NewReader(e.must("-P", "-i", "1", "-d", strconv.Itoa(id), "-o", "csv")))
	if err != nil {
		e.t.Fatal(err)
	}
	return s[0]
}

func (e *env) cacheStats(args ...string) casadm.Stats {
	e.t.Helper()
	s, err := casadm.ParseStats(strings.NewReader(e.must(append([]string{"-P", "-i", "1", "-o", "csv"}, args...)...)))
	if err != nil {
		e.t.Fatal(err)
	}
	return s[0]
}

func (e *env) io(core int, spec string, count int, extra ...string) {
	e.t.Helper()
	e.must(append([]string{"--emulator-io", "--cache-id", "1", "--core-id", strconv.Itoa(core), "--io", spec, "--count", strconv.Itoa(count)}, extra...)...)
}

func (e *env) load(csv string) {
	e.t.Helper()
	if out, errs, rc := e.runStdin(csv, "-C", "-C", "-i", "1", "-f", "-"); rc != 0 {
		e.t.Fatalf("load: %s %s", out, errs)
	}
}

func v(c *casadm.Counter) uint64 {
	if c == nil {
		return 0
	}
	return c.Value
}

// TestPyOCFDemoBehaviour drives the emulator through the real OCF run of
// pyocf_prism_demo_run.log (7264-line WB cache, NOP cleaning, the §1.5 classes; targeted
// writes, then a 2x-cache flood of unclassified writes, then a flush) and compares, for
// every class after each of the three phases, everything the log records: occupancy,
// clean and dirty lines, write hits, full misses, pass-through writes and serviced writes.
// Real OCF evicts only clean lines: when none can be had a request goes pass-through and
// 32 dirty lines of every class are cleaned (class 3, at its cap: 71 of its 256 writes
// pass through; the flood: 216), and it spreads eviction over classes by size (class 3
// is emptied while class 0 grows). The model has those rules (cachesim.MapLines) and
// reproduces every figure.
func TestPyOCFDemoBehaviour(t *testing.T) {
	raw, err := os.ReadFile("testdata/pyocf_prism_demo_run.log")
	if err != nil {
		t.Fatal(err)
	}
	type classRecord struct {
		Occupancy int    `json:"occupancy_4k"`
		Clean     int    `json:"clean_4k"`
		Dirty     int    `json:"dirty_4k"`
		WrHits    uint64 `json:"wr_hits"`
		WrMisses  uint64 `json:"wr_full_misses"`
		WrPT      uint64 `json:"wr_pt"`
		WrTotal   uint64 `json:"wr_total"`
	}
	var real struct {
		Phase1, Phase2, Phase3 map[string]classRecord
		Cache                  int `json:"cache_4k"`
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, `{"phase1"`) {
			if err := json.Unmarshal([]byte(l), &real); err != nil {
				t.Fatal(err)
			}
		}
	}
	if real.Cache != 7264 || len(real.Phase1) != 5 || len(real.Phase2) != 5 || len(real.Phase3) != 5 {
		t.Fatalf("log: cache %d, %d/%d/%d classes", real.Cache, len(real.Phase1), len(real.Phase2), len(real.Phase3))
	}
	e := newEnv(t)
	compare := func(phase string, want map[string]classRecord) {
		t.Helper()
		for id := 0; id <= 4; id++ {
			s := e.classStats(id)
			r := s.Requests
			occ, dirty := int(v(s.Usage.Occupancy)), int(v(s.Usage.Dirty))
			got := classRecord{Occupancy: occ, Clean: occ - dirty, Dirty: dirty, WrHits: v(r.WriteHits),
				WrMisses: v(r.WriteFullMisses), WrPT: v(r.PassThroughWrites), WrTotal: v(r.WriteTotal)}
			if w := want[strconv.Itoa(id)]; got != w {
				t.Errorf("%s, class %d: emulator %+v, real OCF %+v", phase, id, got, w)
			}
		}
	}
	e.must("--emulator-add-device", "--device", refDevice, "--size", strconv.Itoa(refDeviceSize))
	e.must("--emulator-add-device", "--device", refCore, "--size", strconv.Itoa(1<<30))
	e.must("-S", "-d", refDevice, "-i", "1", "-c", "wb")
	e.must("-A", "-i", "1", "-d", refCore)
	e.must("-X", "-n", "cleaning", "-i", "1", "-p", "nop")
	e.must("-X", "-n", "seq-cutoff", "-i", "1", "-p", "never")
	e.load("IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,metadata&done,,1\n" +
		"2,directory:/var/tmp&done,200,0\n3,extension:log&done,100,0.10\n4,directory:/data/hot&done,1,1\n")
	const req = 65536
	e.io(1, "size=65536,dir=write,metadata", 64)
	e.io(1, "size=65536,dir=write,directory=/var/tmp,file=x,lba=200000", 64)
	e.io(1, "size=65536,dir=write,directory=/srv,file=a.log,lba=400000", 256)
	e.io(1, "size=65536,dir=write,directory=/data/hot,file=f,lba=600000", 128)
	e.io(1, "size=65536,dir=write,directory=/data/hot,file=f,lba=600000", 128)
	compare("after the targeted writes", real.Phase1)
	// The flood: twice the cache, unclassified.
	e.io(1, fmt.Sprintf("size=%d,dir=write,lba=1000000", req), 2*7264*4096/req)
	compare("after the flood", real.Phase2)
	e.must("-F", "-i", "1")
	compare("after the flush", real.Phase3)
	if lost := e.snapshot().LostDirtyBytes; lost != 0 {
		t.Errorf("%d dirty bytes lost", lost)
	}
}

// TestKernelFacts: the path and rule errors KERNEL-FACTS.md records.
func TestKernelFacts(t *testing.T) {
	e := newEnv(t)
	e.setup("wt", 2<<30)
	e.must("--emulator-add-device", "--device", "/dev/disk/by-id/nvme-X-part1", "--size", "1073741824", "--kernel-name", "/dev/nvme0n1p1")
	out, errs, rc := e.run("-S", "-d", "/dev/nvme0n1p1", "-i", "2")
	if rc != 1 || out != "" || errs != "Please use correct by-id path to the device /dev/nvme0n1p1.\n" {
		t.Errorf("kernel name: rc %d %q %q", rc, out, errs)
	}
	out, errs, rc = e.run("-S", "-d", "/dev/disk/by-id/nope", "-i", "2")
	if rc != 1 || out != "Failed to query device status.\nTry `casadm --help | -H' for more information.\n" || errs != "Error during options handling\n" {
		t.Errorf("missing path: rc %d %q %q", rc, out, errs)
	}
	good := "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1.00\n1,metadata&done,,1.00\n"
	e.load(good)
	for rule, msg := range map[string]string{
		"bogus:1&done":                             "Unexpected classification rule condition",
		"request_size:le:4096&&done":               "Unexpected classification rule condition",
		"request_size:xx:5&done":                   "Invalid classification rule syntax",
		"lba:ge:abc&done":                          "Invalid classification rule syntax",
		"io_direction:sideways&done":               "Invalid classification rule syntax",
		"request_size&done":                        "Invalid classification rule syntax",
		"process_name:" + strings.Repeat("p", 300): "Invalid classification rule syntax",
		"core_id:eq:99999&done":                    "Invalid classification rule syntax",
		"request_size:le:4096&":                    "Invalid classification rule syntax",
		"io_direction:write|":                      "Invalid classification rule syntax",
	} {
		out, errs, rc := e.runStdin("IO class id,IO class name,Eviction priority,Allocation\n1,"+rule+",1,1\n", "-C", "-C", "-i", "1", "-f", "-")
		if rc != 1 || out != "" || errs != msg+"\n" {
			t.Errorf("%s: rc %d %q %q", rule, rc, out, errs)
		}
	}
	if got := e.must("-C", "-L", "-i", "1", "-o", "csv"); got != good {
		t.Errorf("a refused load changed the table: %q", got)
	}
}

// TestWriteBackAndFlush: write-back keeps writes dirty in the cache; a flush writes them
// to the core (cleaner counters) and leaves the lines clean.
func TestWriteBackAndFlush(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	e.io(1, "size=4096,dir=write,lba=0", 100)
	s := e.cacheStats()
	if v(s.Usage.Dirty) != 100 || v(s.Blocks.CoreWrites) != 0 || v(s.Blocks.ExportedWrites) != 100 || v(s.Blocks.CacheWrites) != 100 {
		t.Fatalf("after wb writes: %+v %+v", *s.Usage.Dirty, *s.Blocks)
	}
	if s.Cache.DirtyFor != "Cache clean" {
		e.now = "1065"
		if got := e.cacheStats().Cache.DirtyFor; got != "1 [m] 5 [s]" {
			t.Errorf("dirty for %q", got)
		}
	}
	e.must("-F", "-i", "1")
	s = e.cacheStats()
	if v(s.Usage.Dirty) != 0 || v(s.Usage.Occupancy) != 100 || v(s.Blocks.CleanerCoreWrites) != 100 || v(s.Requests.Cleaner) != 100 {
		t.Errorf("after flush: usage %+v blocks %+v", *s.Usage, *s.Blocks)
	}
	// Overwrites hit and stay in the same lines.
	e.io(1, "size=4096,dir=write,lba=0", 10, "--stride", "0")
	s = e.cacheStats()
	if v(s.Requests.WriteHits) != 10 || v(s.Usage.Occupancy) != 100 || v(s.Usage.Dirty) != 1 {
		t.Errorf("overwrites: hits %d occ %d dirty %d", v(s.Requests.WriteHits), v(s.Usage.Occupancy), v(s.Usage.Dirty))
	}
	// Reads of cached lines hit.
	e.io(1, "size=4096,dir=read,lba=0", 100)
	if s = e.cacheStats(); v(s.Requests.ReadHits) != 100 || v(s.Blocks.CacheReads) != 100 {
		t.Errorf("read hits %d", v(s.Requests.ReadHits))
	}
}

// TestSetCacheMode: leaving wb needs -f; -f yes flushes before the switch; nothing is lost.
func TestSetCacheMode(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	e.io(2, "size=8192,dir=write,lba=0", 50)
	if out := e.fail("-Q", "-c", "wt", "-i", "1"); out != "Error: Required parameter (‘--flush-cache’) was not specified.\n" {
		t.Errorf("no -f: %q", out)
	}
	out := e.must("-Q", "-c", "wt", "-i", "1", "-f", "yes")
	if out != "CAS is currently flushing dirty data to primary storage devices.\n" {
		t.Errorf("stdout %q", out)
	}
	s := e.cacheStats()
	if v(s.Usage.Dirty) != 0 || v(s.Blocks.CleanerCoreWrites) != 100 || s.Cache.WritePolicy != "wt" {
		t.Errorf("after -Q: dirty %d cleaner writes %d mode %s", v(s.Usage.Dirty), v(s.Blocks.CleanerCoreWrites), s.Cache.WritePolicy)
	}
	// Write-through writes reach the core at once.
	e.io(1, "size=4096,dir=write,lba=0", 10)
	if s = e.cacheStats(); v(s.Blocks.CoreWrites) != 10 || v(s.Usage.Dirty) != 0 {
		t.Errorf("wt: core writes %d dirty %d", v(s.Blocks.CoreWrites), v(s.Usage.Dirty))
	}
	// wt -> wb needs no -f; -f no out of wb prints casadm's migration notice.
	e.must("-Q", "-c", "wb", "-i", "1")
	e.io(1, "size=4096,dir=write,lba=800", 4)
	if out := e.must("-Q", "-c", "pt", "-i", "1", "-f", "no"); !strings.HasPrefix(out, "CAS is currently migrating from Write-Back to Pass-Through mode.\n") {
		t.Errorf("-f no: %q", out)
	}
	if e.snapshot().LostDirtyBytes != 0 || v(e.cacheStats().Usage.Dirty) != 0 {
		t.Error("dirty data lost or left")
	}
}

// TestRemoveCore: -R flushes the core's dirty data, then removes it (casadm's real
// behaviour); -R -f drops it; an inactive core's dirty data needs --remove-inactive -f.
func TestRemoveCore(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	e.io(1, "size=4096,dir=write,lba=0", 30)
	e.io(2, "size=4096,dir=write,lba=0", 20)
	e.must("-R", "-i", "1", "-j", "1")
	st := e.snapshot()
	if st.LostDirtyBytes != 0 || len(st.Caches[0].Cores) != 1 || dirtyLines(st.Caches[0], -1) != 20 {
		t.Fatalf("after -R: lost %d, cores %d, dirty %d", st.LostDirtyBytes, len(st.Caches[0].Cores), dirtyLines(st.Caches[0], -1))
	}
	e.must("-R", "-i", "1", "-j", "2", "-f")
	if lost := e.snapshot().LostDirtyBytes; lost != 20*4096 {
		t.Errorf("-R -f lost %d bytes, want %d", lost, 20*4096)
	}
	if out := e.fail("-R", "-i", "1", "-j", "2"); out != "Error while removing core device 2 from cache instance 1\nCore ID does not exist\n" {
		t.Errorf("%q", out)
	}
}

// TestStopLoadReboot: -T flushes; after a power loss the metadata keeps the dirty data,
// a new start is refused, a load brings everything back with the missing core inactive,
// and --remove-inactive refuses to drop its dirty data without -f.
func TestStopLoadReboot(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	e.load("IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n5,request_size:le:4096&done,3,0.5\n")
	e.io(1, "size=4096,dir=write,lba=0", 10)
	e.io(2, "size=4096,dir=write,lba=0", 7)
	e.must("--emulator-reboot")
	if out := e.must("-L", "-o", "csv"); out != "No caches running\n" {
		t.Fatalf("after reboot: %q", out)
	}
	out := e.fail("-S", "-d", cacheDev, "-i", "1", "-c", "wb")
	if out != "Error inserting cache 1\nOld metadata found on device\nPlease load cache metadata using --load option or use --force to\n discard on-disk metadata and start fresh cache instance.\n" {
		t.Errorf("start over metadata: %q", out)
	}
	if out := e.fail("-S", "-d", cacheDev, "-l", "-i", "1"); out != "Use of 'load' with 'force', 'cache-id', 'cache-mode' or 'cache-line-size' simultaneously is forbidden.\n" {
		t.Errorf("%q", out)
	}
	e.must("--emulator-remove-device", "--device", qlc2)
	out, errs, rc := e.run("-S", "-d", cacheDev, "-l")
	if rc != 0 || out != "Successfully added cache instance 1\n" || errs != "WARNING: Cache is in incomplete state - at least one core is inactive\n" {
		t.Fatalf("load: rc %d %q %q", rc, out, errs)
	}
	list := e.must("-L", "-o", "csv", "-b")
	if !strings.Contains(list, "cache,1,"+cacheDev+",Incomplete,wb,-\n") || !strings.Contains(list, "core,2,"+qlc2+",Inactive,-,/dev/cas1-2\n") {
		t.Errorf("list after load:\n%s", list)
	}
	if got := e.must("-C", "-L", "-i", "1", "-o", "csv"); !strings.Contains(got, "5,request_size:le:4096&done,3,0.50") {
		t.Errorf("classes not restored: %s", got)
	}
	if s := e.cacheStats(); v(s.Usage.Dirty) != 17 || s.Cache.InactiveCoreDevices != 1 || v(s.Usage.InactiveDirty) != 7 {
		t.Errorf("after load: dirty %d inactive cores %d inactive dirty %d", v(s.Usage.Dirty), s.Cache.InactiveCoreDevices, v(s.Usage.InactiveDirty))
	}
	// The recovery put the lines in class 0, as the real module's did.
	if c0, c5 := e.classStats(0), e.classStats(5); v(c0.Usage.Dirty) != 17 || v(c5.Usage.Occupancy) != 0 {
		t.Errorf("after the recovery: class 0 dirty %d, class 5 occupancy %d", v(c0.Usage.Dirty), v(c5.Usage.Occupancy))
	}
	if out := e.fail("-F", "-i", "1"); out != "Cache is in incomplete state - at least one core is inactive\n" {
		t.Errorf("flush of an incomplete cache: %q", out)
	}
	if out := e.fail("-R", "-i", "1", "-j", "2"); out != "Core is inactive. To manage the inactive core use '--remove-inactive' command.\n" {
		t.Errorf("%q", out)
	}
	if out := e.fail("--remove-inactive", "-i", "1", "-j", "2"); !strings.Contains(out, "The cache contains dirty data assigned to the core. If you want to continue, please use --force option.\nWarning: the data will be lost") {
		t.Errorf("%q", out)
	}
	e.must("--remove-inactive", "-i", "1", "-j", "2", "-f")
	if lost := e.snapshot().LostDirtyBytes; lost != 7*4096 {
		t.Errorf("lost %d", lost)
	}
	// A clean stop keeps nothing dirty; the next load is clean.
	if out := e.must("-T", "-i", "1"); out != "Successfully stopped cache 1\n" {
		t.Errorf("stop: %q", out)
	}
	e.must("-S", "-d", cacheDev, "-l")
	if s := e.cacheStats(); v(s.Usage.Dirty) != 0 || v(s.Usage.Occupancy) != 10 || s.Cache.WritePolicy != "wb" {
		t.Errorf("after stop and load: %+v", *s.Usage)
	}
}

// TestFailedCache: after the device fails the cache is "Not running" and IO that needs the
// device fails, as on the real v26.03.2 module (docs/opencas-real-module.md): writes into a
// caching class and reads of cached lines get EIO and count a cache error; a read of nothing
// cached is served from the core (its cache fill fails); pass-through IO works. What was
// dirty stays; a flush fails; -T -n stops the cache with errors and a load brings the dirty
// lines back.
func TestFailedCache(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	e.load("IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,request_size:ge:65536&done,255,0\n")
	e.io(1, "size=4096,dir=write,lba=0", 5)
	e.must("--emulator-fail-cache", "1")
	ioFails := func(spec string, count int) {
		t.Helper()
		out := e.fail("--emulator-io", "--cache-id", "1", "--core-id", "1", "--io", spec, "--count", strconv.Itoa(count))
		if want := fmt.Sprintf("casadm-emulator: --emulator-io: %d of %d requests failed: Input/output error (the cache device failed)\n", count, count); out != want {
			t.Errorf("%s: %q, want %q", spec, out, want)
		}
	}
	ioFails("size=4096,dir=write,lba=100", 8)
	ioFails("size=4096,dir=read,lba=0", 3)
	e.io(1, "size=4096,dir=read,lba=5000", 2)
	e.io(1, "size=65536,dir=write,lba=9000", 1)
	s := e.cacheStats()
	if s.Cache.Status.State != "Not running" || s.Cache.Device != cacheDev || v(s.Errors.CacheWrite) != 8+2 || v(s.Errors.CacheRead) != 3 ||
		v(s.Requests.PassThroughWrites) != 1 || v(s.Requests.ReadFullMisses) != 2 || v(s.Blocks.CoreReads) != 2 || v(s.Blocks.CoreWrites) != 16 || v(s.Usage.Dirty) != 5 {
		t.Errorf("failed cache: status %s device %s errors %+v requests %+v blocks %+v", s.Cache.Status, s.Cache.Device, *s.Errors, *s.Requests, *s.Blocks)
	}
	if out := e.must("-L", "-o", "csv", "-b"); !strings.Contains(out, "\ncache,1,"+cacheDev+",Not running,wb,-\n") {
		t.Errorf("list: %q", out)
	}
	if out := e.fail("-F", "-i", "1"); out != "I/O error\n" {
		t.Errorf("flush: %q", out)
	}
	if out := e.fail("-T", "-i", "1"); !strings.Contains(out, "kernel BUG") {
		t.Errorf("stop with flush: %q", out)
	}
	if out := e.fail("-T", "-i", "1", "-n"); out != "Stopped cache 1 with errors\nError while writing to cache device\n" {
		t.Errorf("stop without flush: %q", out)
	}
	e.must("-S", "-d", cacheDev, "-l")
	if s := e.cacheStats(); s.Cache.Status.State != "Running" || v(s.Usage.Dirty) != 5 {
		t.Errorf("after the load: status %s dirty %d", s.Cache.Status, v(s.Usage.Dirty))
	}
}

// TestPinnedAndAllocation: a pinned class keeps its lines under pressure from any class;
// allocation 0 is pass-through.
func TestPinnedAndAllocation(t *testing.T) {
	e := newEnv(t)
	e.setup("wt", refDeviceSize) // 7264 lines
	e.must("-X", "-n", "seq-cutoff", "-i", "1", "-p", "never")
	e.load("IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,lba:lt:8192&done,,0.5\n2,io_direction:read&done,0,0\n")
	e.io(1, "size=4096,dir=write,lba=0", 1024)
	e.io(1, "size=4096,dir=write,lba=100000", 3*7264)
	if got := v(e.classStats(1).Usage.Occupancy); got != 1024 {
		t.Errorf("pinned class holds %d, want 1024", got)
	}
	e.io(1, "size=4096,dir=read,lba=200000", 10)
	s := e.classStats(2)
	if v(s.Requests.PassThroughReads) != 10 || v(s.Usage.Occupancy) != 0 {
		t.Errorf("allocation 0: %+v", *s.Requests)
	}
	// A pinned class over its own cap (50% = 3632) recycles its own lines.
	e.io(1, "size=4096,dir=write,lba=0", 5000, "--stride", "4096")
	if got := v(e.classStats(1).Usage.Occupancy); got > 3632 {
		t.Errorf("pinned class holds %d, over its 50%% cap", got)
	}
}

// TestConcurrentCalls: the state file lock serialises concurrent casadm calls.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 2<<30)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var b syncBuffer
			if rc := run([]string{"casadm", "--emulator-io", "--cache-id", "1", "--core-id", "1", "--io",
				fmt.Sprintf("size=4096,dir=write,lba=%d", i*1000), "--count", "25"}, strings.NewReader(""), &b, &b, e.getenv); rc != 0 {
				t.Errorf("io: %s", b.String())
			}
		}(i)
	}
	wg.Wait()
	if s := e.cacheStats(); v(s.Requests.WriteTotal) != 200 || v(s.Usage.Occupancy) != 200 {
		t.Errorf("after 8x25 concurrent writes: %d writes, %d blocks", v(s.Requests.WriteTotal), v(s.Usage.Occupancy))
	}
}

// TestArgumentErrors: casadm's generic option errors.
func TestArgumentErrors(t *testing.T) {
	e := newEnv(t)
	e.setup("wt", 2<<30)
	try := "Try `casadm --help | -H' for more information.\n"
	for args, want := range map[string]string{
		"":                             "No command given.\n" + try,
		"-Y":                           "Unrecognized command -Y\n" + try,
		"-T":                           "Missing required option -i/--cache-id\n" + try,
		"-T -i 1 -i 1":                 "Option supplied more than once -i/--cache-id\n" + try,
		"-T -i 1 -q":                   "Unrecognized option -q\n" + try,
		"-T -i":                        "Missing required argument in -i\n" + try,
		"-T -i 0":                      "Invalid cache id, must be in the range 1-16384.\nError during options handling\n" + try,
		"-T -i x":                      "Invalid cache id, must be a correct unsigned decimal integer.\nError during options handling\n" + try,
		"-X -n cleaning -i 1":          "Error: No parameters specified!\n",
		"-X -n nope -i 1":              "Unrecognized namespace entry.\n" + try,
		"-G -n seq-cutoff -i 1":        "Missing required option -j/--core-id\n" + try,
		"-S -d " + cacheDev + " -x 12": "Invalid cache line size, must be a power of 2.\nError during options handling\n" + try,
		"-C -L":                        "Option '--cache-id (-i)' is missing\n",
		"-C -i 1":                      "Invalid or missing first sub-command parameter. Expected one of the: {--load-config|--list}\n",
		"-P -i 2":                      "Cache Id 2 not running\n",
		"-P -i 1 -j 9":                 "No such core device in cache.\n",
		"-Q -c xx -i 1":                "Error during options handling\n" + try,
	} {
		out, rc := e.combined(strings.Fields(args)...)
		if rc != 1 || out != want {
			t.Errorf("casadm %s: rc %d\n got %q\nwant %q", args, rc, out, want)
		}
	}
}

// TestRequestKeepsItsOwnLines: while a request of several lines maps its missing lines,
// eviction never takes a line of that request (OCF write-locks them; its LRU eviction skips
// lines of the request's core within core_line_first..core_line_last). Write-through, so
// every line is clean and may be evicted. A full cache of two 4 KiB lines holds 0 and 1; a
// 12 KiB write to lines 1-3 must take two lines from class 0 itself (more would put it over
// its cap): line 0 can go, line 1 is its own, so the request cannot be mapped whole and
// goes pass-through, as OCF does on a mapping error; what it mapped is unmapped again and
// the pass-through invalidates line 1. (Evicting line 1 for line 3 crashed the model once.)
// cachesim's TestRequestKeepsItsOwnLines is the same case.
func TestRequestKeepsItsOwnLines(t *testing.T) {
	setup := func(lines uint64, classes ...Class) (*model, *Core, *ioclass.Evaluator) {
		ca := newCache(1, &Device{Path: "/dev/disk/by-id/fast", SizeBytes: 64 * gib}, "wt", 4, false)
		ca.Lines = lines
		ca.Classes[0].Priority = 22 // below class 1's 200: class 0 may evict class 1
		ca.Classes = append(ca.Classes, classes...)
		k := newCore(1, "/dev/disk/by-id/qlc")
		k.SeqCutoffPolicy = "never"
		ca.Cores = []*Core{k}
		cfg := ioclass.Config{}
		for _, cl := range ca.Classes {
			prio := cl.Priority
			cfg.Classes = append(cfg.Classes, ioclass.Class{ID: cl.ID, Rule: cl.Name, Priority: &prio, Allocation: "1"})
		}
		ev, err := ioclass.NewEvaluator(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return newModel(ca, 0), k, ev
	}
	held := func(m *model) string {
		var out []string
		for _, l := range m.sortedLines() {
			out = append(out, fmt.Sprintf("%d:%d", l.Addr, l.Class))
		}
		return fmt.Sprint(out)
	}
	m, k, ev := setup(2)
	for _, lba := range []uint64{0, 8} {
		m.submit(k, ev, ioclass.IO{Write: true, Size: 4096, LBA: lba})
	}
	m.submit(k, ev, ioclass.IO{Write: true, Size: 12288, LBA: 8})
	if cnt := k.stats(0); cnt.WrPT != 1 || cnt.PTWr != 12288 || cnt.WrTotal != 2 {
		t.Errorf("the 12 KiB write: %d pass-through (%d bytes), %d serviced; want 1, 12288, 2", cnt.WrPT, cnt.PTWr, cnt.WrTotal)
	}
	if got := held(m); got != "[]" {
		t.Errorf("lines %s cached; line 0 was evicted for line 2, which was unmapped again, and the pass-through invalidates 1", got)
	}
	// A line of the request further on is not evicted either. Class 1 (priority 200,
	// requests of 4 KiB) holds 3 and then 0, 3 least recently used; the 12 KiB write of
	// class 0 to 1-3 maps 1 into the free line, then takes line 2 from class 1, whose least
	// recently used line, 3, is the request's: it evicts 0.
	m, k, ev = setup(3, Class{ID: 1, Name: "request_size:le:4096&done", Priority: 200, MaxSize: 100})
	for _, lba := range []uint64{24, 0} {
		m.submit(k, ev, ioclass.IO{Write: true, Size: 4096, LBA: lba})
	}
	m.submit(k, ev, ioclass.IO{Write: true, Size: 12288, LBA: 8})
	if s := k.stats(0); s.WrPT != 0 || s.WrTotal != 1 || s.WrPartialMiss != 1 {
		t.Errorf("write to 1-3: %d pass-through, %d serviced, %d partial misses; want 0, 1, 1", s.WrPT, s.WrTotal, s.WrPartialMiss)
	}
	if got := held(m); got != "[1:0 2:0 3:0]" {
		t.Errorf("cached %s, want lines 1-3 in class 0", got)
	}
}
