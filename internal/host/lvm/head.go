package lvm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// HeadSize is how much of a PV LVM's label and metadata area take with LVM's defaults: the
// label in sector 1, the metadata area from 4 KiB to 1 MiB, where the first extent starts.
const HeadSize = 1 << 20

// On-disk layout (lvm2's lib/label/label.h and lib/format_text/layout.h).
const (
	labelOffset   = 512 // pvcreate writes the label to sector 1
	sectorSize    = 512
	mdaOffset     = 4096 // the first metadata area's header
	mdaTextOffset = mdaOffset + sectorSize
	initialCRC    = 0xf597a6cf
)

var (
	labelID   = []byte("LABELONE")
	labelType = []byte("LVM2 001")
	mdaMagic  = []byte(" LVM2 x[5A%r0N*>")
)

// Head is what a partition's first HeadSize bytes hold of LVM, as ReadHead found it.
type Head struct {
	// PVUUID is the UUID of the PV label in sector 1, in LVM's dashed form; "" without a label.
	PVUUID string
	// MDA is set when a metadata area header is at 4 KiB.
	MDA bool
	// VGName is the VG the metadata text after the header names; "" without text.
	VGName string
}

// Zero reports whether the head holds nothing.
func (h Head) Zero() bool { return h == Head{} }

// ReadHead reads head, a partition's first HeadSize bytes, as what pvcreate and vgcreate write
// there, and fails, naming the offset, on any byte they would not have written: every byte must
// be zero, or part of an LVM2 label in sector 1 (its checksum covers the sector), a metadata
// area header at 4 KiB (checksummed, starting there, ending at 1 MiB), or one metadata text
// right after that header: printable, naming a VG ("<name> {"), without a logical volume
// (vgcreate writes none), then zeros. So a head it accepts holds no data of anyone's: at most
// an empty PV, or the metadata of a VG without logical volumes.
func ReadHead(head []byte) (Head, error) {
	var h Head
	if len(head) != HeadSize {
		return h, fmt.Errorf("LVM head: %d bytes, want %d", len(head), HeadSize)
	}
	if err := zeros(head, 0, labelOffset); err != nil {
		return h, err
	}
	if !allZero(head[labelOffset : labelOffset+sectorSize]) {
		uuid, err := readLabel(head[labelOffset : labelOffset+sectorSize])
		if err != nil {
			return h, err
		}
		h.PVUUID = uuid
	}
	if err := zeros(head, labelOffset+sectorSize, mdaOffset); err != nil {
		return h, err
	}
	if !allZero(head[mdaOffset:mdaTextOffset]) {
		if err := readMDAHeader(head[mdaOffset:mdaTextOffset]); err != nil {
			return h, err
		}
		h.MDA = true
	}
	text := head[mdaTextOffset:]
	end := bytes.IndexByte(text, 0)
	if end < 0 {
		return h, fmt.Errorf("LVM head: metadata text at %d fills the metadata area", mdaTextOffset)
	}
	if end > 0 {
		if !h.MDA {
			return h, fmt.Errorf("LVM head: bytes at %d without a metadata area header", mdaTextOffset)
		}
		vg, err := readText(text[:end])
		if err != nil {
			return h, err
		}
		h.VGName = vg
	}
	return h, zeros(head, mdaTextOffset+end, HeadSize)
}

// readLabel checks an LVM2 label sector and returns its PV's UUID.
func readLabel(s []byte) (string, error) {
	le := binary.LittleEndian
	switch {
	case !bytes.Equal(s[0:8], labelID):
		return "", fmt.Errorf("LVM head: sector 1 is not an LVM label (%q)", printable(s[0:8]))
	case le.Uint64(s[8:16]) != 1:
		return "", fmt.Errorf("LVM head: the label in sector 1 says sector %d", le.Uint64(s[8:16]))
	case le.Uint32(s[16:20]) != crc(s[20:]):
		return "", fmt.Errorf("LVM head: the label's checksum %#x does not match its sector (%#x)", le.Uint32(s[16:20]), crc(s[20:]))
	case le.Uint32(s[20:24]) != 32 || !bytes.Equal(s[24:32], labelType):
		return "", fmt.Errorf("LVM head: the label is not LVM2's (header offset %d, type %q)", le.Uint32(s[20:24]), printable(s[24:32]))
	}
	id := s[32:64]
	for _, c := range id {
		if !idChar(c) {
			return "", fmt.Errorf("LVM head: the label's PV UUID %q has a character LVM does not use", printable(id))
		}
	}
	return formatID(string(id)), nil
}

// readMDAHeader checks a metadata area header: LVM's magic, version 1, the area starting
// where the header is and ending at HeadSize.
func readMDAHeader(s []byte) error {
	le := binary.LittleEndian
	switch {
	case !bytes.Equal(s[4:20], mdaMagic):
		return fmt.Errorf("LVM head: bytes at %d are not a metadata area header", mdaOffset)
	case le.Uint32(s[0:4]) != crc(s[4:]):
		return fmt.Errorf("LVM head: the metadata area header's checksum %#x does not match (%#x)", le.Uint32(s[0:4]), crc(s[4:]))
	case le.Uint32(s[20:24]) != 1:
		return fmt.Errorf("LVM head: metadata area header version %d", le.Uint32(s[20:24]))
	case le.Uint64(s[24:32]) != mdaOffset || le.Uint64(s[32:40]) != HeadSize-mdaOffset:
		return fmt.Errorf("LVM head: the metadata area is at %d, %d bytes, not LVM's default %d, %d", le.Uint64(s[24:32]), le.Uint64(s[32:40]), mdaOffset, HeadSize-mdaOffset)
	}
	return nil
}

// readText checks metadata text and returns the VG it describes.
func readText(t []byte) (string, error) {
	for i, c := range t {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\t' {
			return "", fmt.Errorf("LVM head: byte %#x at %d in the metadata text", c, mdaTextOffset+i)
		}
	}
	name, _, ok := bytes.Cut(t, []byte(" {\n"))
	if !ok || CheckVGName(string(name)) != nil {
		return "", fmt.Errorf("LVM head: the metadata text at %d does not start with a volume group", mdaTextOffset)
	}
	if bytes.Contains(t, []byte("logical_volumes {")) {
		return "", fmt.Errorf("LVM head: the metadata text of %s lists logical volumes", name)
	}
	return string(name), nil
}

// crc is lvm2's calc_crc(INITIAL_CRC, ...): the IEEE CRC-32 table without the final inversion.
func crc(b []byte) uint32 { return ^crc32.Update(^uint32(initialCRC), crc32.IEEETable, b) }

func zeros(b []byte, from, to int) error {
	if i := bytes.IndexFunc(b[from:to], func(r rune) bool { return r != 0 }); i >= 0 {
		return fmt.Errorf("LVM head: a byte at %d that LVM does not write", from+i)
	}
	return nil
}

func allZero(b []byte) bool { return !bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) }

func printable(b []byte) string {
	return string(bytes.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '.'
		}
		return r
	}, b))
}

// idChar is a character of an LVM UUID (lvm2's lib/uuid/uuid.c: [0-9a-zA-Z!#]).
func idChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '!' || c == '#'
}

// formatID writes a 32-character LVM id in LVM's dashed form: 6-4-4-4-4-4-6.
func formatID(id string) string {
	var b []byte
	for i, n := range []int{6, 4, 4, 4, 4, 4, 6} {
		if i > 0 {
			b = append(b, '-')
		}
		b = append(b, id[:n]...)
		id = id[n:]
	}
	return string(b)
}

// checkID accepts an LVM UUID in its dashed form.
func checkID(id string) error {
	dashes := map[int]bool{6: true, 11: true, 16: true, 21: true, 26: true, 31: true}
	if len(id) != 38 {
		return fmt.Errorf("PV UUID %q is not in LVM's form (6-4-4-4-4-4-6 characters)", id)
	}
	for i := 0; i < len(id); i++ {
		if dashes[i] != (id[i] == '-') || !dashes[i] && !idChar(id[i]) {
			return fmt.Errorf("PV UUID %q has %q at %d: not LVM's form (6-4-4-4-4-4-6 of [0-9a-zA-Z!#])", id, id[i], i)
		}
	}
	return nil
}

// PVUUID is the PV UUID Prism gives the PV on the partition whose GPT unique GUID is partUUID:
// the GUID's 32 hex digits, in LVM's dashed form. A label naming it is Prism's pvcreate on that
// partition; pvcreate --uuid takes it.
func PVUUID(partUUID string) (string, error) {
	var hex []byte
	for _, c := range []byte(partUUID) {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c >= 'A' && c <= 'F':
			hex = append(hex, c+'a'-'A')
		case c == '-':
		default:
			return "", fmt.Errorf("partition GUID %q: %q is not a hex digit", partUUID, c)
		}
	}
	if len(hex) != 32 {
		return "", errors.New("partition GUID " + fmt.Sprintf("%q", partUUID) + " does not have 32 hex digits")
	}
	return formatID(string(hex)), nil
}
