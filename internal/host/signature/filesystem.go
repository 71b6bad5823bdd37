package signature

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

func has(b []byte, off int, magic string) bool {
	return off >= 0 && off+len(magic) <= len(b) && string(b[off:off+len(magic)]) == magic
}

func pow2(v uint32) bool { return v != 0 && bits.OnesCount32(v) == 1 }

// isBootSector reports a FAT, exFAT or NTFS boot sector (which also ends in
// 0x55AA but is not a partition table).
func isBootSector(s []byte) bool {
	return isFAT(s) || has(s, 3, "EXFAT   ") || has(s, 3, "NTFS    ")
}

// isFAT mirrors the BIOS Parameter Block sanity checks blkid uses.
func isFAT(s []byte) bool {
	if len(s) < 512 {
		return false
	}
	magic := has(s, 0x36, "FAT") || has(s, 0x36, "MSDOS") || has(s, 0x52, "FAT32   ") || has(s, 0x52, "MSWIN") ||
		((s[0] == 0xeb || s[0] == 0xe9) && s[510] == 0x55 && s[511] == 0xaa)
	if !magic {
		return false
	}
	sectorSize := uint32(le.Uint16(s[11:]))
	media := s[21]
	fatLen16, fatLen32 := le.Uint16(s[22:]), le.Uint32(s[36:])
	return pow2(sectorSize) && sectorSize >= 512 && sectorSize <= 4096 &&
		pow2(uint32(s[13])) && // sectors per cluster
		le.Uint16(s[14:]) != 0 && // reserved sectors
		s[16] != 0 && // number of FATs
		(media == 0xf0 || media >= 0xf8) &&
		(fatLen16 != 0 || fatLen32 != 0)
}

func probeFAT(d *device) ([]Signature, error) {
	s := d.headAt(0, 512)
	switch {
	case s == nil:
	case isFAT(s):
		return one(Filesystem, "vfat", 0), nil
	case has(s, 3, "EXFAT   "):
		return one(Filesystem, "exfat", 3), nil
	case has(s, 3, "NTFS    "):
		return one(Filesystem, "ntfs", 3), nil
	}
	return nil, nil
}

// ext2/3/4 feature bits (e2fsprogs lib/ext2fs/ext2_fs.h), named as blkid
// splits the family.
const (
	compatHasJournal   = 0x0004
	incompatJournalDev = 0x0008
	ext3IncompatSupp   = 0x0002 | 0x0004 | 0x0010 // FILETYPE, RECOVER, META_BG
	ext3ROCompatSupp   = 0x0001 | 0x0002 | 0x0004 // SPARSE_SUPER, LARGE_FILE, BTREE_DIR
	flagsTestFS        = 0x0004                   // s_flags: ext4dev
)

// probeExt reads the superblock at 1024: magic 0xEF53 at +56, features at
// +92 (compat), +96 (incompat), +100 (ro_compat).
func probeExt(d *device) ([]Signature, error) {
	sb := d.headAt(1024, 1024)
	if sb == nil || le.Uint16(sb[56:]) != 0xef53 {
		return nil, nil
	}
	compat, incompat, ro := le.Uint32(sb[92:]), le.Uint32(sb[96:]), le.Uint32(sb[100:])
	name := "ext4"
	switch {
	case incompat&incompatJournalDev != 0:
		name = "jbd"
	case incompat&^ext3IncompatSupp == 0 && ro&^ext3ROCompatSupp == 0:
		// Within the ext3 feature set (ext2 shares it minus RECOVER).
		name = "ext2"
		if compat&compatHasJournal != 0 {
			name = "ext3"
		}
	case le.Uint32(sb[0x160:])&flagsTestFS != 0:
		name = "ext4dev"
	}
	return one(Filesystem, name, 1080), nil
}

// probeXFS: "XFSB" at 0 with a power-of-two block size (big endian).
func probeXFS(d *device) ([]Signature, error) {
	sb := d.headAt(0, 8)
	if sb == nil || !has(sb, 0, "XFSB") {
		return nil, nil
	}
	if bs := binary.BigEndian.Uint32(sb[4:]); !pow2(bs) || bs < 512 || bs > 65536 {
		return nil, nil
	}
	return one(Filesystem, "xfs", 0), nil
}

// probeBtrfs: "_BHRfS_M" at 64 KiB + 64.
func probeBtrfs(d *device) ([]Signature, error) {
	if has(d.head, 65600, "_BHRfS_M") {
		return one(Filesystem, "btrfs", 65536), nil
	}
	return nil, nil
}

// probeISO9660: primary volume descriptor "CD001" at 32 KiB + 1.
func probeISO9660(d *device) ([]Signature, error) {
	if has(d.head, 32769, "CD001") {
		return one(Filesystem, "iso9660", 32768), nil
	}
	return nil, nil
}

// ZFS vdev labels are 256 KiB; each holds a ring of 1 KiB uberblocks at
// +128 KiB. Like blkid we want at least 4 uberblock magics before saying zfs.
const (
	zfsLabelSize  = 256 << 10
	zfsUberOffset = 128 << 10
	zfsUberMagic  = 0x00bab10c
	zfsWant       = 4
)

// zfsLabels are the offsets of the four vdev labels: two at the start, two in the last
// 256 KiB-aligned 512 KiB (negative on a device too small for them).
func zfsLabels(size int64) [4]int64 {
	align := size % zfsLabelSize
	return [4]int64{0, zfsLabelSize, size - 2*zfsLabelSize - align, size - zfsLabelSize - align}
}

func probeZFS(d *device) ([]Signature, error) {
	found, first := 0, int64(-1)
	for _, l := range zfsLabels(d.size) {
		ring, err := d.at(l+zfsUberOffset, zfsLabelSize-zfsUberOffset)
		if err != nil || ring == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		for off := 0; off+8 <= len(ring); off += 1024 {
			if v := le.Uint64(ring[off:]); v == zfsUberMagic || bits.ReverseBytes64(v) == zfsUberMagic {
				found++
				if first < 0 {
					first = l + zfsUberOffset + int64(off)
				}
			}
		}
		if found >= zfsWant {
			return one(Filesystem, "zfs_member", first), nil
		}
	}
	return nil, nil
}

// probeSwap: the swap header ends with its magic at PAGE_SIZE-10, for any
// page size the device may have been formatted with.
func probeSwap(d *device) ([]Signature, error) {
	for _, ps := range []int{4096, 8192, 16384, 32768, 65536} {
		m := d.headAt(ps-10, 10)
		if m == nil {
			break
		}
		switch {
		case bytes.Equal(m, []byte("SWAPSPACE2")), bytes.Equal(m, []byte("SWAP-SPACE")):
			return one(Swap, "swap", int64(ps-10)), nil
		case bytes.HasPrefix(m, []byte("S1SUSPEND")), bytes.HasPrefix(m, []byte("S2SUSPEND")),
			bytes.HasPrefix(m, []byte("ULSUSPEND")), bytes.Equal(m, []byte("LINHIB0001")):
			return one(Swap, "swsuspend", int64(ps-10)), nil
		}
	}
	return nil, nil
}
