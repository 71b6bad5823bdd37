package signature

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

var le = binary.LittleEndian

// probeGPT checks the primary header at LBA 1 for 512 and 4096 byte sectors
// and the backup header in the last LBA, so a disk whose front was wiped
// still shows as partitioned.
func probeGPT(d *device) ([]Signature, error) {
	var out []Signature
	for _, ss := range []int64{512, 4096} {
		hdr, err := d.at(ss, int(ss))
		if err != nil {
			return nil, err
		}
		if s, ok := gptHeader(hdr, 1); ok {
			out = append(out, Signature{s, nameGPT(s), ss})
		}
		if d.size/ss < 3 {
			continue
		}
		last := d.size/ss - 1
		hdr, err = d.at(last*ss, int(ss))
		if err != nil {
			return nil, err
		}
		if s, ok := gptHeader(hdr, uint64(last)); ok {
			out = append(out, Signature{s, nameGPT(s), last * ss})
		}
	}
	for _, s := range out {
		d.gptFound = d.gptFound || s.Kind == PartitionTable
	}
	return out, nil
}

func nameGPT(k Kind) string {
	if k == PartitionTable {
		return "gpt"
	}
	return "gpt_invalid" // magic present, header damaged: still not an empty disk
}

// gptHeader reports whether sector holds "EFI PART"; the Kind is Other when
// the header size, MyLBA or CRC32 do not check out.
func gptHeader(sector []byte, myLBA uint64) (Kind, bool) {
	if len(sector) < 92 || !bytes.Equal(sector[:8], []byte("EFI PART")) {
		return "", false
	}
	n := le.Uint32(sector[12:])
	if n < 92 || int(n) > len(sector) || le.Uint64(sector[24:]) != myLBA {
		return Other, true
	}
	h := append([]byte(nil), sector[:n]...)
	want := le.Uint32(h[16:])
	clear(h[16:20])
	if crc32.ChecksumIEEE(h) != want {
		return Other, true
	}
	return PartitionTable, true
}

// probeMBR reports a DOS partition table, or "PMBR" for a protective MBR
// whose GPT is gone. Like blkid it ignores 0x55AA when the sector is really
// a FAT/exFAT/NTFS boot sector or the boot flags are not 0x00/0x80.
func probeMBR(d *device) ([]Signature, error) {
	s := d.headAt(0, 512)
	if s == nil || s[510] != 0x55 || s[511] != 0xaa || isBootSector(s) {
		return nil, nil
	}
	protective := false
	for i := 0; i < 4; i++ {
		e := s[446+16*i:]
		if e[0] != 0 && e[0] != 0x80 {
			return nil, nil
		}
		protective = protective || e[4] == 0xee
	}
	switch {
	case protective && d.gptFound:
		return nil, nil // reported as gpt
	case protective:
		return one(PartitionTable, "PMBR", 510), nil
	}
	return one(PartitionTable, "dos", 510), nil
}
