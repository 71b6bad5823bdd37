package gpt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
)

// Copy is one of a table's two copies (header and entry array) as read from the device.
type Copy struct {
	// Header is true when the header's signature and CRC are right.
	Header bool
	// Valid is true when the whole copy is usable: header, its place, the 128x128 entry array
	// at its standard place with the right CRC, and the device's geometry.
	Valid bool
	// Problem says why a copy with a header is not Valid.
	Problem  string
	DiskGUID string
	// Entries are the used entries of the copy's array (Valid copies only).
	Entries []Entry
}

// Disk is the GPT area of a device as read: the protective MBR, both copies and whether each
// of the five regions the table occupies is all zeros.
type Disk struct {
	SectorSize, Sectors int64
	Primary, Backup     Copy
	// MBR is true when sector 0 is a protective MBR.
	MBR bool
	// Zero is, per Regions entry (backup entries, backup header, primary entries, primary
	// header, MBR), whether the region holds only zeros.
	Zero [5]bool
	// entries are the raw entry arrays (backup, primary), kept for ownership checks.
	entries [2][]byte
}

// ReadDisk reads the GPT area of a device of sizeBytes with the given logical sector size.
func ReadDisk(r io.ReaderAt, sizeBytes, sectorSize int64) (Disk, error) {
	l := Layout{SectorSize: sectorSize, Sectors: sizeBytes / sectorSize}
	if err := checkSectorSize(sectorSize); err != nil {
		return Disk{}, err
	}
	if l.LastUsable() < l.FirstUsable() {
		return Disk{}, fmt.Errorf("a device of %d bytes is too small for a GPT", sizeBytes)
	}
	regions := l.Regions()
	for i := range regions {
		if _, err := r.ReadAt(regions[i].Data, regions[i].Offset); err != nil {
			return Disk{}, fmt.Errorf("reading the %s at byte %d: %w", regions[i].What, regions[i].Offset, err)
		}
	}
	d := Disk{SectorSize: sectorSize, Sectors: l.Sectors, MBR: isProtectiveMBR(regions[4].Data)}
	for i := range regions {
		d.Zero[i] = allZero(regions[i].Data)
	}
	d.entries = [2][]byte{regions[0].Data, regions[2].Data}
	last := l.Sectors - 1
	d.Backup = readCopy(l, regions[1].Data, regions[0].Data, last, 1, last-entrySectors(sectorSize))
	d.Primary = readCopy(l, regions[3].Data, regions[2].Data, 1, last, 2)
	return d, nil
}

// readCopy checks one header against its expected place and the entry array found there.
func readCopy(l Layout, h, entries []byte, current, backup, entriesLBA int64) Copy {
	le := binary.LittleEndian
	if !bytes.Equal(h[:8], headerSignature) {
		return Copy{}
	}
	size := le.Uint32(h[12:])
	if size < headerSize || int64(size) > l.SectorSize {
		return Copy{Problem: fmt.Sprintf("header size %d", size)}
	}
	hdr := slices.Clone(h[:size])
	le.PutUint32(hdr[16:], 0)
	if crc32.ChecksumIEEE(hdr) != le.Uint32(h[16:]) {
		return Copy{Problem: "header CRC mismatch"}
	}
	c := Copy{Header: true, DiskGUID: formatGUID(h[56:72])}
	switch {
	case int64(le.Uint64(h[24:])) != current || int64(le.Uint64(h[32:])) != backup:
		c.Problem = fmt.Sprintf("header at LBA %d names itself LBA %d and its other copy LBA %d", current, le.Uint64(h[24:]), le.Uint64(h[32:]))
	case int64(le.Uint64(h[72:])) != entriesLBA || le.Uint32(h[80:]) != entryCount || le.Uint32(h[84:]) != entrySize:
		c.Problem = fmt.Sprintf("entry array of %d entries of %d bytes at LBA %d, not Prism's %dx%d at %d", le.Uint32(h[80:]), le.Uint32(h[84:]), le.Uint64(h[72:]), entryCount, entrySize, entriesLBA)
	case int64(le.Uint64(h[40:])) != l.FirstUsable() || int64(le.Uint64(h[48:])) != l.LastUsable():
		c.Problem = fmt.Sprintf("usable sectors %d-%d, not %d-%d for this device", le.Uint64(h[40:]), le.Uint64(h[48:]), l.FirstUsable(), l.LastUsable())
	case crc32.ChecksumIEEE(entries[:entryCount*entrySize]) != le.Uint32(h[88:]):
		c.Problem = "entry array CRC mismatch"
	}
	if c.Problem != "" {
		return c
	}
	c.Valid = true
	for n := 1; n <= entryCount; n++ {
		if e, ok := decodeEntry(entries[(n-1)*entrySize:n*entrySize], n); ok {
			c.Entries = append(c.Entries, e)
		}
	}
	return c
}

// Complete reports whether the disk holds a whole, consistent GPT: a protective MBR and two
// valid copies with the same disk GUID and entries.
func (d Disk) Complete() bool {
	return d.MBR && d.Primary.Valid && d.Backup.Valid && d.Primary.DiskGUID == d.Backup.DiskGUID &&
		slices.Equal(d.Primary.Entries, d.Backup.Entries)
}

// Blank reports whether every region a GPT would occupy holds only zeros.
func (d Disk) Blank() bool { return d.Zero == [5]bool{true, true, true, true, true} }

// Best is the copy to build on: the primary when valid, else the backup when valid.
func (d Disk) Best() (Copy, bool) {
	switch {
	case d.Primary.Valid:
		return d.Primary, true
	case d.Backup.Valid:
		return d.Backup, true
	}
	return Copy{}, false
}

// Table is the best copy as a Table (Label "" when no copy is valid).
func (d Disk) Table() Table {
	c, ok := d.Best()
	if !ok {
		return Table{}
	}
	l := Layout{SectorSize: d.SectorSize, Sectors: d.Sectors}
	t := Table{Label: LabelGPT, ID: c.DiskGUID, SectorSize: d.SectorSize, FirstLBA: l.FirstUsable(), LastLBA: l.LastUsable()}
	for _, e := range c.Entries {
		t.Partitions = append(t.Partitions, Partition{Number: e.Number, StartBytes: e.FirstLBA * d.SectorSize,
			SizeBytes: (e.LastLBA - e.FirstLBA + 1) * d.SectorSize, Name: e.Name, TypeGUID: e.TypeGUID, UUID: e.UUID})
	}
	return t
}

// Foreign lists what, in the regions a GPT occupies, is neither zeros nor a structure of a
// table owned by Prism: a table whose disk GUID is ownGUID, or a complete table holding only
// entries ownEntry accepts (a table Prism made before it wrote its own disk GUIDs). Empty
// means Prism may write its table over these regions: what it overwrites is zeros or its own.
func (d Disk) Foreign(ownGUID string, ownEntry func(Entry) bool) []string {
	owned := map[string]bool{ownGUID: true}
	if d.Complete() && len(d.Primary.Entries) > 0 && !slices.ContainsFunc(d.Primary.Entries, func(e Entry) bool { return !ownEntry(e) }) {
		owned[d.Primary.DiskGUID] = true
	}
	if d.Complete() && !owned[d.Primary.DiskGUID] {
		return []string{fmt.Sprintf("a GPT Prism did not write (disk GUID %s, %d partitions)", d.Primary.DiskGUID, len(d.Primary.Entries))}
	}
	var out []string
	regions := Layout{SectorSize: d.SectorSize, Sectors: d.Sectors}.Regions()
	copies := [2]Copy{d.Backup, d.Primary}
	anyOwnedHeader := false
	for i, c := range copies {
		hdr := 1 + 2*i // backup header, primary header
		switch {
		case d.Zero[hdr]:
		case c.Header && owned[c.DiskGUID]:
			anyOwnedHeader = true
		case c.Header:
			out = append(out, fmt.Sprintf("a GPT %s with disk GUID %s at byte %d", regions[hdr].What, c.DiskGUID, regions[hdr].Offset))
		default:
			out = append(out, fmt.Sprintf("non-zero bytes that are no GPT header in the %s sector at byte %d", regions[hdr].What, regions[hdr].Offset))
		}
		arr := 2 * i // backup entries, primary entries
		if d.Zero[arr] {
			continue
		}
		for n := 1; n <= entryCount; n++ {
			raw := d.entries[i][(n-1)*entrySize : n*entrySize]
			if allZero(raw) {
				continue
			}
			if e, ok := decodeEntry(raw, n); ok && ownEntry(e) {
				continue
			}
			out = append(out, fmt.Sprintf("the %s area (bytes %d-%d) holds bytes that are no Prism partition entry, from byte %d", regions[arr].What,
				regions[arr].Offset, regions[arr].Offset+int64(len(regions[arr].Data))-1, regions[arr].Offset+int64(n-1)*entrySize))
			break
		}
		if tail := d.entries[i][entryCount*entrySize:]; !allZero(tail) {
			out = append(out, fmt.Sprintf("non-zero bytes after the %s", regions[arr].What))
		}
	}
	switch {
	case d.Zero[4]:
	case d.MBR && anyOwnedHeader:
	case d.MBR:
		out = append(out, "a protective MBR without a GPT header of Prism's")
	default:
		out = append(out, "a master boot record (sector 0 is not zero and not a protective MBR)")
	}
	return out
}

// String summarises the disk's state for messages.
func (d Disk) String() string {
	var s []string
	describe := func(name string, c Copy, zero bool) string {
		switch {
		case c.Valid:
			return fmt.Sprintf("%s valid (%d partitions)", name, len(c.Entries))
		case c.Header:
			return fmt.Sprintf("%s damaged (%s)", name, c.Problem)
		case zero:
			return name + " absent"
		}
		return name + " unreadable"
	}
	s = append(s, describe("primary GPT", d.Primary, d.Zero[3]), describe("backup GPT", d.Backup, d.Zero[1]))
	if d.MBR {
		s = append(s, "protective MBR")
	} else if d.Zero[4] {
		s = append(s, "no MBR")
	}
	return strings.Join(s, ", ")
}
