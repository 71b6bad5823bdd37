package cache

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/cache"
	"github.com/prism-storage/prism/internal/hostexec"
)

const realDir = "testdata/opencas-v26.03.2/"

// call is one casadm call as test/guest/applyplan --record writes it.
type call struct {
	Argv   []string `json:"argv"`
	Stdin  string   `json:"stdin,omitempty"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr,omitempty"`
	Exit   int      `json:"exit"`
}

// masterOnlyColumns are the -P columns the emulator prints (it follows open-cas-linux master,
// FORMATS.md) and the v26.03.2 release does not.
var masterOnlyColumns = []string{"Prefetch Policy",
	"Prefetch: readahead [Requests]", "Prefetch: readahead [%]", "Cleaner [Requests]", "Cleaner [%]",
	"User requests [Requests]", "User requests [%]",
	"Prefetch core reads: readahead [4KiB Blocks]", "Prefetch core reads: readahead [%]",
	"Prefetch cache writes: readahead [4KiB Blocks]", "Prefetch cache writes: readahead [%]",
	"Cleaner cache reads [4KiB Blocks]", "Cleaner cache reads [%]",
	"Cleaner core writes [4KiB Blocks]", "Cleaner core writes [%]"}

// releaseOnlyParams are -G rows v26.03.2 prints and master (the emulator) does not.
var releaseOnlyParams = []string{"Sequential cutoff promotion request count threshold"}

// TestRealModuleLifecycleOnEmulator runs the agent's cache pass on the emulator with the plan
// it ran with on the real module and compares, call by call, what the agent ran and what it
// was answered: the same argv in the same order, the same exit status, the same output except
// for the documented differences between the v26.03.2 release and master, and the statistics'
// numbers (the real cache saw udev's reads; its metadata takes another share of the partition).
func TestRealModuleLifecycleOnEmulator(t *testing.T) {
	h, np, parts := newRealHost(t)
	ctx := context.Background()
	off := np
	off.Cache = nil
	for _, pass := range []struct {
		file string
		plan *prismv1.NodePlan
		want prismv1.CacheState
	}{
		{"1-bare-to-running.jsonl", &np, prismv1.CacheRunning},
		{"2-second-pass.jsonl", &np, prismv1.CacheRunning},
		{"3-cache-off.jsonl", &off, prismv1.CacheStopped},
		{"4-cache-off-again.jsonl", &off, prismv1.CacheStopped},
	} {
		rec := &transcriber{inner: hostexec.Local{}}
		res := cache.Runner{Exec: rec, HostRoot: h.root}.ReconcileNode(ctx, pass.plan, nil, parts, prismv1.ModeApply)
		if len(res.Caches) != 1 || res.Caches[0].State != pass.want {
			t.Errorf("%s: the emulator's pass ended with %+v, want %s as on the real module", pass.file, res.Caches, pass.want)
		}
		real := readCalls(t, realDir+pass.file)
		if len(rec.calls) != len(real) {
			t.Errorf("%s: the agent ran %d casadm calls on the emulator, %d on the real module", pass.file, len(rec.calls), len(real))
		}
		for i := range min(len(real), len(rec.calls)) {
			compareCall(t, pass.file, i, real[i], rec.calls[i])
		}
	}
	if d := h.dump(); d.LostDirtyBytes != 0 || len(d.Caches) != 0 {
		t.Errorf("after the cache went off: %d caches, %d dirty bytes lost", len(d.Caches), d.LostDirtyBytes)
	}
}

// newRealHost is an emulated host with the guest's devices (the real run's by-id paths and
// sizes, the cache partition's kernel name) and a zeroed cache partition to scan; with the
// real run's node plan and partitions.
func newRealHost(t *testing.T) (*host, prismv1.NodePlan, []prismv1.PartitionStatus) {
	t.Helper()
	h := newHost(t)
	np, parts, root := realPlan(t)
	h.root = root
	h.casadm("--emulator-add-device", "--device", parts[2].Path, "--size", "17177772032", "--kernel-name", "/dev/nvme2n1p3")
	h.casadm("--emulator-add-device", "--device", np.FastDevices[0].Slots[0].DataDevice, "--size", strconv.Itoa(64<<30))
	return h, np, parts
}

// realPlan reads the real run's node plan and partitions and makes a host root holding a
// zeroed cache partition for the agent to scan.
func realPlan(t *testing.T) (prismv1.NodePlan, []prismv1.PartitionStatus, string) {
	t.Helper()
	var np prismv1.NodePlan
	var parts []prismv1.PartitionStatus
	readJSON(t, realDir+"nodeplan.json", &np)
	readJSON(t, realDir+"partitions.json", &parts)
	root := t.TempDir()
	part := filepath.Join(root, parts[2].Path)
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	return np, parts, root
}

func compareCall(t *testing.T, file string, i int, real, emu call) {
	t.Helper()
	where := file + " #" + strconv.Itoa(i) + " casadm " + strings.Join(real.Argv[1:], " ")
	if !slices.Equal(real.Argv, emu.Argv) {
		t.Errorf("%s: the agent ran %q on the emulator", where, emu.Argv)
		return
	}
	if real.Exit != emu.Exit || real.Stderr != emu.Stderr {
		t.Errorf("%s: exit %d %q on the emulator, %d %q on the real module", where, emu.Exit, emu.Stderr, real.Exit, real.Stderr)
	}
	switch {
	case slices.Contains(real.Argv, "-P"):
		// Numbers differ; the columns must be the release's plus master's own.
		rh, eh := csvHeader(t, real.Stdout), csvHeader(t, emu.Stdout)
		var extra []string
		for _, h := range eh {
			if !slices.Contains(rh, h) {
				extra = append(extra, h)
			}
		}
		var missing []string
		for _, h := range rh {
			if !slices.Contains(eh, h) {
				missing = append(missing, h)
			}
		}
		for _, h := range extra {
			if !slices.Contains(masterOnlyColumns, h) {
				missing = append(missing, "(emulator only) "+h)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: columns differ: %q", where, missing)
		}
	case slices.Contains(real.Argv, "-G"):
		var rows []string
		for _, l := range strings.SplitAfter(real.Stdout, "\n") {
			if name, _, _ := strings.Cut(l, ","); !slices.Contains(releaseOnlyParams, name) {
				rows = append(rows, l)
			}
		}
		if got := strings.Join(rows, ""); got != emu.Stdout {
			t.Errorf("%s: the emulator printed\n%s\nthe real module\n%s", where, emu.Stdout, real.Stdout)
		}
	default:
		if real.Stdout != emu.Stdout {
			t.Errorf("%s: the emulator printed\n%s\nthe real module\n%s", where, emu.Stdout, real.Stdout)
		}
	}
}

// TestAgentOnRealModuleOutputs runs the agent's cache passes against the real module's
// recorded answers (no emulator): it must run exactly the recorded calls, reach the same
// states, and read the statistics the way the real counters say.
func TestAgentOnRealModuleOutputs(t *testing.T) {
	np, parts, root := realPlan(t)
	off := np
	off.Cache = nil
	var last cache.NodeResult
	for _, pass := range []struct {
		file string
		plan *prismv1.NodePlan
		want prismv1.CacheState
	}{
		{"1-bare-to-running.jsonl", &np, prismv1.CacheRunning},
		{"2-second-pass.jsonl", &np, prismv1.CacheRunning},
		{"2b-after-writes.jsonl", &np, prismv1.CacheRunning},
		{"3-cache-off.jsonl", &off, prismv1.CacheStopped},
		{"4-cache-off-again.jsonl", &off, prismv1.CacheStopped},
	} {
		replay := &replayer{t: t, file: pass.file, calls: readCalls(t, realDir+pass.file)}
		res := cache.Runner{Exec: replay, HostRoot: root}.ReconcileNode(context.Background(), pass.plan, nil, parts, prismv1.ModeApply)
		if len(res.Caches) != 1 || res.Caches[0].State != pass.want {
			t.Errorf("%s: %+v, want %s", pass.file, res.Caches, pass.want)
		}
		if len(replay.calls) != 0 {
			t.Errorf("%s: the agent stopped before %d recorded calls, first %q", pass.file, len(replay.calls), replay.calls[0].Argv)
		}
		if pass.file == "2b-after-writes.jsonl" {
			last = res
		}
	}
	// The real counters: Writes to exported object(s) 20480 blocks, Writes to core(s) 16384
	// (the 1 MiB writes, class 2, allocation 0: pass-through); class 11 took the 4096 4 KiB
	// writes into 1024 lines of 16 KiB, all dirty.
	c := last.Caches[0]
	if last.WriteReduction != "0.2000" || c.ExportedWrittenBytes != 20480*4096 || c.CoreWrittenBytes != 16384*4096 {
		t.Errorf("α %q from %d exported and %d core bytes; want 0.2000 from %d and %d", last.WriteReduction,
			c.ExportedWrittenBytes, c.CoreWrittenBytes, 20480*4096, 16384*4096)
	}
	var small *prismv1.IOClassUsage
	for i := range c.IOClasses {
		if c.IOClasses[i].ID == 11 {
			small = &c.IOClasses[i]
		}
	}
	if small == nil || small.OccupancyBytes != 16<<20 || small.DirtyBytes != 16<<20 || small.WrittenBytes != 16<<20 || small.WriteInvalidation != "1.000" {
		t.Errorf("class 11: %+v", small)
	}
}

// replayer answers the agent's calls from a recorded transcript, in order; a call that is not
// the next recorded one fails the test.
type replayer struct {
	t     *testing.T
	file  string
	calls []call
}

func (r *replayer) Run(_ context.Context, argv []string, stdin []byte) ([]byte, error) {
	if len(r.calls) == 0 {
		r.t.Fatalf("%s: the agent ran %q after the last recorded call", r.file, argv)
	}
	c := r.calls[0]
	r.calls = r.calls[1:]
	if !slices.Equal(argv, c.Argv) || string(stdin) != c.Stdin {
		r.t.Fatalf("%s: the agent ran %q (stdin %d bytes), the recorded call is %q (stdin %d bytes)", r.file, argv, len(stdin), c.Argv, len(c.Stdin))
	}
	if c.Exit != 0 {
		return []byte(c.Stdout), &hostexec.ExitError{Argv: argv, ExitCode: c.Exit, Stderr: c.Stderr}
	}
	return []byte(c.Stdout), nil
}

// transcriber keeps every call with its answer.
type transcriber struct {
	inner hostexec.Executor
	calls []call
}

func (r *transcriber) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	out, err := r.inner.Run(ctx, argv, stdin)
	c := call{Argv: argv, Stdin: string(stdin), Stdout: string(out)}
	var ee *hostexec.ExitError
	if errors.As(err, &ee) {
		c.Exit, c.Stderr = ee.ExitCode, ee.Stderr
	} else if err != nil {
		c.Exit = -1
	}
	r.calls = append(r.calls, c)
	return out, err
}

func readCalls(t *testing.T, path string) []call {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []call
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return calls
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func csvHeader(t *testing.T, out string) []string {
	t.Helper()
	h, err := csv.NewReader(strings.NewReader(out)).Read()
	if err != nil {
		t.Fatalf("reading a CSV header: %v\n%s", err, out)
	}
	return h
}
