//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64)

package signature

import (
	"os"
	"slices"
	"syscall"
)

// posixFadvRandom is POSIX_FADV_RANDOM from <linux/fadvise.h>.
const posixFadvRandom = 1

// adviseRandom turns kernel readahead off for this open file only: the kernel marks
// this open file description (FMODE_RANDOM), nobody else's. Detect reads exactly the
// ranges it probes; without the hint every read of a block device also pulls in up to
// read_ahead_kb more (2.5 MiB on a loop device over ext4, 128 KiB on most disks), which
// the kernel drops again when the last opener closes the device. It is only a hint: if
// it fails (a pipe, a file system that ignores it) the same bytes are read.
func adviseRandom(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		// fadvise64(fd, offset, len, advice) on these 64-bit ABIs; len 0 means to the end.
		_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, fd, 0, 0, posixFadvRandom, 0, 0)
	})
}

// posixFadvWillNeed is POSIX_FADV_WILLNEED.
const posixFadvWillNeed = 3

// Prefetch asks the kernel to start reading, in the background, what Detect and libblkid
// will read of a device of the given size: its head, its tail from ZFS label 2 on (libblkid
// reads the four ZFS labels whole), and the page of each of Detect's small reads beyond
// them (LUKS2's second header, BlueStore's label replicas). A caller that opens several
// devices first prefetches them all, so that their reads overlap the work on the devices
// before them (0.89x the wall time of an inventory of 8 loop devices; the small reads took
// another 0.97x of its CPU time, by sparing it waits). It is only a hint, and reads exactly
// those ranges (readahead stays off).
func Prefetch(f *os.File, size int64) {
	rc, err := f.SyscallConn()
	if err != nil || size <= 0 {
		return
	}
	head := min(size, headSize)
	from := max(head, zfsLabels(size)[2])
	_ = rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, fd, 0, uintptr(head), posixFadvWillNeed, 0, 0)
		if from < size {
			_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, fd, uintptr(from), uintptr(size-from), posixFadvWillNeed, 0, 0)
		}
		for _, off := range slices.Concat(luks2Offsets, blueStoreLabels) {
			if off >= head && off+4096 <= from {
				_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, fd, uintptr(off), 4096, posixFadvWillNeed, 0, 0)
			}
		}
	})
}
