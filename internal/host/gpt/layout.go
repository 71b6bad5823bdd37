package gpt

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"unicode/utf16"
)

// Prism writes its GPTs itself (decision 0018) instead of through sgdisk, so that it holds the
// device open exclusively for the whole change and knows the exact bytes and order of every
// write: a crash leaves only Prism's own structures or zeros where the table goes, which the
// next pass recognises (Read, Region) and finishes by writing the whole table again.

const (
	headerSize     = 92
	entrySize      = 128
	entryCount     = 128
	gptRevision    = 0x00010000
	mbrSignatureAt = 510
)

var headerSignature = []byte("EFI PART")

// Entry is one used GPT partition entry. LBAs are inclusive, in sectors of the table.
type Entry struct {
	Number            int
	TypeGUID, UUID    string // lower case
	FirstLBA, LastLBA int64
	Attributes        uint64
	Name              string
}

// Layout is a whole GPT: what Prism writes to a device of Sectors sectors.
type Layout struct {
	SectorSize, Sectors int64
	// DiskGUID is the table's disk GUID, lower case.
	DiskGUID string
	// Entries are the used entries, any order; Number is the index in the array (1-based).
	Entries []Entry
}

// Write is one contiguous write of a layout, at a byte offset.
type Write struct {
	What   string
	Offset int64
	Data   []byte
}

// entrySectors is how many sectors the 128-entry array takes.
func entrySectors(ss int64) int64 { return (entryCount*entrySize + ss - 1) / ss }

// FirstUsable and LastUsable bound the sectors partitions may use.
func (l Layout) FirstUsable() int64 { return 2 + entrySectors(l.SectorSize) }

// LastUsable is the last sector a partition may use.
func (l Layout) LastUsable() int64 { return l.Sectors - 2 - entrySectors(l.SectorSize) }

// Regions are the byte ranges a GPT occupies, in the order Writes writes them: backup entries,
// backup header, primary entries, primary header, protective MBR.
func (l Layout) Regions() []Write {
	ss, es := l.SectorSize, entrySectors(l.SectorSize)
	return []Write{
		{What: "backup partition entries", Offset: (l.Sectors - 1 - es) * ss, Data: make([]byte, es*ss)},
		{What: "backup GPT header", Offset: (l.Sectors - 1) * ss, Data: make([]byte, ss)},
		{What: "primary partition entries", Offset: 2 * ss, Data: make([]byte, es*ss)},
		{What: "primary GPT header", Offset: ss, Data: make([]byte, ss)},
		{What: "protective MBR", Offset: 0, Data: make([]byte, ss)},
	}
}

// Check validates the layout: geometry, entries within the usable sectors, no overlaps,
// numbers 1..128 once each, GUIDs and names that fit.
func (l Layout) Check() error {
	if err := checkSectorSize(l.SectorSize); err != nil {
		return err
	}
	if l.Sectors < 0 || l.LastUsable() < l.FirstUsable() {
		return fmt.Errorf("a device of %d sectors is too small for a GPT", l.Sectors)
	}
	if _, err := parseGUID(l.DiskGUID); err != nil {
		return fmt.Errorf("disk GUID: %w", err)
	}
	es := slices.Clone(l.Entries)
	slices.SortFunc(es, func(a, b Entry) int { return int(a.FirstLBA - b.FirstLBA) })
	seen := map[int]bool{}
	for i, e := range es {
		switch {
		case e.Number < 1 || e.Number > entryCount:
			return fmt.Errorf("partition number %d: want 1 to %d", e.Number, entryCount)
		case seen[e.Number]:
			return fmt.Errorf("partition %d appears twice", e.Number)
		case e.FirstLBA < l.FirstUsable() || e.LastLBA > l.LastUsable() || e.LastLBA < e.FirstLBA:
			return fmt.Errorf("partition %d (sectors %d-%d) is outside the usable sectors %d-%d", e.Number, e.FirstLBA, e.LastLBA, l.FirstUsable(), l.LastUsable())
		case i > 0 && es[i-1].LastLBA >= e.FirstLBA:
			return fmt.Errorf("partitions %d and %d overlap", es[i-1].Number, e.Number)
		}
		seen[e.Number] = true
		if _, err := parseGUID(e.TypeGUID); err != nil {
			return fmt.Errorf("partition %d type: %w", e.Number, err)
		}
		if _, err := parseGUID(e.UUID); err != nil {
			return fmt.Errorf("partition %d unique GUID: %w", e.Number, err)
		}
		if err := checkName(e.Name); err != nil {
			return fmt.Errorf("partition %d: %w", e.Number, err)
		}
	}
	return nil
}

// Writes encodes the layout as the five writes of Regions, in that order: a crash between two
// of them leaves a valid backup (or nothing) until the primary is complete, and the protective
// MBR, which makes every tool take the device for a GPT disk, comes last.
func (l Layout) Writes() ([]Write, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	ss, es := l.SectorSize, entrySectors(l.SectorSize)
	entries := make([]byte, es*ss)
	for _, e := range l.Entries {
		encodeEntry(entries[(e.Number-1)*entrySize:e.Number*entrySize], e)
	}
	entriesCRC := crc32.ChecksumIEEE(entries[:entryCount*entrySize])
	disk, _ := parseGUID(l.DiskGUID)
	header := func(current, backup, entriesLBA int64) []byte {
		h := make([]byte, ss)
		copy(h, headerSignature)
		le := binary.LittleEndian
		le.PutUint32(h[8:], gptRevision)
		le.PutUint32(h[12:], headerSize)
		le.PutUint64(h[24:], uint64(current))
		le.PutUint64(h[32:], uint64(backup))
		le.PutUint64(h[40:], uint64(l.FirstUsable()))
		le.PutUint64(h[48:], uint64(l.LastUsable()))
		copy(h[56:72], disk[:])
		le.PutUint64(h[72:], uint64(entriesLBA))
		le.PutUint32(h[80:], entryCount)
		le.PutUint32(h[84:], entrySize)
		le.PutUint32(h[88:], entriesCRC)
		le.PutUint32(h[16:], crc32.ChecksumIEEE(h[:headerSize]))
		return h
	}
	last := l.Sectors - 1
	w := l.Regions()
	w[0].Data = entries
	w[1].Data = header(last, 1, last-es)
	w[2].Data = entries
	w[3].Data = header(1, last, 2)
	w[4].Data = protectiveMBR(ss, l.Sectors)
	return w, nil
}

func protectiveMBR(ss, sectors int64) []byte {
	m := make([]byte, ss)
	rec := m[446:462]
	rec[1], rec[2], rec[3] = 0x00, 0x02, 0x00 // CHS of LBA 1
	rec[4] = 0xee
	rec[5], rec[6], rec[7] = 0xff, 0xff, 0xff
	binary.LittleEndian.PutUint32(rec[8:], 1)
	binary.LittleEndian.PutUint32(rec[12:], uint32(min(sectors-1, 0xffffffff)))
	m[mbrSignatureAt], m[mbrSignatureAt+1] = 0x55, 0xaa
	return m
}

func encodeEntry(b []byte, e Entry) {
	t, _ := parseGUID(e.TypeGUID)
	u, _ := parseGUID(e.UUID)
	copy(b[0:16], t[:])
	copy(b[16:32], u[:])
	binary.LittleEndian.PutUint64(b[32:], uint64(e.FirstLBA))
	binary.LittleEndian.PutUint64(b[40:], uint64(e.LastLBA))
	binary.LittleEndian.PutUint64(b[48:], e.Attributes)
	for i, c := range utf16.Encode([]rune(e.Name)) {
		binary.LittleEndian.PutUint16(b[56+2*i:], c)
	}
}

func decodeEntry(b []byte, number int) (Entry, bool) {
	if allZero(b[0:16]) {
		return Entry{}, false
	}
	var name []uint16
	for i := 56; i+1 < entrySize; i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		name = append(name, c)
	}
	return Entry{
		Number:     number,
		TypeGUID:   formatGUID(b[0:16]),
		UUID:       formatGUID(b[16:32]),
		FirstLBA:   int64(binary.LittleEndian.Uint64(b[32:])),
		LastLBA:    int64(binary.LittleEndian.Uint64(b[40:])),
		Attributes: binary.LittleEndian.Uint64(b[48:]),
		Name:       string(utf16.Decode(name)),
	}, true
}

// parseGUID encodes a textual GUID in GPT's mixed-endian byte order.
func parseGUID(s string) ([16]byte, error) {
	var g [16]byte
	if !isGUID(s) {
		return g, fmt.Errorf("%q is not a GUID", s)
	}
	hex := strings.ReplaceAll(s, "-", "")
	var raw [16]byte
	for i := range raw {
		fmt.Sscanf(hex[2*i:2*i+2], "%02x", &raw[i])
	}
	order := [16]int{3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15}
	for i, j := range order {
		g[i] = raw[j]
	}
	return g, nil
}

func formatGUID(b []byte) string {
	return fmt.Sprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
}

// DerivedGUID is a stable GUID (RFC 9562 version 8) from the given parts: Prism's disk GUID
// for a device (so that a half-written table of Prism's is recognisable as Prism's), and the
// unique GUIDs of the partitions it creates (so that writing a table again writes the same
// bytes).
func DerivedGUID(parts ...string) string {
	h := sha256.Sum256([]byte("prism/gpt/v1\x00" + strings.Join(parts, "\x00")))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// isProtectiveMBR reports whether sector 0 is a protective MBR: the boot signature and a
// first record of type 0xEE starting at LBA 1.
func isProtectiveMBR(m []byte) bool {
	return len(m) >= 512 && m[mbrSignatureAt] == 0x55 && m[mbrSignatureAt+1] == 0xaa &&
		m[446+4] == 0xee && binary.LittleEndian.Uint32(m[446+8:]) == 1 &&
		allZero(m[462:510])
}
