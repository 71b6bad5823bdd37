package signature

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"reflect"
	"slices"
	"testing"
)

// sparse is a zero-filled device of any size with a few written regions, so
// tests can place magics at the end of a "1 TiB" disk without allocating it.
type sparse struct {
	size  int64
	parts map[int64][]byte
}

func dev(size int64) *sparse { return &sparse{size: size, parts: map[int64][]byte{}} }

func (s *sparse) put(off int64, b []byte) *sparse { s.parts[off] = b; return s }

func (s *sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := len(p)
	if rem := s.size - off; int64(n) > rem {
		n = int(rem)
	}
	clear(p[:n])
	// In offset order, so that where parts overlap the later one wins on every read.
	for _, o := range slices.Sorted(maps.Keys(s.parts)) {
		b := s.parts[o]
		lo, hi := max(o, off), min(o+int64(len(b)), off+int64(n))
		if lo < hi {
			copy(p[lo-off:hi-off], b[lo-o:hi-o])
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func u16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// gptHdr builds a valid GPT header sector for the given MyLBA.
func gptHdr(ss int, myLBA uint64) []byte {
	h := make([]byte, ss)
	copy(h, "EFI PART")
	copy(h[8:], u32(0x00010000))
	copy(h[12:], u32(92))
	binary.LittleEndian.PutUint64(h[24:], myLBA)
	copy(h[16:], u32(crc32.ChecksumIEEE(h[:92])))
	return h
}

func mbr(bootFlag, ptype byte) []byte {
	s := make([]byte, 512)
	s[446], s[446+4] = bootFlag, ptype
	s[510], s[511] = 0x55, 0xaa
	return s
}

func fatBoot() []byte {
	s := make([]byte, 512)
	s[0] = 0xeb
	copy(s[11:], u16(512))
	s[13] = 4            // sectors per cluster
	copy(s[14:], u16(4)) // reserved
	s[16] = 2            // FATs
	s[21] = 0xf8         // media
	copy(s[22:], u16(32))
	copy(s[0x36:], "FAT16   ")
	s[510], s[511] = 0x55, 0xaa
	return s
}

func extSB(compat, incompat, ro uint32) []byte {
	sb := make([]byte, 1024)
	copy(sb[56:], u16(0xef53))
	copy(sb[92:], u32(compat))
	copy(sb[96:], u32(incompat))
	copy(sb[100:], u32(ro))
	return sb
}

func zfsRing() []byte {
	r := make([]byte, 128<<10)
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(r[i*1024:], 0x00bab10c)
	}
	return r
}

const mib = 1 << 20

func TestDetectSynthetic(t *testing.T) {
	const tib = int64(1) << 40
	tests := []struct {
		name string
		d    *sparse
		want []Signature
	}{
		{"empty", dev(8 * mib), nil},
		{"tiny", dev(100).put(0, []byte("XFSB")), nil},
		{"gpt 512", dev(8*mib).put(0, mbr(0, 0xee)).put(512, gptHdr(512, 1)),
			[]Signature{{PartitionTable, "gpt", 512}}},
		{"gpt 4096", dev(8*mib).put(0, mbr(0, 0xee)).put(4096, gptHdr(4096, 1)),
			[]Signature{{PartitionTable, "gpt", 4096}}},
		{"gpt backup only", dev(8*mib).put(8*mib-512, gptHdr(512, 8*mib/512-1)),
			[]Signature{{PartitionTable, "gpt", 8*mib - 512}}},
		{"gpt bad crc leaves PMBR", dev(8*mib).put(0, mbr(0, 0xee)).put(512, append([]byte("EFI PART"), make([]byte, 504)...)),
			[]Signature{{PartitionTable, "PMBR", 510}, {Other, "gpt_invalid", 512}}},
		{"dos", dev(8*mib).put(0, mbr(0x80, 0x83)), []Signature{{PartitionTable, "dos", 510}}},
		{"55aa with bad boot flag", dev(8*mib).put(0, mbr(0x12, 0x83)), nil},
		{"fat boot sector is not dos", dev(8*mib).put(0, fatBoot()), []Signature{{Filesystem, "vfat", 0}}},
		{"exfat", dev(8*mib).put(3, []byte("EXFAT   ")).put(510, []byte{0x55, 0xaa}), []Signature{{Filesystem, "exfat", 3}}},
		{"ext2", dev(8*mib).put(1024, extSB(0, 0x2, 0x3)), []Signature{{Filesystem, "ext2", 1080}}},
		{"ext3", dev(8*mib).put(1024, extSB(0x4, 0x2, 0x3)), []Signature{{Filesystem, "ext3", 1080}}},
		{"ext4 extents", dev(8*mib).put(1024, extSB(0x4, 0x2|0x40, 0x3)), []Signature{{Filesystem, "ext4", 1080}}},
		{"jbd", dev(8*mib).put(1024, extSB(0, 0x8, 0)), []Signature{{Filesystem, "jbd", 1080}}},
		{"xfs", dev(8*mib).put(0, []byte("XFSB\x00\x00\x10\x00")), []Signature{{Filesystem, "xfs", 0}}},
		{"xfs bad block size", dev(8*mib).put(0, []byte("XFSB\x00\x00\x10\x01")), nil},
		{"btrfs", dev(8*mib).put(65600, []byte("_BHRfS_M")), []Signature{{Filesystem, "btrfs", 65536}}},
		{"iso9660", dev(8*mib).put(32769, []byte("CD001")), []Signature{{Filesystem, "iso9660", 32768}}},
		{"zfs label 0", dev(8*mib).put(128<<10, zfsRing()), []Signature{{Filesystem, "zfs_member", 128 << 10}}},
		{"zfs label 1", dev(8*mib).put(256<<10+128<<10, zfsRing()), []Signature{{Filesystem, "zfs_member", 384 << 10}}},
		{"zfs too few uberblocks", dev(8*mib).put(128<<10, zfsRing()[:3*1024]), nil},
		{"swap 4k", dev(8*mib).put(4086, []byte("SWAPSPACE2")), []Signature{{Swap, "swap", 4086}}},
		{"swap 64k pages", dev(8*mib).put(65526, []byte("SWAP-SPACE")), []Signature{{Swap, "swap", 65526}}},
		{"lvm sector 1", dev(8*mib).put(512, append(append([]byte("LABELONE"), 1, 0, 0, 0, 0, 0, 0, 0), []byte("\x00\x00\x00\x00\x00\x00\x00\x00LVM2 001")...)),
			[]Signature{{LVM, "LVM2_member", 512}}},
		{"md 1.2", dev(8*mib).put(4096, append(u32(0xa92b4efc), u32(1)...)), []Signature{{RAID, "linux_raid_member", 4096}}},
		{"md 1.1", dev(8*mib).put(0, append(u32(0xa92b4efc), u32(1)...)), []Signature{{RAID, "linux_raid_member", 0}}},
		{"md 1.0 at end", dev(8*mib).put(8*mib-8192, append(u32(0xa92b4efc), u32(1)...)), []Signature{{RAID, "linux_raid_member", 8*mib - 8192}}},
		{"md 0.90 at end, big endian", dev(8*mib+1000).put(8*mib-65536, []byte{0xa9, 0x2b, 0x4e, 0xfc, 0, 0, 0, 0}),
			[]Signature{{RAID, "linux_raid_member", 8*mib - 65536}}},
		{"luks1", dev(8*mib).put(0, []byte("LUKS\xba\xbe\x00\x01")), []Signature{{Other, "crypto_LUKS", 0}}},
		{"luks2 secondary only", dev(8*mib).put(0x4000, []byte("SKUL\xba\xbe\x00\x02")), []Signature{{Other, "crypto_LUKS", 0x4000}}},
		{"bluestore", dev(8*mib).put(0, []byte("bluestore block device\n6f2b1b1e-0f5c-4e4b-9a43-6e3c8c3b6b1d\n")),
			[]Signature{{CephBlueStore, "ceph_bluestore", 0}}},
		{"bluestore replica at 1 GiB only", dev(tib).put(1<<30, []byte("bluestore block device\n")),
			[]Signature{{CephBlueStore, "ceph_bluestore", 1 << 30}}},
		{"open cas", dev(8*mib).put(4, u32(0x187e1ca6)), []Signature{{OpenCAS, "open_cas", 0}}},
		// The first 16 bytes of a cache partition that the real Open CAS v26.03.2 module left
		// after a crash (QEMU guest, docs/opencas-real-module.md): clean_shutdown 0, then the magic.
		{"open cas, real v26.03.2 superblock", dev(8*mib).put(0, realOCFHead), []Signature{{OpenCAS, "open_cas", 0}}},
		{"gpt 4k primary and backup", dev(8*mib).put(0, mbr(0, 0xee)).put(4096, gptHdr(4096, 1)).
			put(8*mib-4096, gptHdr(4096, 8*mib/4096-1)),
			[]Signature{{PartitionTable, "gpt", 4096}, {PartitionTable, "gpt", 8*mib - 4096}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.d, tt.d.size)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

type failing struct{ *sparse }

func (f failing) ReadAt(p []byte, off int64) (int, error) {
	if off >= mib {
		return 0, errors.New("medium error")
	}
	return f.sparse.ReadAt(p, off)
}

// A read error past the first MiB must surface: an unreadable device is
// never reported as empty.
func TestDetectReadError(t *testing.T) {
	d := dev(64 * mib)
	if _, err := Detect(failing{d}, d.size); err == nil {
		t.Fatal("want error")
	}
	if _, err := Detect(bytes.NewReader(make([]byte, 10)), 20); err == nil {
		t.Fatal("short device: want error")
	}
}

func FuzzDetect(f *testing.F) {
	f.Add(mbr(0x80, 0x83), int64(0))
	f.Add(fatBoot(), int64(4096))
	f.Add(append(make([]byte, 1024), extSB(4, 0x42, 3)...), int64(0))
	f.Add(gptHdr(512, 1), int64(-512))
	f.Add(zfsRing(), int64(8*mib+100<<10))
	f.Add(append(u32(0xa92b4efc), u32(1)...), int64(8*mib+1000))
	f.Fuzz(func(t *testing.T, b []byte, extra int64) {
		// extra stretches the device past the data, so end-of-device probes
		// run against zeros; negative values shrink it.
		size := int64(len(b)) + extra%(1<<32)
		if size < 0 {
			size = 0
		}
		d := dev(size).put(0, b)
		if size > int64(len(b)) && len(b) > 0 {
			d.put(size-int64(len(b)), b) // same bytes at the end too
		}
		got, err := Detect(d, size)
		// The head and tail reads must not change what is found.
		want, wantErr := detectUncached(d, size)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("size %d: Detect %v, %v; uncached %v, %v", size, got, err, want, wantErr)
		}
	})
}

var realOCFHead = []byte{0x00, 0x01, 0x00, 0x00, 0xa6, 0x1c, 0x7e, 0x18, 0x02, 0x03, 0x1a, 0x00, 0x01, 0x00, 0x00, 0x00}
