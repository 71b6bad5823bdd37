package provision

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/dbvolume"
)

// pin opens the device at path read-only (not exclusively: a tool run meanwhile may claim it
// or its partitions) and checks that it is the device the inventory read and the plan names,
// by the number the open file has (checkIdentity, diskseq included). Every host tool that
// changes a device or the kernel's view of it runs while a pin or the exclusive hold is open,
// and is given either the pin's own path (hostexec.HeldPath) or a name checked against the pin
// (checkPartitionOf): a kernel name looked up after the check may by then mean another disk
// (hot-unplug and a hot-plug that reuses it, a loop device bound again), and the tool would
// write that disk. While the pin is open the kernel keeps the disk's number and a loop
// device's binding (losetup -d is deferred to the last close, a new binding refused). The
// caller closes the pin after the tool has exited.
func (r Runner) pin(path string, dev prismv1.Device, fd prismv1.FastDevicePlan) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := r.checkIdentity(f, path, dev, fd.Identity); err != nil {
		f.Close()
		return nil, err
	}
	// The size too: a disk that reports no serial, WWID or diskseq is told apart by nothing else.
	if size, err := f.Seek(0, io.SeekEnd); err != nil || !r.allowFiles && size != dev.SizeBytes {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("size of %s: %w", path, err)
		}
		return nil, &IdentityError{fmt.Sprintf("%s is %d bytes now, %d in the inventory; waiting for the next inventory", path, size, dev.SizeBytes)}
	}
	return f, nil
}

// checkPartitionOf checks that the slot's partition node (under HostRoot) is, now, the
// partition the observation saw (slot.Major:Minor) and a partition of the pinned disk, so
// that an LVM command given that name (LVM finds devices by name through its own device
// cache, so it cannot be given HeldPath) writes the disk whose identity pin checked. A pin
// that is not a block device (unit tests' files, allowFiles) has no kernel to ask.
func (r Runner) checkPartitionOf(pin *os.File, slot dbvolume.Slot) error {
	var disk unix.Stat_t
	if err := unix.Fstat(int(pin.Fd()), &disk); err != nil {
		return err
	}
	if disk.Mode&unix.S_IFMT != unix.S_IFBLK && r.allowFiles {
		return nil
	}
	path := r.partitionPath(slot.Partition)
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return &IdentityError{fmt.Sprintf("%s is not a block device", path)}
	}
	major, minor := unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))
	if int(major) != slot.Major || int(minor) != slot.Minor {
		return &IdentityError{fmt.Sprintf("%s is device %d:%d now, %d:%d when it was observed; waiting for the next look", path, major, minor, slot.Major, slot.Minor)}
	}
	parent, err := r.sysfs().DiskOf(major, minor)
	if err != nil {
		return fmt.Errorf("finding the disk of %s: %w", path, err)
	}
	if want := fmt.Sprintf("%d:%d", unix.Major(uint64(disk.Rdev)), unix.Minor(uint64(disk.Rdev))); parent != want {
		return &IdentityError{fmt.Sprintf("%s is a partition of device %s, not of %s (%s) whose identity was checked", path, parent, pin.Name(), want)}
	}
	return nil
}
