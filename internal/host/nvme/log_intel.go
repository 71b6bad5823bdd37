package nvme

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"path"
	"strings"
)

// Intel/Solidigm "Additional SMART Attributes" log page (log id CAh).
//
// The page is a list of 12-byte entries. The layout below is the one both
// nvme-cli (plugins/intel/intel-nvme.c, struct nvme_additional_smart_log_item:
// key, _kp[2], norm, _np, raw[6], _rp) and FreeBSD nvmecontrol
// (intel.c, print_intel_add_smart: "walker[0] = Key, walker[1,2] = reserved,
// walker[3] = Normalized Value, walker[4] = reserved, walker[5..10] = Little
// Endian Raw value, walker[11] = reserved") decode:
//
//	byte 0     attribute id
//	bytes 1-2  reserved
//	byte 3     normalized value
//	byte 4     reserved
//	bytes 5-10 raw value, 48-bit little endian
//	byte 11    reserved
const intelAttrSize = 12

// Attribute ids, as named by nvme-cli's intel plugin (id_to_key) and SPDK
// (enum spdk_nvme_intel_smart_attribute_code).
const (
	IntelAttrProgramFailCount   uint8 = 0xAB
	IntelAttrEraseFailCount     uint8 = 0xAC
	IntelAttrWearLevelingCount  uint8 = 0xAD // raw: min, max, avg erase counts (3 × le16)
	IntelAttrE2EErrorCount      uint8 = 0xB8
	IntelAttrCRCErrorCount      uint8 = 0xC7
	IntelAttrTimedMediaWear     uint8 = 0xE2 // raw / 1024 = percent of rated wear in the timed window
	IntelAttrTimedHostReads     uint8 = 0xE3
	IntelAttrTimedWorkloadTimer uint8 = 0xE4 // minutes
	IntelAttrThermalThrottle    uint8 = 0xEA // raw: percent (1 byte), event count (le32)
	IntelAttrRetryBufOverflow   uint8 = 0xF0
	IntelAttrPLLLockLoss        uint8 = 0xF3
	IntelAttrNANDBytesWritten   uint8 = 0xF4 // media writes, model-specific unit (see IntelWriteUnits)
	IntelAttrHostBytesWritten   uint8 = 0xF5 // host writes, model-specific unit
)

// IntelSMARTAttribute is one entry of the CAh page.
type IntelSMARTAttribute struct {
	ID         uint8
	Normalized uint8
	Raw        uint64  // the 48-bit raw field as an integer
	RawBytes   [6]byte // the raw field as stored, for attributes packing several values
	Offset     int     // byte offset of the entry in the page
}

// WearLeveling splits the raw field of attribute ADh into its min, max and
// average erase counts.
func (a IntelSMARTAttribute) WearLeveling() (minimum, maximum, avg uint16) {
	le := binary.LittleEndian
	return le.Uint16(a.RawBytes[0:]), le.Uint16(a.RawBytes[2:]), le.Uint16(a.RawBytes[4:])
}

// Bytes returns Raw × unitBytes, or an error on overflow or unknown unit.
func (a IntelSMARTAttribute) Bytes(unitBytes uint64) (uint64, error) {
	if unitBytes == 0 {
		return 0, fmt.Errorf("intel smart log: attribute %#02x: unit unknown for this model", a.ID)
	}
	hi, lo := bits.Mul64(a.Raw, unitBytes)
	if hi != 0 {
		return 0, fmt.Errorf("intel smart log: attribute %#02x (byte %d) raw %d × %d bytes overflows uint64", a.ID, a.Offset, a.Raw, unitBytes)
	}
	return lo, nil
}

// IntelSMARTLog is the decoded CAh page, entries in page order.
type IntelSMARTLog struct {
	Attributes []IntelSMARTAttribute
}

// Attribute returns the entry with the given id.
func (l IntelSMARTLog) Attribute(id uint8) (IntelSMARTAttribute, bool) {
	for _, a := range l.Attributes {
		if a.ID == id {
			return a, true
		}
	}
	return IntelSMARTAttribute{}, false
}

// ParseIntelSMARTLog decodes every whole 12-byte entry of b. Entries with id 0
// are unused slots (nvme-cli skips them too); a trailing partial entry is
// ignored because drives pad the page to the requested length.
func ParseIntelSMARTLog(b []byte) (IntelSMARTLog, error) {
	const what = "intel smart log"
	if len(b) < intelAttrSize {
		return IntelSMARTLog{}, fmt.Errorf("%s: buffer is %d bytes, need at least %d", what, len(b), intelAttrSize)
	}
	var l IntelSMARTLog
	seen := map[uint8]int{}
	for off := 0; off+intelAttrSize <= len(b); off += intelAttrSize {
		e := b[off : off+intelAttrSize]
		if e[0] == 0 {
			continue
		}
		if prev, dup := seen[e[0]]; dup {
			return IntelSMARTLog{}, fmt.Errorf("%s: attribute %#02x repeated at bytes %d and %d", what, e[0], prev, off)
		}
		seen[e[0]] = off
		a := IntelSMARTAttribute{ID: e[0], Normalized: e[3], Raw: leUint(e[5:11]), Offset: off}
		copy(a.RawBytes[:], e[5:11])
		l.Attributes = append(l.Attributes, a)
	}
	return l, nil
}

// IntelWriteUnit says how many bytes one count of attributes F4h/F5h stands
// for on drives whose model matches ModelPattern (path.Match syntax, compared
// upper-case with whitespace runs collapsed).
type IntelWriteUnit struct {
	ModelPattern string
	UnitBytes    uint64
	Source       string
}

const mib32 = 32 << 20

// cachelibUnit cites the only public statement of the unit found: Meta's
// CacheLib converts "nvme intel smart-log-add" nand_bytes_written with a
// factor of 32 MiB ("For Intel devices, the output is in number of 32 MB
// pages", cachelib/cachebench/util/NandWrites.cpp, intelWriteBytes), and its
// test feeds it a DC P3600 (INTEL SSDPEDME016T4F) recording
// (cachelib/cachebench/util/tests/NandWritesTest.cpp). CacheLib applies the
// factor to every model containing "intel"; the table below is narrower and
// lists only Intel DC NAND families.
const cachelibUnit = "CacheLib NandWrites.cpp intelWriteBytes (32 MiB per count); recording: DC P3600 SSDPEDME016T4F in NandWritesTest.cpp"

// IntelWriteUnits is the per-model unit of attributes F4h and F5h. The unit
// differs between models and firmware generations, so models not listed
// (Optane P4800X/P5800X, Solidigm D5-P5316 and other SSDPF2* drives, client
// drives) have no known unit: callers get the raw counts only.
var IntelWriteUnits = []IntelWriteUnit{
	{ModelPattern: "INTEL SSDPEDM*", UnitBytes: mib32, Source: cachelibUnit},  // DC P3600/P3700 add-in card
	{ModelPattern: "INTEL SSDPE2M*", UnitBytes: mib32, Source: cachelibUnit},  // DC P3500/P3600/P3700 U.2
	{ModelPattern: "INTEL SSDPE2K*", UnitBytes: mib32, Source: cachelibUnit},  // DC P4500/P4510/P4600/P4610
	{ModelPattern: "INTEL SSDPE2NV*", UnitBytes: mib32, Source: cachelibUnit}, // D5-P4320/P4326 (QLC)
}

// IntelWriteUnitBytes returns the F4h/F5h unit for a model, false if unknown.
func IntelWriteUnitBytes(model string) (IntelWriteUnit, bool) {
	m := strings.ToUpper(strings.Join(strings.Fields(model), " "))
	for _, u := range IntelWriteUnits {
		if ok, _ := path.Match(u.ModelPattern, m); ok {
			return u, true
		}
	}
	return IntelWriteUnit{}, false
}
