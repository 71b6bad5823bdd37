package signature

import (
	"encoding/binary"
)

// probeLVM: an LVM2 PV label ("LABELONE", its own sector number at +8,
// "LVM2 001" at +24) sits in one of the first four 512-byte sectors.
func probeLVM(d *device) ([]Signature, error) {
	for s := 0; s < 4; s++ {
		l := d.headAt(s*512, 32)
		if l != nil && has(l, 0, "LABELONE") && has(l, 24, "LVM2 001") && le.Uint64(l[8:]) == uint64(s) {
			return one(LVM, "LVM2_member", int64(s*512)), nil
		}
	}
	return nil, nil
}

const mdMagic = 0xa92b4efc

// probeMD finds md superblocks: 1.1 at 0, 1.2 at 4 KiB, 1.0 near the end
// (8 KiB-aligned, 8 KiB from the end) and 0.90 in the last 64 KiB-aligned
// 64 KiB block (native endian, so either byte order is accepted).
func probeMD(d *device) ([]Signature, error) {
	type loc struct {
		off   int64
		major uint32
	}
	locs := []loc{{0, 1}, {4096, 1}}
	if sectors := d.size >> 9; sectors >= 16 {
		locs = append(locs, loc{((sectors - 16) &^ 7) << 9, 1})
	}
	if d.size >= 128<<10 {
		locs = append(locs, loc{d.size&^(64<<10-1) - 64<<10, 0})
	}
	for _, l := range locs {
		sb, err := d.at(l.off, 8)
		if err != nil {
			return nil, err
		}
		if sb == nil {
			continue
		}
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			if bo.Uint32(sb) == mdMagic && bo.Uint32(sb[4:]) == l.major {
				return one(RAID, "linux_raid_member", l.off), nil
			}
			if l.major == 1 {
				break // 1.x superblocks are always little endian
			}
		}
	}
	return nil, nil
}

// luks2Offsets are where LUKS2 may keep its second header.
var luks2Offsets = []int64{0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000}

// probeLUKS: LUKS1/LUKS2 header "LUKS\xba\xbe" + version at 0; LUKS2 keeps a
// second header ("SKUL\xba\xbe") at one of these offsets, found even when
// the first was wiped.
func probeLUKS(d *device) ([]Signature, error) {
	var out []Signature
	if h := d.headAt(0, 8); h != nil && has(h, 0, "LUKS\xba\xbe") {
		if v := binary.BigEndian.Uint16(h[6:]); v == 1 || v == 2 {
			out = append(out, Signature{Other, "crypto_LUKS", 0})
		}
	}
	for _, off := range luks2Offsets {
		h, err := d.at(off, 8)
		if err != nil {
			return nil, err
		}
		if h != nil && has(h, 0, "SKUL\xba\xbe") && binary.BigEndian.Uint16(h[6:]) == 2 {
			out = append(out, Signature{Other, "crypto_LUKS", off})
			break
		}
	}
	return out, nil
}

// BlueStore writes "bluestore block device\n" + OSD uuid + "\n" at the
// start of its label. Since Ceph Squid the main device also carries label
// replicas at 1, 10, 100 and 1000 GiB (bdev_label_positions in
// src/os/bluestore/BlueStore.cc); checking them catches an OSD whose first
// label was zapped but whose data is intact.
var blueStoreLabels = []int64{0, 1 << 30, 10 << 30, 100 << 30, 1000 << 30}

// BlueStoreLabelOffsets are where BlueStore writes its label and its replicas on a device.
var BlueStoreLabelOffsets = blueStoreLabels

const blueStoreMagic = "bluestore block device\n"

func probeBlueStore(d *device) ([]Signature, error) {
	var out []Signature
	for _, off := range blueStoreLabels {
		b, err := d.at(off, len(blueStoreMagic))
		if err != nil {
			return nil, err
		}
		if b == nil {
			break // positions are increasing
		}
		if string(b) == blueStoreMagic {
			out = append(out, Signature{CephBlueStore, "ceph_bluestore", off})
		}
	}
	return out, nil
}

// Open CAS (OCF) cache superblock. Facts from Open-CAS/ocf at commit
// b8b4b704aeba6429f1159b5ba031be98bf3b3c25:
//   - src/metadata/metadata_superblock.h:17 CACHE_MAGIC_NUMBER 0x187E1CA6
//   - same file, lines 26-32: struct ocf_superblock_config starts with
//     uint8 clean_shutdown, uint8 dirty_flushed, uint16 curr_core_seq_no,
//     then uint32 magic_number, i.e. the magic is at byte 4 (host endian)
//   - src/metadata/metadata_superblock.c:720 ocf_metadata_read_sb reads the
//     superblock from offset 0 of the cache volume.
const (
	ocfMagic       = 0x187e1ca6
	ocfMagicOffset = 4
)

func probeOpenCAS(d *device) ([]Signature, error) {
	b := d.headAt(ocfMagicOffset, 4)
	if b != nil && (le.Uint32(b) == ocfMagic || binary.BigEndian.Uint32(b) == ocfMagic) {
		return one(OpenCAS, "open_cas", 0), nil
	}
	return nil, nil
}
