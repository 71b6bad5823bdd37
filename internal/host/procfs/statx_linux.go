package procfs

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// BlockDeviceNumber stats what path (a /proc/<pid>/fd link, a mount's source) refers to and
// returns its device number when it is a block device node. AT_STATX_DONT_SYNC: a file on a FUSE or network file
// system answers from the attributes the kernel has, so a hung FUSE daemon or server does
// not hang the scan (a device node's own attributes are never fetched remotely). With no
// attributes asked for, FUSE answers even for a mount its owner keeps from other users,
// where it would refuse a stat: such a file then has no type, and is not a device node.
func BlockDeviceNumber(path string) (uint64, bool, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_STATX_DONT_SYNC, 0, &st); err != nil {
		return 0, false, &fs.PathError{Op: "statx", Path: path, Err: err}
	}
	if st.Mask&unix.STATX_TYPE == 0 || st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0, false, nil
	}
	return unix.Mkdev(st.Rdev_major, st.Rdev_minor), true, nil
}
