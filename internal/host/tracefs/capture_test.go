//go:build linux

package tracefs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/host/hostexec"
)

// These tests trace loop devices through the host's tracefs: root only. They mount tracefs
// at /sys/kernel/tracing when it is not mounted.

var local = hostexec.Local{Timeout: time.Minute}

// hostFS is the real tracefs, mounted if needed; it skips unless root.
func hostFS(t *testing.T) FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: tracefs and loop devices")
	}
	fs := FS{Root: "/"}
	if err := fs.Mount(context.Background(), local); err != nil {
		t.Skipf("no tracefs: %v", err)
	}
	return fs
}

const (
	loopBytes  = 64 << 20
	partStart  = 2048  // sectors
	partSector = 32768 // sectors: 16 MiB
)

// loopDisk attaches a 64 MiB image with a GPT whose partition 1 spans sectors 2048-34815,
// and returns the disk's and the partition's nodes.
func loopDisk(t *testing.T) (disk, part string) {
	t.Helper()
	ctx := context.Background()
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, loopBytes); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Run(ctx, []string{"sfdisk", "--quiet", img}, []byte("label: gpt\nstart=2048, size=32768\n")); err != nil {
		t.Skipf("sfdisk (Debian package fdisk): %v", err)
	}
	out, err := local.Run(ctx, []string{"losetup", "--find", "--show", "--partscan", img}, nil)
	if err != nil {
		t.Skipf("no loop device: %v", err)
	}
	disk = strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if _, err := local.Run(context.Background(), []string{"losetup", "--detach", disk}, nil); err != nil {
			t.Errorf("detaching %s: %v", disk, err)
		}
	})
	// partx adds the partition from userspace (BLKPG): a kernel built without GPT support
	// finds none when it scans.
	if _, err := local.Run(ctx, []string{"partx", "--add", disk}, nil); err != nil {
		t.Fatalf("partx --add %s: %v", disk, err)
	}
	part = disk + "p1"
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(part); err == nil {
			return disk, part
		} else if time.Since(start) > 10*time.Second {
			t.Fatalf("%s did not appear: %v", part, err)
		}
	}
}

// direct does one O_DIRECT read or write of size bytes at byte offset off of dev: one bio,
// queued by this process.
func direct(t *testing.T, dev string, write bool, off int64, size int) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_RDWR|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page-aligned
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i*7 + int(off))
	}
	if write {
		_, err = f.WriteAt(buf, off)
	} else {
		_, err = f.ReadAt(buf, off)
	}
	if err != nil {
		t.Fatalf("%s at %d: %v", dev, off, err)
	}
}

// running waits until a capture's instance has its event enabled.
func running(t *testing.T, fs FS, name string) string {
	t.Helper()
	root, err := fs.Dir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "instances", name)
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(eventDir(dir), "enable")); err == nil && strings.TrimSpace(string(b)) == "1" {
			return dir
		}
	}
	t.Fatalf("instance %s never enabled its event", dir)
	return ""
}

func gone(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("instance %s still there after the capture: %v", dir, err)
	}
}

// mine keeps this process's records: udev, blkid and any other scanner of a new disk
// queue bios too.
func mine(recs []blktrace.Record) []blktrace.Record {
	var out []blktrace.Record
	for _, r := range recs {
		if r.TGID == os.Getpid() {
			out = append(out, r)
		}
	}
	return out
}

type op struct {
	write bool
	dev   string // "disk" or "part"
	off   int64  // bytes on that device
	size  int
}

// pattern is what the tests write and read: on the partition, on the disk inside the
// partition's range, and on the disk outside it (before and after).
var pattern = []op{
	{true, "part", 3 * 4096, 4096},
	{true, "part", 4 * 4096, 4096},
	{true, "part", 1 << 20, 64 << 10},
	{false, "part", 1 << 20, 8192},
	{true, "disk", 0, 4096},                        // the GPT's sector 0: outside the partition
	{true, "disk", (partStart + 800) * 512, 16384}, // inside it, through the disk
	{true, "disk", 40 << 20, 4096},                 // after it
	{true, "part", 3 * 4096, 4096},                 // a rewrite
}

// run does the pattern and returns the records it should give for target (sectors on the
// disk). It does its IO on one locked OS thread, whose id, not the process's, is the records'
// PID: the thread id Open CAS's pid condition compares.
func run(t *testing.T, disk, part string, partition bool) []blktrace.Record {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	var want []blktrace.Record
	major, minor := diskNumbers(t, disk)
	for _, p := range pattern {
		dev, sector := part, uint64(p.off/512)+partStart
		if p.dev == "disk" {
			dev, sector = disk, uint64(p.off/512)
		}
		direct(t, dev, p.write, p.off, p.size)
		if partition && (sector < partStart || sector >= partStart+partSector) {
			continue
		}
		rwbs := "RS" // O_DIRECT reads and writes are REQ_SYNC
		if p.write {
			rwbs = "WS"
		}
		want = append(want, blktrace.Record{PID: tid, TGID: os.Getpid(), Comm: "", RWBS: rwbs, Major: major, Minor: minor, Sector: sector, Bytes: uint64(p.size)})
	}
	return want
}

func diskNumbers(t *testing.T, disk string) (uint32, uint32) {
	var st unix.Stat_t
	if err := unix.Stat(disk, &st); err != nil {
		t.Fatal(err)
	}
	return unix.Major(st.Rdev), unix.Minor(st.Rdev)
}

// TestCaptureLoopDevice traces a partition and then its whole disk while this process writes
// and reads a known pattern with O_DIRECT (one bio per call), and checks that the capture
// holds exactly those bios of this process, in order, with their sizes and sectors: for the
// partition only the ones whose start sector lies in it, also those sent through the disk.
func TestCaptureLoopDevice(t *testing.T) {
	fs := hostFS(t)
	disk, part := loopDisk(t)
	for _, tc := range []struct {
		dev       string
		partition bool
	}{{part, true}, {disk, false}} {
		target, err := fs.Resolve(tc.dev)
		if err != nil {
			t.Fatal(err)
		}
		if target.Partition != tc.partition || (tc.partition && (target.Start != partStart || target.Sectors != partSector)) ||
			(!tc.partition && target.Sectors != loopBytes/512) {
			t.Fatalf("Resolve(%s) = %+v", tc.dev, target)
		}
		name := fmt.Sprintf("prism-test-%d-%s", os.Getpid(), filepath.Base(tc.dev))
		type result struct {
			res Result
			err error
		}
		done := make(chan result, 1)
		var records []blktrace.Record
		var summary bytes.Buffer
		w := NewSummaryWriter(&summary, target, "test", "go test")
		go func() {
			res, err := fs.Capture(context.Background(), name, target, 256, Limits{Duration: 3 * time.Second, MaxEvents: 100000},
				func(r blktrace.Record) { records = append(records, r); w.Add(r) })
			if err == nil {
				err = w.Close(res)
			}
			done <- result{res, err}
		}()
		dir := running(t, fs, name)
		want := run(t, disk, part, tc.partition)
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		gone(t, dir)
		got := mine(records)
		comm := ""
		for i := range got {
			comm = got[i].Comm // the test binary's thread names; not what is checked
			got[i].Comm = ""
			// Times: every record has one, in queue order (the pattern runs in sequence).
			if !got[i].Timed || i > 0 && got[i].Time < got[i-1].Time+1000 {
				t.Errorf("%s: record %d at %d ns (timed %v), after %d: want a time at least a µs after the one before", tc.dev, i, got[i].Time, got[i].Timed, got[max(i-1, 0)].Time)
			}
			got[i].Time, got[i].Timed = 0, false
		}
		if len(got) == len(want) && got[0].PID == os.Getpid() && want[0].PID != os.Getpid() {
			t.Errorf("%s: PID is the process's id, not the thread's (%d)", tc.dev, want[0].PID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: this process's bios:\n got %+v\nwant %+v", tc.dev, got, want)
		}
		if r.res.StoppedBy != StoppedByDuration || r.res.Lost != 0 || r.res.Elapsed < 3*time.Second {
			t.Errorf("%s: stopped by %s after %v, %d lost", tc.dev, r.res.StoppedBy, r.res.Elapsed, r.res.Lost)
		}
		// The summary: what simulate replays.
		var s blktrace.Summary
		dec := json.NewDecoder(&summary)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: the summary: %v", tc.dev, err)
		}
		var bytesWritten, writes uint64
		for _, w := range want {
			if w.RWBS == "WS" {
				bytesWritten += w.Bytes
				writes++
			}
		}
		var ours []blktrace.Bio
		for _, b := range s.Workloads[0].Data.Bios {
			if b.TGID == os.Getpid() {
				ours = append(ours, b)
			}
		}
		var sumW, nW uint64
		for i, b := range ours {
			if b.Dir() == blktrace.Write {
				sumW += b.Bytes
				nW++
			}
			if i >= len(want) {
				break
			}
			if b.Sector != want[i].Sector-target.Start || b.PID != want[i].PID {
				t.Errorf("%s: bio %d at sector %d of the device by thread %d, want %d by %d", tc.dev, i, b.Sector, b.PID, want[i].Sector-target.Start, want[i].PID)
			}
			if !b.Timed || i > 0 && b.Micros < ours[i-1].Micros+1 {
				t.Errorf("%s: bio %d at %d µs (timed %v), after %d µs", tc.dev, i, b.Micros, b.Timed, ours[max(i-1, 0)].Micros)
			}
		}
		if len(ours) != len(want) || sumW != bytesWritten || nW != writes {
			t.Errorf("%s: summary has %d of our bios, %d writes of %d bytes; want %d, %d, %d", tc.dev, len(ours), nW, sumW, len(want), writes, bytesWritten)
		}
		// Times count from the capture's first bio, whoever queued it.
		if all := s.Workloads[0].Data.Bios; len(all) == 0 || !all[0].Timed || all[0].Micros != 0 {
			t.Errorf("%s: the first bio of the summary is not at 0 µs: %+v", tc.dev, all[:min(len(all), 1)])
		}
		if s.Host.DataBytes != int64(target.Sectors*512) || s.Capture.Partition != tc.partition || s.Capture.Events != uint64(len(s.Workloads[0].Data.Bios)) {
			t.Errorf("%s: summary host %+v capture %+v", tc.dev, s.Host, *s.Capture)
		}
		t.Logf("%s: %d bios in %v (%d of this process, comm %q)", tc.dev, len(records), r.res.Elapsed.Round(time.Millisecond), len(got), comm)
	}
}

// TestCaptureStops: a capture ends at MaxEvents, and when its context is cancelled; either
// way its instance is gone when it returns.
func TestCaptureStops(t *testing.T) {
	fs := hostFS(t)
	disk, _ := loopDisk(t)
	target, err := fs.Resolve(disk)
	if err != nil {
		t.Fatal(err)
	}

	type result struct {
		res     Result
		records []blktrace.Record
	}
	done := make(chan result, 1)
	capture := func(ctx context.Context, name string, lim Limits) {
		var records []blktrace.Record
		res, err := fs.Capture(ctx, name, target, 0, lim, func(r blktrace.Record) { records = append(records, r) })
		if err != nil {
			t.Error(err)
		}
		done <- result{res, records}
	}
	name := fmt.Sprintf("prism-test-%d-max", os.Getpid())
	go capture(context.Background(), name, Limits{Duration: time.Hour, MaxEvents: 3})
	dir := running(t, fs, name)
	for i := range 10 {
		direct(t, disk, true, int64(i)*4096, 4096)
	}
	select {
	case r := <-done:
		if len(r.records) != 3 || r.res.Events != 3 || r.res.StoppedBy != StoppedByMaxEvents {
			t.Errorf("max 3 events: %d records (%d counted), stopped by %s", len(r.records), r.res.Events, r.res.StoppedBy)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the capture did not stop at max events")
	}
	gone(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	name = fmt.Sprintf("prism-test-%d-cancel", os.Getpid())
	go capture(ctx, name, Limits{Duration: time.Hour})
	dir = running(t, fs, name)
	direct(t, disk, true, 0, 4096)
	began := time.Now()
	cancel()
	select {
	case r := <-done:
		if r.res.StoppedBy != StoppedByInterrupted || len(mine(r.records)) != 1 {
			t.Errorf("cancelled: stopped by %s, %d of this process's bios (want 1: drained after the stop)", r.res.StoppedBy, len(mine(r.records)))
		}
		t.Logf("cancel to return: %v", time.Since(began).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("the capture did not stop when cancelled")
	}
	gone(t, dir)
}

// TestNewInstance: the kernel takes the filter as written; the name of a live instance is
// refused; Remove is idempotent.
func TestNewInstance(t *testing.T) {
	fs := hostFS(t)
	target := Target{Major: 7, Minor: 99, Partition: true, Start: 2048, Sectors: 8}
	name := fmt.Sprintf("prism-test-%d-filter", os.Getpid())
	inst, err := fs.NewInstance(Options{Name: name, Targets: []Target{target, {Major: 8, Minor: 0}}, BufferKiB: 64})
	if err != nil {
		t.Fatal(err)
	}
	filter, err := os.ReadFile(filepath.Join(eventDir(inst.Dir()), "filter"))
	if want := target.Filter() + " || dev == 8388608"; err != nil || strings.TrimSpace(string(filter)) != want {
		t.Errorf("filter %q, %v; want %q", filter, err, want)
	}
	for file, want := range map[string]string{"options/record-tgid": "1", "events/block/block_bio_queue/enable": "0"} {
		if b, err := os.ReadFile(filepath.Join(inst.Dir(), file)); err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %s", file, b, err, want)
		}
	}
	// The kernel rounds the buffer up to whole pages with their headers (64 reads back as 67).
	if kib, err := readUint(filepath.Join(inst.Dir(), "buffer_size_kb")); err != nil || kib < 64 || kib > 64+8 {
		t.Errorf("buffer_size_kb = %d, %v; want 64 rounded up to pages", kib, err)
	}
	if _, err := fs.NewInstance(Options{Name: name, Targets: []Target{target}}); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second instance of the same name: %v", err)
	}
	if err := inst.Remove(); err != nil {
		t.Fatal(err)
	}
	gone(t, inst.Dir())
	if err := inst.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}
