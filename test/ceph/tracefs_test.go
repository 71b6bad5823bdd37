//go:build linux

package ceph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prism-storage/prism/internal/ioclass/defaults"
)

const (
	tracefsRoot = "/sys/kernel/tracing"
	// traceBufferKiB per CPU holds about 800,000 block_bio_queue events: the largest
	// workload queues well under 100,000 bios to the two traced devices.
	traceBufferKiB = 65536
)

// bioTrace is a private tracefs instance recording block_bio_queue for some devices only,
// so that it neither sees nor disturbs anyone else's tracing.
type bioTrace struct {
	e   *env
	dir string
}

// kernelDev is the kernel's internal dev_t (MKDEV: major << 20 | minor), which the event's
// dev field holds and its filter compares.
func kernelDev(major, minor uint32) uint64 { return uint64(major)<<20 | uint64(minor) }

// newBioTrace mounts tracefs if needed and makes an instance whose block_bio_queue filter
// keeps the given whole disks (a partition's bios are reported on its disk).
func newBioTrace(e *env, disks ...[2]uint32) *bioTrace {
	t := e.t
	if _, err := os.Stat(filepath.Join(tracefsRoot, "instances")); err != nil {
		e.must(quick, "mount", "-t", "tracefs", "nodev", tracefsRoot)
	}
	b := &bioTrace{e: e, dir: filepath.Join(tracefsRoot, "instances", fmt.Sprintf("prism-ceph-%d", os.Getpid()))}
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		t.Fatalf("tracefs instance: %v", err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(b.event("enable"), []byte("0"), 0)
		if err := os.Remove(b.dir); err != nil {
			t.Errorf("cleanup: removing tracefs instance %s: %v", b.dir, err)
		}
	})
	var terms []string
	for _, d := range disks {
		terms = append(terms, fmt.Sprintf("dev == %d", kernelDev(d[0], d[1])))
	}
	b.write("buffer_size_kb", fmt.Sprint(traceBufferKiB))
	// The process of each bio's submitter: the OSD's bios are told from other tools'.
	b.write(filepath.Join("options", "record-tgid"), "1")
	b.write(filepath.Join("events", "block", "block_bio_queue", "filter"), strings.Join(terms, " || "))
	return b
}

func (b *bioTrace) event(file string) string {
	return filepath.Join(b.dir, "events", "block", "block_bio_queue", file)
}

func (b *bioTrace) write(file, value string) {
	if err := os.WriteFile(filepath.Join(b.dir, file), []byte(value), 0); err != nil {
		b.e.t.Fatalf("tracefs %s = %q: %v", file, value, err)
	}
}

// start empties the buffer and enables the event.
func (b *bioTrace) start() {
	b.write("trace", "")
	b.write(filepath.Join("events", "block", "block_bio_queue", "enable"), "1")
}

// stop disables the event and parses the buffer; a buffer that dropped events fails the
// test (the byte shares would be wrong).
func (b *bioTrace) stop() defaults.Trace {
	t := b.e.t
	b.write(filepath.Join("events", "block", "block_bio_queue", "enable"), "0")
	f, err := os.Open(filepath.Join(b.dir, "trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := defaults.ParseTrace(f)
	if err == nil && tr.Lost > 0 {
		err = errors.New("the ring buffer dropped events: raise traceBufferKiB")
	}
	if err != nil {
		t.Fatalf("tracefs %s/trace: %v (lost %d, kept %d)", b.dir, err, tr.Lost, len(tr.Records))
	}
	return tr
}

// devNumbers reads a block device's major:minor from sysfs.
func devNumbers(e *env, sysPath string) [2]uint32 {
	var d [2]uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(readFile(e.t, filepath.Join(sysPath, "dev"))), "%d:%d", &d[0], &d[1]); err != nil {
		e.t.Fatalf("%s/dev: %v", sysPath, err)
	}
	return d
}
