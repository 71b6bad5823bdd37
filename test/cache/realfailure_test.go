package cache

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/opencas"
)

// The real module's behaviour after a crash and with a failed cache device, recorded in the
// guest (testdata/opencas-v26.03.2/README.md, docs/opencas-real-module.md).

// TestAgentAfterRealCrashAndFailure answers the agent from the real transcripts: after the
// crash and casctl's restore the pass only reads and finds the cache Running with the 1024
// dirty blocks; with the cache device gone the cache is Failed, the cores CacheFailed with the
// dirty blocks named, and neither pass (cache wanted, cache off) runs anything but reads;
// after the device came back and the cache was loaded the pass only reads again.
func TestAgentAfterRealCrashAndFailure(t *testing.T) {
	np, parts, root := realPlan(t)
	// The files the agent wrote in the guest, as the restored host has them.
	conf := filepath.Join(root, opencas.ConfPath)
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"opencas.conf", "prism-cache1-ioclass.csv"} {
		b, err := os.ReadFile(realDir + "etc-opencas/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(conf), f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	off := np
	off.Cache = nil
	for _, pass := range []struct {
		file      string
		plan      *prismv1.NodePlan
		want      prismv1.CacheState
		wantCore  prismv1.CoreState
		wantDirty int64 // class 0's dirty bytes (recovered lines are class 0 after a load)
	}{
		{"5-restored-after-crash.jsonl", &np, prismv1.CacheRunning, prismv1.CoreReady, 1024 * 4096},
		{"6-cache-device-failed.jsonl", &np, prismv1.CacheFailed, prismv1.CoreCacheFailed, -1},
		{"6b-cache-device-failed-off.jsonl", &off, prismv1.CacheFailed, prismv1.CoreCacheFailed, -1},
		{"7-reloaded-after-device-returned.jsonl", &np, prismv1.CacheRunning, prismv1.CoreReady, -1},
	} {
		replay := &replayer{t: t, file: pass.file, calls: readCalls(t, realDir+pass.file)}
		res := opencas.Runner{Exec: replay, HostRoot: root}.ReconcileNode(context.Background(), pass.plan, nil, parts, prismv1.ModeApply)
		if res.Changed || len(res.Caches) != 1 || res.Caches[0].State != pass.want {
			t.Errorf("%s: changed %v, %+v; want %s, unchanged", pass.file, res.Changed, res.Caches, pass.want)
			continue
		}
		if len(replay.calls) != 0 {
			t.Errorf("%s: the agent stopped before %d recorded calls, first %q", pass.file, len(replay.calls), replay.calls[0].Argv)
		}
		c := res.Caches[0]
		if len(c.Cores) != 1 || c.Cores[0].State != pass.wantCore {
			t.Errorf("%s: cores %+v, want %s", pass.file, c.Cores, pass.wantCore)
		}
		if pass.want == prismv1.CacheFailed {
			msg := c.Cores[0].Message
			if !strings.Contains(msg, "Not running") || !strings.Contains(msg, "1536 dirty 4 KiB blocks are stranded") {
				t.Errorf("%s: core message %q", pass.file, msg)
			}
			if !strings.Contains(c.Message, "casadm -T -i 1 -n") {
				t.Errorf("%s: cache message without the way out: %q", pass.file, c.Message)
			}
		}
		if pass.wantDirty >= 0 {
			if len(c.IOClasses) == 0 || c.IOClasses[0].ID != 0 || c.IOClasses[0].DirtyBytes != pass.wantDirty {
				t.Errorf("%s: class 0 %+v, want %d dirty bytes", pass.file, c.IOClasses, pass.wantDirty)
			}
		}
	}
}

// TestRealFailedDeviceOnEmulator replays the failure on the emulator: the agent's pass after
// the cache device went away must run the same calls with the same answers as on the real
// module (-L exactly: "Not running"), and casadm's answers to -Q, -T -n and -L after it must
// be the real ones byte for byte; then the emulator's load brings the dirty data back, as the
// real load did once the device returned.
func TestRealFailedDeviceOnEmulator(t *testing.T) {
	t.Setenv(releaseEnv, "v26.03.2")
	h, np, parts := newRealHost(t)
	ctx := context.Background()
	run := func(file string, plan *prismv1.NodePlan, want prismv1.CacheState) {
		t.Helper()
		rec := &transcriber{inner: hostexec.Local{}}
		res := opencas.Runner{Exec: rec, HostRoot: h.root}.ReconcileNode(ctx, plan, nil, parts, prismv1.ModeApply)
		if len(res.Caches) != 1 || res.Caches[0].State != want {
			t.Errorf("%s: the emulator's pass ended with %+v, want %s", file, res.Caches, want)
		}
		if file == "" {
			return
		}
		real := readCalls(t, realDir+file)
		if len(rec.calls) != len(real) {
			t.Errorf("%s: %d calls on the emulator, %d on the real module", file, len(rec.calls), len(real))
		}
		for i := range min(len(real), len(rec.calls)) {
			compareCall(t, file, i, real[i], rec.calls[i])
		}
	}
	run("", &np, prismv1.CacheRunning)
	for _, f := range []string{"opencas.conf", "prism-cache1-ioclass.csv"} {
		real, err := os.ReadFile(realDir + "etc-opencas/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if emu, err := os.ReadFile(filepath.Join(h.root, "etc/opencas", f)); err != nil || string(emu) != string(real) {
			t.Errorf("/etc/opencas/%s: the agent wrote on the emulator (%v)\n%s\nin the guest\n%s", f, err, emu, real)
		}
	}
	// As in the guest: 512 dirty 4 KiB writes, then the device goes; then the IO of the guest.
	h.io(1, "size=4096,dir=write,comm=dd,lba=1600000", 512)
	h.casadm("--emulator-fail-cache", "1")
	h.ioFails(1, "size=4096,dir=write,comm=dd,lba=2400000", 1)
	h.io(1, "size=1048576,dir=write,comm=dd,lba=16777216", 4, "--stride", "1048576")
	h.ioFails(1, "size=4096,dir=read,comm=dd,lba=1600000", 1)
	h.io(1, "size=4096,dir=read,comm=dd,lba=3200000", 16)
	s := h.stats()
	// The real counters over the same IO (6-cache-device-failed.jsonl, less the alru
	// cleaner's 200 read errors before it and udev's reads): 4 pass-through writes, 16 + 1
	// cache write errors (the failed write and the 16 fills after core reads), 1 read error.
	if s.Requests.PassThroughWrites.Value != 4 || s.Errors.CacheWrite.Value != 17 || s.Errors.CacheRead.Value != 1 ||
		s.Usage.Dirty.Value != 512 || s.Cache.Status.State != "Not running" {
		t.Errorf("emulator after the failure: pt writes %d, cache write errors %d, read errors %d, dirty %d, status %s",
			s.Requests.PassThroughWrites.Value, s.Errors.CacheWrite.Value, s.Errors.CacheRead.Value, s.Usage.Dirty.Value, s.Cache.Status)
	}
	off := np
	off.Cache = nil
	run("6-cache-device-failed.jsonl", &np, prismv1.CacheFailed)
	run("6b-cache-device-failed-off.jsonl", &off, prismv1.CacheFailed)

	// -T with its flush: the real module hit a kernel BUG; the emulator refuses, loudly.
	if out, err := exec.Command("casadm", "-T", "-i", "1").CombinedOutput(); err == nil || !strings.Contains(string(out), "kernel BUG") {
		t.Errorf("casadm -T on a failed dirty cache: %v %q", err, out)
	}
	for i, c := range readCalls(t, realDir+"8-failed-device-by-hand.jsonl") {
		cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		exit := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			exit = ee.ExitCode()
		}
		if string(out) != c.Stdout || stderr.String() != c.Stderr || exit != c.Exit {
			t.Errorf("by hand #%d %q: emulator exit %d\n%s%s\nreal exit %d\n%s%s", i, c.Argv, exit, out, stderr.String(), c.Exit, c.Stdout, c.Stderr)
		}
	}
	// The device is back (the emulator's device never went): load, as casctl did.
	h.casadm("-S", "-d", parts[2].Path, "--load")
	if s := h.stats(); s.Usage.Dirty.Value != 512 || s.Cache.Status.State != "Running" {
		t.Errorf("after the load: dirty %d, status %s; the real load had the 512 dirty blocks back", s.Usage.Dirty.Value, s.Cache.Status)
	}
	run("7-reloaded-after-device-returned.jsonl", &np, prismv1.CacheRunning)
}

// TestAgentResumesAfterRealCrashMidPass answers the agent from the real transcripts of a
// crash between its steps: the pass stopped after casadm -S and -A (no parameters, classes or
// opencas.conf yet), 1024 blocks were written dirty, the guest was reset. On the next boot
// nothing restored the cache (no opencas.conf); the agent's pass found the Open CAS superblock
// on the partition (the real one's first bytes), loaded it rather than starting a new cache,
// then configured it and wrote opencas.conf; the pass after it only read.
func TestAgentResumesAfterRealCrashMidPass(t *testing.T) {
	np, parts, root := realPlan(t)
	part := filepath.Join(root, parts[2].Path)
	head := []byte{0x00, 0x01, 0x00, 0x00, 0xa6, 0x1c, 0x7e, 0x18, 0x02, 0x03, 0x1a, 0x00, 0x01, 0x00, 0x00, 0x00}
	for _, pass := range []struct {
		file    string
		limit   int
		head    []byte // the partition's first bytes at the time
		want    prismv1.CacheState
		changed bool
	}{
		{"9-crash-after-two-steps.jsonl", 2, nil, prismv1.CachePending, true},
		{"10-load-without-conf.jsonl", 0, head, prismv1.CacheRunning, true},
		{"10b-after-load.jsonl", 0, head, prismv1.CacheRunning, false},
	} {
		if pass.head != nil {
			f, err := os.OpenFile(part, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt(pass.head, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		replay := &replayer{t: t, file: pass.file, calls: readCalls(t, realDir+pass.file)}
		res := opencas.Runner{Exec: replay, HostRoot: root, StepLimit: pass.limit}.ReconcileNode(context.Background(), &np, nil, parts, prismv1.ModeApply)
		if res.Changed != pass.changed || len(res.Caches) != 1 || res.Caches[0].State != pass.want {
			t.Errorf("%s: changed %v, %+v; want %s, changed %v", pass.file, res.Changed, res.Caches, pass.want, pass.changed)
		}
		if len(replay.calls) != 0 {
			t.Errorf("%s: the agent stopped before %d recorded calls, first %q", pass.file, len(replay.calls), replay.calls[0].Argv)
		}
		_, err := os.Stat(filepath.Join(root, opencas.ConfPath))
		if wrote := err == nil; wrote != (pass.limit == 0) {
			t.Errorf("%s: opencas.conf written %v", pass.file, wrote)
		}
	}
	want, err := os.ReadFile(realDir + "etc-opencas/opencas.conf")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, opencas.ConfPath)); err != nil || string(got) != string(want) {
		t.Errorf("opencas.conf after the recovery (%v):\n%s\nwant (as in the guest, both runs)\n%s", err, got, want)
	}
}
