package signature

import (
	"fmt"
	"io"
	"slices"
)

// ZeroSpan is how much of a device's head and tail must read zero for the device to count as
// empty where Prism looks: every partition table, file system, volume manager and BlueStore
// label starts in its first MiB or ends in its last one (a GPT's backup, md 1.0, ZFS labels
// 2 and 3), and new, discarded and secure-erased drives read zero there. It cannot see data a
// wiped table left further in (docs/provisioning.md says so).
const ZeroSpan = int64(1) << 20

// FirstNonZero returns the offset of the first non-zero byte in the first and the last span
// bytes of a device of the given size, or -1 when both read zero. A read error is an error:
// a device that cannot be read is never proven empty.
func FirstNonZero(r io.ReaderAt, size, span int64) (int64, error) {
	if size < 0 || span <= 0 {
		return 0, fmt.Errorf("signature: bad size %d or span %d", size, span)
	}
	n := min(span, size)
	buf := make([]byte, n)
	for _, off := range []int64{0, max(size-n, 0)} {
		if _, err := io.ReadFull(io.NewSectionReader(r, off, n), buf); err != nil {
			return 0, fmt.Errorf("signature: reading %d bytes at %d: %w", n, off, err)
		}
		if i := slices.IndexFunc(buf, func(b byte) bool { return b != 0 }); i >= 0 {
			return off + int64(i), nil
		}
	}
	return -1, nil
}
