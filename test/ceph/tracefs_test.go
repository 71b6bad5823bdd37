//go:build linux

package ceph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/tracefs"
)

// traceBufferKiB per CPU holds about 800,000 block_bio_queue events: the largest workload
// queues well under 100,000 bios to the two traced devices. The buffer is read once per
// workload (stop), not streamed, so it must hold a whole workload.
const traceBufferKiB = 65536

// bioTrace is a private tracefs instance (internal/host/tracefs, what `prism-agent trace`
// uses) recording block_bio_queue for some devices only, so that it neither sees nor
// disturbs anyone else's tracing.
type bioTrace struct {
	e    *env
	inst *tracefs.Instance
}

// newBioTrace mounts tracefs if needed and makes an instance whose block_bio_queue filter
// keeps the given whole disks (a partition's bios are reported on its disk).
func newBioTrace(e *env, disks ...[2]uint32) *bioTrace {
	t := e.t
	fs := tracefs.FS{Root: "/"}
	if err := fs.Mount(e.ctx, hostexec.Local{Timeout: quick}); err != nil {
		t.Fatal(err)
	}
	var targets []tracefs.Target
	for _, d := range disks {
		targets = append(targets, tracefs.Target{Major: d[0], Minor: d[1]})
	}
	inst, err := fs.NewInstance(tracefs.Options{Name: fmt.Sprintf("prism-ceph-%d", os.Getpid()), Targets: targets, BufferKiB: traceBufferKiB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := inst.Remove(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return &bioTrace{e: e, inst: inst}
}

// start empties the buffer and enables the event.
func (b *bioTrace) start() {
	if err := b.inst.Start(); err != nil {
		b.e.t.Fatal(err)
	}
}

// stop disables the event and parses the buffer; a buffer that dropped events fails the
// test (the byte shares would be wrong).
func (b *bioTrace) stop() blktrace.Trace {
	t := b.e.t
	if err := b.inst.Stop(); err != nil {
		t.Fatal(err)
	}
	tr, err := b.inst.Buffer()
	if err == nil && tr.Lost > 0 {
		err = errors.New("the ring buffer dropped events: raise traceBufferKiB")
	}
	if err != nil {
		t.Fatalf("tracefs %s: %v (lost %d, kept %d)", b.inst.Dir(), err, tr.Lost, len(tr.Records))
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
