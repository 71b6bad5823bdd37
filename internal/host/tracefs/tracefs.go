// Package tracefs records the kernel's block_bio_queue tracepoint for one block device: the
// bios as their submitters queued them (task, process, operation, sector, size), before the
// block layer splits or merges them, which is what Open CAS's classifier sees. It reads the
// host's tracefs through an injected root, like internal/host/sysfs, in a private instance
// (instances/NAME) whose event filter keeps only the traced device's bios, so that it neither
// sees nor disturbs anyone else's tracing, and removes the instance when it is done. Tracing
// is read-only for the device. Lines are parsed by internal/ioclass/defaults (ParseLine), the
// parser the simulator uses too.
package tracefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// FS is the host's tracefs under Root, the host's / ("/" on the host, "/host" in the agent's
// pod, a fixture tree in tests).
type FS struct {
	Root string
}

// Where tracefs is mounted: its own mount point since Linux 4.1, and inside debugfs, where
// the kernel mounts it automatically when debugfs is mounted.
var mountPoints = []string{"sys/kernel/tracing", "sys/kernel/debug/tracing"}

// ErrNotMounted says no tracefs was found under the root.
var ErrNotMounted = errors.New("tracefs is not mounted")

// Dir returns the directory of the mounted tracefs: the first of mountPoints that has an
// instances directory.
func (fs FS) Dir() (string, error) {
	for _, mp := range mountPoints {
		dir := filepath.Join(fs.Root, mp)
		if st, err := os.Stat(filepath.Join(dir, "instances")); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("%w at %s or %s: mount it with `mount -t tracefs nodev %s`",
		ErrNotMounted, filepath.Join(fs.Root, mountPoints[0]), filepath.Join(fs.Root, mountPoints[1]), filepath.Join(fs.Root, mountPoints[0]))
}

// MountArgv mounts tracefs at the root's sys/kernel/tracing.
func (fs FS) MountArgv() []string {
	return []string{"mount", "-t", "tracefs", "nodev", filepath.Join(fs.Root, mountPoints[0])}
}

// Mount mounts tracefs when Dir finds none (a host without systemd's sys-kernel-tracing.mount,
// a container's own /sys).
func (fs FS) Mount(ctx context.Context, exec hostexec.Executor) error {
	if _, err := fs.Dir(); err == nil {
		return nil
	}
	if _, err := exec.Run(ctx, fs.MountArgv(), nil); err != nil {
		return fmt.Errorf("mounting tracefs: %w", err)
	}
	_, err := fs.Dir()
	return err
}

// eventDir is block_bio_queue's directory under a tracefs or instance directory.
func eventDir(dir string) string { return filepath.Join(dir, "events", "block", "block_bio_queue") }

// printFmt is block_bio_queue's print format since Linux 2.6.3x (include/trace/events/block.h):
// dev as MAJOR,MINOR, rwbs, sector, nr_sector, comm. blktrace.ParseLine reads lines of it.
const printFmt = `"%d,%d %s %llu + %u [%s]"`

// filterFields are the event fields the instance's filter compares.
var filterFields = []string{"field:dev_t dev;", "field:sector_t sector;"}

// CheckFormat checks the text of events/block/block_bio_queue/format: the fields the filter
// uses, and the print format the parser reads. A kernel that prints the event otherwise is
// refused rather than misread.
func CheckFormat(text string) error {
	for _, f := range filterFields {
		if !strings.Contains(text, f) {
			return fmt.Errorf("block_bio_queue format: no %q (the filter compares it)", strings.TrimSuffix(f, ";"))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "print fmt: "); ok {
			if !strings.HasPrefix(rest, printFmt+",") {
				got, _, _ := strings.Cut(rest, `",`)
				return fmt.Errorf("block_bio_queue print fmt %s\": Prism reads %s", got, printFmt)
			}
			return nil
		}
	}
	return errors.New("block_bio_queue format: no print fmt line")
}
