package hostexec

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// directAlign is the alignment of every O_DIRECT read: a page, a multiple of any device's
// logical block size (512 or 4096 bytes).
const directAlign = int64(4096)

// DirectReader reads the device open as F (OpenDirect: O_DIRECT on a block device) at any
// offset and length, by reading the aligned span around it into a page-aligned buffer.
//
// Every proof of the agent's that bytes are zero, or hold only Prism's structures, reads through it: the page
// cache can hold a page read before another writer changed the device behind it (an O_DIRECT
// writer such as LVM or an OSD, a write through a partition's node while the whole device is
// open, another host on shared NVMe-oF or multipath storage), and dropping the cache first
// (BLKFLSBUF) does not stop a tool or udev from filling it again before Prism reads it.
type DirectReader struct{ F *os.File }

// ReadAt reads len(p) bytes at off; io.EOF when the device ends first.
func (d DirectReader) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if off < 0 {
		return 0, fmt.Errorf("read of %s at negative offset %d", d.F.Name(), off)
	}
	lo := off / directAlign * directAlign
	hi := (off + int64(len(p)) + directAlign - 1) / directAlign * directAlign
	buf, err := unix.Mmap(-1, 0, int(hi-lo), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("read of %s: %w", d.F.Name(), err)
	}
	defer unix.Munmap(buf) //nolint:errcheck // unmapping an anonymous mapping cannot lose data
	got := 0
	for got < len(buf) {
		m, err := d.F.ReadAt(buf[got:], lo+int64(got))
		got += m
		if err == io.EOF || err == nil && m == 0 {
			break // the device ends inside the span
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, buf[min(int64(got), off-lo):got])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// OpenDirect opens the device at path for reading with O_DIRECT. A regular file on a file
// system without O_DIRECT (unit tests' tmpfs) is opened through the page cache, which for a
// file is the only copy; a block device always takes O_DIRECT.
func OpenDirect(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if errors.Is(err, unix.EINVAL) {
		if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
			return os.Open(path)
		}
	}
	return f, err
}
