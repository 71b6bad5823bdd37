package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/casadm"
)

// realLifecycle is the agent's first cache pass on the real v26.03.2 module
// (test/cache/testdata/opencas-v26.03.2/README.md).
const realLifecycle = "../../test/cache/testdata/opencas-v26.03.2/"

func TestReleaseEnv(t *testing.T) {
	e := newEnv(t)
	e.release = "v26.3"
	out, errs, rc := e.run("-L", "-o", "csv")
	want := `casadm-emulator: CASADM_EMULATOR_RELEASE="v26.3": unknown release; accepted values: ["master" "v26.03.2"] (unset means master)` + "\n"
	if rc != 1 || out != "" || errs != want {
		t.Errorf("rc %d, stdout %q, stderr %q; want 1, nothing, %q", rc, out, errs, want)
	}
	if _, err := os.Stat(e.state); !os.IsNotExist(err) {
		t.Errorf("an unknown release touched the state file: %v", err)
	}
	// "master" is the same as unset.
	e.release = ""
	guestWorkload(e)
	unset := e.must("-P", "-i", "1", "-o", "csv")
	e.release = "master"
	if got := e.must("-P", "-i", "1", "-o", "csv"); got != unset {
		t.Errorf("master:\n%s\nunset:\n%s", got, unset)
	}
}

// TestReleaseStatsMatchRecording: in v26.03.2 mode, the guest's workload gives the -P
// outputs the real v26.03.2 module printed (testdata/guest-v26.03.2), header for header and
// value for value, except what the emulator does not model: the cache size and metadata
// footprint (docs/cache.md), and OCF moving the line udev read from class 0 to class 3 when
// the class 3 pass-through read touched it.
func TestReleaseStatsMatchRecording(t *testing.T) {
	e := newEnv(t)
	e.release = "v26.03.2"
	guestWorkload(e)
	e.now = "1014" // the real cache had been dirty for 14 s
	for _, c := range []struct {
		file  string
		argv  []string
		skips map[string][]string // record's first field → columns not compared
	}{
		{"casadm_P_i_1_o_csv.after-dd.txt", []string{"-P", "-i", "1", "-o", "csv"}, map[string][]string{
			"1": {"Cache Size [4KiB Blocks]", "Cache Size [GiB]", "Metadata Memory Footprint [MiB]", "Free [4KiB Blocks]"}}},
		{"casadm_P_i_1_d_o_csv.after-dd.txt", []string{"-P", "-i", "1", "-d", "-o", "csv"}, map[string][]string{
			"0": {"Occupancy [4KiB Blocks]", "Clean [4KiB Blocks]", "Clean [%]"},
			"3": {"Occupancy [4KiB Blocks]", "Clean [4KiB Blocks]", "Clean [%]"}}},
	} {
		raw, err := os.ReadFile(guestDir + c.file)
		if err != nil {
			t.Fatal(err)
		}
		real, emu := readCSV(t, string(raw)), readCSV(t, e.must(c.argv...))
		if !slices.Equal(real[0], emu[0]) {
			t.Errorf("%s: header\n%q\nreal\n%q", c.file, emu[0], real[0])
			continue
		}
		if len(real) != len(emu) {
			t.Errorf("%s: %d records, real %d", c.file, len(emu)-1, len(real)-1)
			continue
		}
		compared := 0
		for i := 1; i < len(real); i++ {
			for j, h := range real[0] {
				if slices.Contains(c.skips[real[i][0]], h) {
					continue
				}
				compared++
				if real[i][j] != emu[i][j] {
					t.Errorf("%s record %s, %s: emulator %q, real %q", c.file, real[i][0], h, emu[i][j], real[i][j])
				}
			}
		}
		t.Logf("%s: %d values equal", c.file, compared)
	}
}

// TestReleaseCleanerCounters: v26.03.2 has no cleaner rows; after alru had cleaned the
// 4096 dirty blocks, the real module counted them in "Writes to core(s)" (16384 → 20480) and
// "Reads from cache" (0 → 4096), and not in "Total requests" (3-cache-off.jsonl #1). master
// mode prints them in their own rows; the QLC writes the agent derives agree in both modes.
func TestReleaseCleanerCounters(t *testing.T) {
	real := recordedCall(t, "3-cache-off.jsonl", "-P", "-i", "1", "-o", "csv")
	recs, err := casadm.ParseStats(strings.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	want := recs[0].Blocks
	qlc := map[string]uint64{}
	for _, rel := range []string{"v26.03.2", "master"} {
		e := newEnv(t)
		e.release = rel
		guestWorkload(e)
		e.must("-F", "-i", "1") // the emulator's cleaner: the real one was alru
		s := e.cacheStats()
		b, q := s.Blocks, s.Requests
		qlc[rel] = v(b.CoreWrites) + v(b.CleanerCoreWrites)
		userReqs := v(q.Serviced) + v(q.PassThroughReads) + v(q.PassThroughWrites)
		if rel == "master" {
			if v(b.CoreWrites) != 16384 || v(b.CleanerCoreWrites) != 4096 || v(q.Total) != userReqs+1024 {
				t.Errorf("master: core writes %d + cleaner %d, total requests %d (user %d); want 16384 + 4096, user + 1024 cleaner requests",
					v(b.CoreWrites), v(b.CleanerCoreWrites), v(q.Total), userReqs)
			}
			continue
		}
		if b.CleanerCoreWrites != nil || b.CleanerCacheReads != nil || q.Cleaner != nil {
			t.Errorf("v26.03.2 printed cleaner rows: %+v %+v", b, q)
		}
		if v(b.CoreWrites) != v(want.CoreWrites) || v(b.CacheReads) != v(want.CacheReads) || v(q.Total) != userReqs {
			t.Errorf("v26.03.2: writes to core(s) %d, reads from cache %d, total requests %d (user %d); real %d, %d, user requests only",
				v(b.CoreWrites), v(b.CacheReads), v(q.Total), userReqs, v(want.CoreWrites), v(want.CacheReads))
		}
	}
	if qlc["master"] != qlc["v26.03.2"] {
		t.Errorf("blocks written to the core: master %d, v26.03.2 %d", qlc["master"], qlc["v26.03.2"])
	}
}

// TestReleaseSeqCutoffRows: -G -n seq-cutoff as the real v26.03.2 printed it, and master's
// two rows.
func TestReleaseSeqCutoffRows(t *testing.T) {
	argv := []string{"-G", "-n", "seq-cutoff", "-i", "1", "-j", "1", "-o", "csv"}
	real := recordedCall(t, "1-bare-to-running.jsonl", argv...)
	e := newEnv(t)
	e.setup("wb", 1<<30)
	e.must("-X", "-n", "seq-cutoff", "-i", "1", "-j", "1", "-t", "512")
	e.release = "v26.03.2"
	if got := e.must(argv...); got != real {
		t.Errorf("v26.03.2:\n%s\nreal:\n%s", got, real)
	}
	e.release = ""
	if got, want := e.must(argv...), "Parameter name,Value\nSequential cutoff threshold [KiB],512\nSequential cutoff policy,full\n"; got != want {
		t.Errorf("master:\n%s\nwant:\n%s", got, want)
	}
}

// recordedCall is the stdout of the first call with argv in a real-module transcript.
func recordedCall(t *testing.T, file string, argv ...string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(realLifecycle, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Argv   []string `json:"argv"`
			Stdout string   `json:"stdout"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if slices.Equal(c.Argv[1:], argv) {
			return c.Stdout
		}
	}
	t.Fatalf("%s: no call casadm %s", file, strings.Join(argv, " "))
	return ""
}

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return recs
}

// TestReleaseClassIDs: released casadm knows ids 0-32 and starts a cache with class 0 alone;
// master adds class 33 "prefetch" (../shared/reference/opencas/FORMATS.md, IO class id).
func TestReleaseClassIDs(t *testing.T) {
	for _, c := range []struct {
		release, list, loadErr, statsErr string
	}{
		{"v26.03.2", "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,255,1.00\n",
			"Invalid id, must be in the range 0-32.\nCannot parse configuration file - error in line 3 in column 1 (IO class id).\n",
			"Invalid IO class id, must be in the range 0-32.\nError during options handling\n"},
		{"master", "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,255,1.00\n33,prefetch,255,1.00\n",
			"", ""},
	} {
		t.Run(c.release, func(t *testing.T) {
			e := newEnv(t)
			e.release = c.release
			e.must("--emulator-add-device", "--device", cacheDev, "--size", "17177772032")
			e.must("-S", "-d", cacheDev, "-i", "1", "-c", "wb", "-x", "16")
			if got := e.must("-C", "-L", "-i", "1", "-o", "csv"); got != c.list {
				t.Errorf("classes of a new cache:\n%s\nwant\n%s", got, c.list)
			}
			if c.loadErr == "" {
				return
			}
			f := filepath.Join(t.TempDir(), "prism.csv")
			csv := "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n33,request_size:le:4096&done,1,1\n"
			if err := os.WriteFile(f, []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, errs, rc := e.run("-C", "-C", "-i", "1", "-f", f); rc != 1 || out != "" || errs != c.loadErr {
				t.Errorf("loading class 33: rc %d, stdout %q, stderr %q; want 1, nothing, %q", rc, out, errs, c.loadErr)
			}
			if _, errs, rc := e.run("-P", "-i", "1", "--io-class-id", "33", "-o", "csv"); rc != 1 || errs != c.statsErr {
				t.Errorf("-P of class 33: rc %d, stderr %q; want 1, %q", rc, errs, c.statsErr)
			}
		})
	}
}

// TestFreshCacheShowsTheAdapterDefaults: the fresh-cache values internal/host/casadm states
// (the agent sets only what differs from them) are what a fresh cache shows with -G.
func TestFreshCacheShowsTheAdapterDefaults(t *testing.T) {
	e := newEnv(t)
	e.setup("wb", 1<<30)
	for _, spec := range []casadm.ParamSpec{casadm.CleaningPolicy, casadm.AlruWakeUp, casadm.AlruStaleBuffer,
		casadm.AlruFlushMaxBuffers, casadm.AlruActivityThreshold, casadm.AcpWakeUp, casadm.AcpFlushMaxBuffers,
		casadm.PromotionPolicy, casadm.NhitThreshold, casadm.NhitTrigger, casadm.SeqCutoffThreshold, casadm.SeqCutoffPolicy} {
		args := []string{"-G", "-n", spec.Namespace, "-i", "1", "-o", "csv"}
		if spec.Namespace == "seq-cutoff" {
			args = append(args, "-j", "1")
		}
		ps, err := casadm.ParseParams(strings.NewReader(e.must(args...)))
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := ps.Get(spec.Title); !ok || p.Value != spec.Default {
			t.Errorf("-G -n %s: %q is %q (found %v), the adapter says %q", spec.Namespace, spec.Title, p.Value, ok, spec.Default)
		}
	}
}
