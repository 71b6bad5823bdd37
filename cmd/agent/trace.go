package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/tracefs"
)

const traceUsage = `prism-agent trace: record the bios queued to one block device, for kubectl prism simulate.

Usage:
  prism-agent trace --device D --duration T [-o FILE] [--max-events N] [--host-root DIR]

It traces the kernel's block_bio_queue tracepoint (submitting task and process, operation,
sector, size) in a private tracefs instance filtered to the device, read-only for the device,
until T passes or N bios were recorded (Ctrl-C or SIGTERM stop it early and keep what was
recorded), removes the instance, and writes a trace summary (JSON, the format of
internal/ioclass/defaults/testdata/ceph-osd-trace.json with every bio in order) that
"kubectl prism simulate --trace FILE" replays. A summary of what was recorded goes to stderr.

D is a block device path (/dev/sdb, /dev/disk/by-id/..., looked up under --host-root) or
MAJOR:MINOR. A partition's bios are queued to its disk: for a partition the trace keeps the
bios of the disk whose start sector lies in the partition, sectors made relative to its start
(what a cache over the partition would see); a whole disk includes its partitions' bios.

In the agent's pod (the host's / is at /host):
  kubectl -n prism-system exec POD -- /prism-agent trace --host-root /host \
      --device /dev/disk/by-id/DISK --duration 10m > osd.trace.json

Flags:
`

// traceFlags are the trace command's settings.
type traceFlags struct {
	device    string
	duration  time.Duration
	output    string
	maxEvents uint64
	bufferKiB int
	hostRoot  string
	mount     bool
	name      string
}

func runTrace(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, traceUsage)
		fs.PrintDefaults()
	}
	var f traceFlags
	fs.StringVar(&f.device, "device", "", "the block device to trace: a path under /dev or MAJOR:MINOR (required)")
	fs.DurationVar(&f.duration, "duration", 0, "how long to trace, e.g. 30s, 10m (required)")
	fs.StringVar(&f.output, "o", "-", "write the trace summary to this file; - is standard output")
	fs.Uint64Var(&f.maxEvents, "max-events", 2_000_000, "stop after this many bios (about 45 bytes each in the output, 100 in memory)")
	fs.IntVar(&f.bufferKiB, "buffer-kib", 1024, "tracefs ring buffer per CPU, KiB (the reader empties it continuously; raise it when events are lost)")
	fs.StringVar(&f.hostRoot, "host-root", "/", "where the host's / is: its /dev, /sys and tracefs (/sys/kernel/tracing) are read under it")
	fs.BoolVar(&f.mount, "mount-tracefs", false, "mount tracefs at <host-root>/sys/kernel/tracing when it is not mounted")
	fs.StringVar(&f.name, "instance", "", "the tracefs instance's name (default prism-trace-PID-TIME)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case f.device == "":
		return fmt.Errorf("--device is required")
	case f.duration <= 0:
		return fmt.Errorf("--duration is required and must be positive")
	case f.maxEvents == 0:
		return fmt.Errorf("--max-events must be positive")
	}
	if f.name == "" {
		f.name = fmt.Sprintf("prism-trace-%d-%x", os.Getpid(), time.Now().UnixNano()&0xffffff)
	}
	// SIGINT and SIGTERM end the capture early; the instance is removed either way.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return trace(ctx, f, hostexec.Local{Timeout: 30 * time.Second}, stdout, stderr, strings.Join(append([]string{"prism-agent", "trace"}, args...), " "))
}

// trace runs one capture and writes its summary.
func trace(ctx context.Context, f traceFlags, exec hostexec.Executor, stdout, stderr io.Writer, command string) error {
	host := tracefs.FS{Root: f.hostRoot}
	if f.mount {
		if err := host.Mount(ctx, exec); err != nil {
			return err
		}
	}
	target, err := host.Resolve(f.device)
	if err != nil {
		return err
	}
	// Open the output before tracing: a bad path fails now, not after the capture.
	out := stdout
	var file *os.File
	if f.output != "-" {
		if file, err = os.Create(f.output); err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	var uts unix.Utsname
	kernel := ""
	if unix.Uname(&uts) == nil {
		kernel = unix.ByteSliceToString(uts.Release[:])
	}
	// Each bio is written as it is read: the command's memory does not grow with the trace
	// (it runs inside the agent pod's memory limit).
	w := tracefs.NewSummaryWriter(out, target, kernel, command)
	res, err := host.Capture(ctx, f.name, target, f.bufferKiB, tracefs.Limits{Duration: f.duration, MaxEvents: f.maxEvents}, w.Add)
	if err == nil {
		err = w.Close(res)
	}
	if err == nil && file != nil {
		err = file.Close()
	}
	if err != nil {
		if file != nil {
			os.Remove(f.output) // half a summary is no summary
		}
		return err
	}
	c := w.Capture(res)
	fmt.Fprintln(stderr, describe(c, w.Data()))
	if c.Lost > 0 {
		fmt.Fprintf(stderr, "warning: the ring buffer dropped %d events: the trace is incomplete; raise --buffer-kib\n", c.Lost)
	}
	return nil
}

// describe is the capture's one-paragraph account on stderr.
func describe(c *blktrace.Capture, data blktrace.DeviceTrace) string {
	where := fmt.Sprintf("disk %s", c.Disk)
	if c.Partition {
		where = fmt.Sprintf("disk %s sectors %d-%d", c.Disk, c.StartSector, c.StartSector+c.Sectors-1)
	}
	var parts []string
	totals := data.Totals()
	for _, d := range []blktrace.Direction{blktrace.Write, blktrace.Read, blktrace.Discard, blktrace.Flush, blktrace.Other} {
		if r, ok := totals[d]; ok {
			parts = append(parts, fmt.Sprintf("%d %s (%d bytes)", r.Count, d, r.Bytes))
		}
	}
	if len(parts) == 0 {
		parts = []string{"no bios"}
	}
	return fmt.Sprintf("traced %s (%s) for %.1f s, stopped by %s: %d bios: %s; %d events lost",
		c.Device, where, c.Seconds, c.StoppedBy, c.Events, strings.Join(parts, ", "), c.Lost)
}
