//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64)

package signature

import (
	"os"
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
