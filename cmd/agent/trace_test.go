//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/tracefs"
	"github.com/prism-storage/prism/internal/ioclass"
)

func TestTraceFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--duration 1s":                             "--device is required",
		"--device 7:0":                              "--duration is required",
		"--device 7:0 --duration -1s":               "--duration is required",
		"--device 7:0 --duration 1s --max-events 0": "--max-events must be positive",
		"--device 7:0 --duration 1s extra":          `unexpected argument "extra"`,
		"--device 7:0 --duration soon":              "invalid value",
	} {
		var stderr bytes.Buffer
		if err := runTrace(strings.Fields(args), &bytes.Buffer{}, &stderr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("trace %s: %v, want an error with %q", args, err, want)
		}
	}
	var stderr bytes.Buffer
	if err := runTrace([]string{"-h"}, &bytes.Buffer{}, &stderr); err != nil || !strings.Contains(stderr.String(), "kubectl -n prism-system exec") ||
		!strings.Contains(stderr.String(), "-max-events") {
		t.Errorf("-h: %v\n%s", err, stderr.String())
	}
	// A device that is not there fails before any tracing.
	err := trace(context.Background(), traceFlags{device: "/dev/prism-none", duration: time.Second, output: "-", maxEvents: 1, hostRoot: t.TempDir()},
		hostexec.Local{}, &bytes.Buffer{}, &bytes.Buffer{}, "")
	if err == nil || !strings.Contains(err.Error(), "/dev/prism-none") {
		t.Errorf("a missing device: %v", err)
	}
}

// TestTraceCommand runs the command on a loop device while this process writes a known
// pattern with O_DIRECT, then replays its output as kubectl prism simulate does: this
// process's bios come back in order with their sizes and sectors, and the command's tracefs
// instance is gone. A second run is cancelled (Ctrl-C) and still writes what it recorded
// and removes its instance. Root only.
func TestTraceCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: tracefs and a loop device")
	}
	local := hostexec.Local{Timeout: time.Minute}
	fs := tracefs.FS{Root: "/"}
	if err := fs.Mount(context.Background(), local); err != nil {
		t.Skipf("no tracefs: %v", err)
	}
	tracing, err := fs.Dir()
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 32<<20); err != nil {
		t.Fatal(err)
	}
	out, err := local.Run(context.Background(), []string{"losetup", "--find", "--show", img}, nil)
	if err != nil {
		t.Skipf("no loop device: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if _, err := local.Run(context.Background(), []string{"losetup", "--detach", dev}, nil); err != nil {
			t.Errorf("detaching %s: %v", dev, err)
		}
	})

	// The pattern: 4 KiB writes to blocks 10..19, block 12 again, a 64 KiB write at 1 MiB.
	type w struct {
		off  int64
		size int
	}
	var pattern []w
	for b := int64(10); b < 20; b++ {
		pattern = append(pattern, w{b * 4096, 4096})
	}
	pattern = append(pattern, w{12 * 4096, 4096}, w{1 << 20, 64 << 10})

	for _, cancelled := range []bool{false, true} {
		name := fmt.Sprintf("prism-test-%d-cmd-%v", os.Getpid(), cancelled)
		output := filepath.Join(t.TempDir(), "trace.json")
		duration := 3 * time.Second
		if cancelled {
			duration = time.Hour
		}
		f := traceFlags{device: dev, duration: duration, output: output, maxEvents: 100000, bufferKiB: 256, hostRoot: "/", name: name}
		ctx, cancel := context.WithCancel(context.Background())
		var stderr bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- trace(ctx, f, local, &bytes.Buffer{}, &stderr, "prism-agent trace --test") }()
		instance := filepath.Join(tracing, "instances", name)
		enable := filepath.Join(instance, "events", "block", "block_bio_queue", "enable")
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(enable); err == nil && strings.TrimSpace(string(b)) == "1" {
				break
			} else if time.Since(start) > 10*time.Second {
				t.Fatalf("the command's instance %s never enabled its event", instance)
			}
		}
		// On one locked OS thread: the replay's pid is the thread's id (what Open CAS's pid
		// condition compares), not the process's.
		runtime.LockOSThread()
		writer := unix.Gettid()
		for _, p := range pattern {
			directWrite(t, dev, p.off, p.size)
		}
		runtime.UnlockOSThread()
		if cancelled {
			cancel()
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the command did not end")
		}
		cancel()
		if _, err := os.Stat(instance); !os.IsNotExist(err) {
			t.Errorf("instance %s left after the command: %v", instance, err)
		}
		stopped := map[bool]string{false: "stopped by duration", true: "stopped by interrupted"}[cancelled]
		if !strings.Contains(stderr.String(), stopped) || !strings.Contains(stderr.String(), "0 events lost") {
			t.Errorf("stderr: %s; want %q", stderr.String(), stopped)
		}

		file, err := os.Open(output)
		if err != nil {
			t.Fatal(err)
		}
		src, capacity, err := cachesim.Open(file, cachesim.DeviceFilter{})
		file.Close()
		if err != nil {
			t.Fatal(err)
		}
		if capacity != 32<<20 {
			t.Errorf("capacity %d, want the loop device's 32 MiB", capacity)
		}
		var mine []ioclass.IO
		var io ioclass.IO
		for src.Next(&io) {
			if io.PID == writer {
				mine = append(mine, io)
			}
		}
		if err := src.Err(); err != nil {
			t.Fatal(err)
		}
		if len(mine) != len(pattern) {
			t.Fatalf("replayed %d of this process's IOs, wrote %d: %+v", len(mine), len(pattern), mine)
		}
		var bytesWritten uint64
		for i, p := range pattern {
			if !mine[i].Write || mine[i].LBA != uint64(p.off/512) || mine[i].Size != uint64(p.size) {
				t.Errorf("IO %d: %+v, want a write of %d bytes at sector %d", i, mine[i], p.size, p.off/512)
			}
			bytesWritten += uint64(p.size)
		}
		t.Logf("cancelled %v: %d bytes in %d writes replayed; %s", cancelled, bytesWritten, len(mine), strings.TrimSpace(stderr.String()))
	}
}

func directWrite(t *testing.T, dev string, off int64, size int) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(off) ^ byte(i)
	}
	if _, err := f.WriteAt(buf, off); err != nil {
		t.Fatal(err)
	}
}
