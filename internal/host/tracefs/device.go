package tracefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/blktrace"
)

// Target is what a capture traces: the bios queued to a disk whose start sector lies in
// [Start, Start+Sectors). A partition's bios are queued to its disk at the remapped sector
// (the block layer remaps before block_bio_queue fires), so a partition is its disk's range;
// a whole disk is [0, its size) and includes the bios sent to its partitions.
type Target struct {
	// Device is what the user named: a path under /dev, or MAJOR:MINOR.
	Device string
	// Name is the kernel's name of the device (sdb, nvme0n1p2).
	Name string
	// Major and Minor are the disk's numbers, what the event's dev field holds.
	Major, Minor uint32
	Partition    bool
	Start        uint64
	Sectors      uint64
}

// Disk is the disk's MAJOR:MINOR.
func (t Target) Disk() string { return fmt.Sprintf("%d:%d", t.Major, t.Minor) }

// Selection is the blktrace.Device that selects the target's records (sectors made relative
// to its start).
func (t Target) Selection() blktrace.Device {
	return blktrace.Device{Major: t.Major, Minor: t.Minor, Start: t.Start, Sectors: t.Sectors}
}

// KernelDev is the kernel's internal dev_t (MKDEV: major << 20 | minor), which the event's
// dev field holds and its filter compares; userspace's dev_t encoding differs.
func KernelDev(major, minor uint32) uint64 { return uint64(major)<<20 | uint64(minor) }

// Filter is the event filter keeping the target's bios: the disk, and for a partition its
// sector range.
func (t Target) Filter() string {
	f := fmt.Sprintf("dev == %d", KernelDev(t.Major, t.Minor))
	if t.Partition {
		f = fmt.Sprintf("(%s && sector >= %d && sector < %d)", f, t.Start, t.Start+t.Sectors)
	}
	return f
}

// Resolve finds a block device's disk and sector range from the host's sysfs: dev is
// MAJOR:MINOR or a path of a block device node under the root (/dev/sdb1, a
// /dev/disk/by-id link; relative to /dev when it has no slash).
func (fs FS) Resolve(dev string) (Target, error) {
	t := Target{Device: dev}
	major, minor, err := fs.numbers(dev)
	if err != nil {
		return t, err
	}
	sys := filepath.Join(fs.Root, "sys", "dev", "block", fmt.Sprintf("%d:%d", major, minor))
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		return t, fmt.Errorf("%s: block device %d:%d not in sysfs: %w", dev, major, minor, err)
	}
	t.Name = filepath.Base(real)
	if t.Sectors, err = readUint(filepath.Join(real, "size")); err != nil {
		return t, fmt.Errorf("%s: %w", dev, err)
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err != nil {
		t.Major, t.Minor = major, minor
		return t, nil
	}
	t.Partition = true
	if t.Start, err = readUint(filepath.Join(real, "start")); err != nil {
		return t, fmt.Errorf("%s: %w", dev, err)
	}
	// A partition's directory sits in its disk's.
	data, err := os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
	if err != nil {
		return t, fmt.Errorf("%s: the disk of partition %s: %w", dev, t.Name, err)
	}
	if t.Major, t.Minor, err = parseNumbers(strings.TrimSpace(string(data))); err != nil {
		return t, fmt.Errorf("%s: the disk of partition %s: %w", dev, t.Name, err)
	}
	return t, nil
}

// numbers reads MAJOR:MINOR, or stats the device node under the root.
func (fs FS) numbers(dev string) (uint32, uint32, error) {
	if major, minor, err := parseNumbers(dev); err == nil {
		return major, minor, nil
	}
	path := dev
	if !strings.Contains(dev, "/") {
		path = filepath.Join("/dev", dev)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(fs.Root, path), &st); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", dev, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return 0, 0, fmt.Errorf("%s: not a block device", dev)
	}
	return unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)), nil
}

// parseNumbers reads MAJOR:MINOR as sysfs's dev files print it.
func parseNumbers(s string) (uint32, uint32, error) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil || a >= 1<<12 || b >= 1<<20 {
		return 0, 0, fmt.Errorf("%q: want MAJOR:MINOR (major below 4096, minor below 2^20)", s)
	}
	return uint32(a), uint32(b), nil
}

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
