// Package nvme reads and decodes NVMe Identify data so the node agent can
// tell fast (Optane/SLC) devices from QLC ones without touching their data.
//
// Byte offsets follow the NVMe Base Specification (Identify Controller, CNS
// 01h) and the NVM Command Set Specification (Identify Namespace, CNS 00h).
package nvme

//go:generate go run ./internal/fixturegen -out testdata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
)

// IdentifySize is the length of every Identify data structure.
const IdentifySize = 4096

// LPA (Log Page Attributes, byte 261) bits.
const (
	LPASMARTPerNamespace  = 1 << 0 // SMART/Health log per namespace
	LPACommandEffects     = 1 << 1 // Commands Supported and Effects log
	LPAExtendedData       = 1 << 2 // Get Log Page extended data (NUMDU, LPO)
	LPATelemetry          = 1 << 3 // Telemetry host/controller-initiated logs
	LPAPersistentEventLog = 1 << 4 // Persistent Event log
)

// NSFEAT bit 4: NPWG, NPWA, NPDG, NPDA and NOWS are valid.
const nsfeatOptPerf = 1 << 4

// ErrInactiveNamespace is returned for an all-zero namespace page, which is
// what a controller returns for an allocated-but-inactive NSID.
var ErrInactiveNamespace = errors.New("nvme: namespace is inactive (NSZE and NCAP are zero)")

// Version is the VER field: major in bits 31:16, minor 15:8, tertiary 7:0.
// Controllers older than NVMe 1.2 may report 0.
type Version uint32

func (v Version) Major() uint16   { return uint16(v >> 16) }
func (v Version) Minor() uint8    { return uint8(v >> 8) }
func (v Version) Tertiary() uint8 { return uint8(v) }

func (v Version) String() string {
	if v == 0 {
		return "unreported"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Tertiary())
}

// Uint128 is a 128-bit little-endian counter such as TNVMCAP.
type Uint128 struct{ Lo, Hi uint64 }

// Uint64 returns the value and false when it does not fit in 64 bits.
func (u Uint128) Uint64() (uint64, bool) { return u.Lo, u.Hi == 0 }

// BigInt returns the exact value.
func (u Uint128) BigInt() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(u.Lo))
}

// Controller holds the Identify Controller fields the agent uses.
type Controller struct {
	VendorID           uint16  // VID, bytes 0-1
	SubsystemVendorID  uint16  // SSVID, bytes 2-3
	Serial             string  // SN, bytes 4-23
	Model              string  // MN, bytes 24-63
	Firmware           string  // FR, bytes 64-71
	IEEEOUI            uint32  // IEEE, bytes 73-75 (little endian, e.g. 0x5cd2e4 for Intel)
	ControllerID       uint16  // CNTLID, bytes 78-79
	Version            Version // VER, bytes 80-83
	Attributes         uint32  // CTRATT, bytes 96-99
	LogPageAttributes  uint8   // LPA, byte 261
	TotalNVMCapacity   Uint128 // TNVMCAP, bytes 280-295, in bytes; 0 when not reported
	NumberOfNamespaces uint32  // NN, bytes 516-519
}

// ctrattEnduranceGroups is CTRATT bit 4: the controller supports Endurance Groups (NVMe 1.4).
const ctrattEnduranceGroups = 1 << 4

// EnduranceGroups reports CTRATT bit 4: namespaces name their endurance group (ENDGID) and
// the Endurance Group Information log (09h) can be read for it.
func (c Controller) EnduranceGroups() bool { return c.Attributes&ctrattEnduranceGroups != 0 }

// ExtendedLogPageData reports LPA bit 2 (Get Log Page NUMDU/LPO supported).
func (c Controller) ExtendedLogPageData() bool { return c.LogPageAttributes&LPAExtendedData != 0 }

// TelemetryLog reports LPA bit 3 (telemetry log pages supported).
func (c Controller) TelemetryLog() bool { return c.LogPageAttributes&LPATelemetry != 0 }

// TotalCapacityBytes returns TNVMCAP, or an error if it exceeds 64 bits.
func (c Controller) TotalCapacityBytes() (uint64, error) {
	v, ok := c.TotalNVMCapacity.Uint64()
	if !ok {
		return 0, fmt.Errorf("identify controller: tnvmcap (bytes 280-295) %s overflows uint64", c.TotalNVMCapacity.BigInt())
	}
	return v, nil
}

// ParseIdentifyController decodes an Identify Controller data structure.
func ParseIdentifyController(b []byte) (Controller, error) {
	const what = "identify controller"
	if len(b) < IdentifySize {
		return Controller{}, fmt.Errorf("%s: buffer is %d bytes, need %d", what, len(b), IdentifySize)
	}
	le := binary.LittleEndian
	c := Controller{
		VendorID:           le.Uint16(b[0:]),
		SubsystemVendorID:  le.Uint16(b[2:]),
		IEEEOUI:            uint32(b[73]) | uint32(b[74])<<8 | uint32(b[75])<<16,
		ControllerID:       le.Uint16(b[78:]),
		Version:            Version(le.Uint32(b[80:])),
		Attributes:         le.Uint32(b[96:]),
		LogPageAttributes:  b[261],
		TotalNVMCapacity:   Uint128{Lo: le.Uint64(b[280:]), Hi: le.Uint64(b[288:])},
		NumberOfNamespaces: le.Uint32(b[516:]),
	}
	var err error
	if c.Serial, err = asciiField(b, what, "serial", 4, 24); err != nil {
		return Controller{}, err
	}
	if c.Model, err = asciiField(b, what, "model", 24, 64); err != nil {
		return Controller{}, err
	}
	if c.Firmware, err = asciiField(b, what, "firmware", 64, 72); err != nil {
		return Controller{}, err
	}
	return c, nil
}

// asciiField decodes a space-padded ASCII field b[start:end]. Trailing
// spaces/NULs are padding; leading spaces are dropped too because some
// drives right-justify their serial number. Anything else non-printable is
// rejected so garbage never reaches an inventory label.
func asciiField(b []byte, what, name string, start, end int) (string, error) {
	f := b[start:end]
	n := len(f)
	for n > 0 && (f[n-1] == ' ' || f[n-1] == 0) {
		n--
	}
	i := 0
	for i < n && f[i] == ' ' {
		i++
	}
	for j := i; j < n; j++ {
		if f[j] < 0x20 || f[j] > 0x7e {
			return "", fmt.Errorf("%s: %s (bytes %d-%d): non-printable byte 0x%02x at %d",
				what, name, start, end-1, f[j], start+j)
		}
	}
	return string(f[i:n]), nil
}

// LBAFormat is one LBA Format Data Structure entry.
type LBAFormat struct {
	MetadataSize     uint16 // MS, bits 15:0
	LBADataSizeShift uint8  // LBADS, bits 23:16; data size is 1<<LBADS, 0 = unsupported
	RelativePerf     uint8  // RP, bits 25:24
}

// DataSize returns the LBA data size in bytes (0 when the format is unsupported).
func (f LBAFormat) DataSize() uint32 {
	if f.LBADataSizeShift == 0 || f.LBADataSizeShift > 31 {
		return 0
	}
	return 1 << f.LBADataSizeShift
}

// Namespace holds the Identify Namespace fields the agent uses. The
// 0's-based fields (NLBAF, NAWUPF, NPWG, NPWA, NPDG, NPDA, NOWS) are kept raw.
type Namespace struct {
	Size        uint64      // NSZE, bytes 0-7, in logical blocks
	Capacity    uint64      // NCAP, bytes 8-15
	Utilization uint64      // NUSE, bytes 16-23
	Features    uint8       // NSFEAT, byte 24
	NLBAF       uint8       // byte 25, 0's based count of LBA formats
	FLBAS       uint8       // byte 26
	NAWUPF      uint16      // bytes 36-37
	NPWG        uint16      // bytes 64-65
	NPWA        uint16      // bytes 66-67
	NPDG        uint16      // bytes 68-69
	NPDA        uint16      // bytes 70-71
	NOWS        uint16      // bytes 72-73
	ENDGID      uint16      // bytes 102-103, the namespace's endurance group (0: none reported)
	LBAFormats  []LBAFormat // bytes 128.., NLBAF+1 entries
	Current     int         // index of the format in use, from FLBAS
}

// LBASize returns the data size of the LBA format in use.
func (n Namespace) LBASize() uint32 {
	if n.Current < 0 || n.Current >= len(n.LBAFormats) {
		return 0
	}
	return n.LBAFormats[n.Current].DataSize()
}

// MetadataSize returns the metadata bytes per LBA of the format in use.
func (n Namespace) MetadataSize() uint16 {
	if n.Current < 0 || n.Current >= len(n.LBAFormats) {
		return 0
	}
	return n.LBAFormats[n.Current].MetadataSize
}

// OptimalPerfFieldsValid reports NSFEAT bit 4.
func (n Namespace) OptimalPerfFieldsValid() bool { return n.Features&nsfeatOptPerf != 0 }

// PreferredWriteGranularity returns (NPWG+1) × LBA size, the unit QLC drives
// want writes in (their indirection unit), when NSFEAT bit 4 says it is valid.
func (n Namespace) PreferredWriteGranularity() (uint64, bool) {
	return n.blocks(n.NPWG)
}

// PreferredDeallocateGranularity returns (NPDG+1) × LBA size when NSFEAT bit 4 is set: the
// unit in which a deallocate (TRIM) frees whole internal units.
func (n Namespace) PreferredDeallocateGranularity() (uint64, bool) {
	return n.blocks(n.NPDG)
}

// OptimalWriteSize returns (NOWS+1) × LBA size when NSFEAT bit 4 is set.
func (n Namespace) OptimalWriteSize() (uint64, bool) {
	return n.blocks(n.NOWS)
}

func (n Namespace) blocks(zeroBased uint16) (uint64, bool) {
	if !n.OptimalPerfFieldsValid() || n.LBASize() == 0 {
		return 0, false
	}
	return (uint64(zeroBased) + 1) * uint64(n.LBASize()), true
}

// SizeBytes returns NSZE × LBA size, false on overflow or unknown LBA size.
func (n Namespace) SizeBytes() (uint64, bool) {
	hi, lo := bits.Mul64(n.Size, uint64(n.LBASize()))
	return lo, hi == 0 && n.LBASize() != 0
}

// ParseIdentifyNamespace decodes an Identify Namespace data structure.
func ParseIdentifyNamespace(b []byte) (Namespace, error) {
	const what = "identify namespace"
	if len(b) < IdentifySize {
		return Namespace{}, fmt.Errorf("%s: buffer is %d bytes, need %d", what, len(b), IdentifySize)
	}
	le := binary.LittleEndian
	n := Namespace{
		Size:        le.Uint64(b[0:]),
		Capacity:    le.Uint64(b[8:]),
		Utilization: le.Uint64(b[16:]),
		Features:    b[24],
		NLBAF:       b[25],
		FLBAS:       b[26],
		NAWUPF:      le.Uint16(b[36:]),
		NPWG:        le.Uint16(b[64:]),
		NPWA:        le.Uint16(b[66:]),
		NPDG:        le.Uint16(b[68:]),
		NPDA:        le.Uint16(b[70:]),
		NOWS:        le.Uint16(b[72:]),
		ENDGID:      le.Uint16(b[102:]),
	}
	if n.Size == 0 && n.Capacity == 0 {
		return Namespace{}, ErrInactiveNamespace
	}
	if n.Capacity > n.Size {
		return Namespace{}, fmt.Errorf("%s: ncap (bytes 8-15) %d exceeds nsze %d", what, n.Capacity, n.Size)
	}
	if n.Utilization > n.Capacity {
		return Namespace{}, fmt.Errorf("%s: nuse (bytes 16-23) %d exceeds ncap %d", what, n.Utilization, n.Capacity)
	}
	// Up to 64 formats fit in bytes 128-383 (NVMe 2.0); NLBAF is 0's based.
	if n.NLBAF > 63 {
		return Namespace{}, fmt.Errorf("%s: nlbaf (byte 25) %d exceeds 63", what, n.NLBAF)
	}
	n.LBAFormats = make([]LBAFormat, int(n.NLBAF)+1)
	for i := range n.LBAFormats {
		v := le.Uint32(b[128+4*i:])
		n.LBAFormats[i] = LBAFormat{
			MetadataSize:     uint16(v),
			LBADataSizeShift: uint8(v >> 16),
			RelativePerf:     uint8(v>>24) & 0x3,
		}
	}
	// FLBAS bits 3:0 are the low index bits, bits 6:5 the high ones (NVMe 2.0).
	n.Current = int(n.FLBAS&0xf) | int(n.FLBAS>>5&0x3)<<4
	if n.Current > int(n.NLBAF) {
		return Namespace{}, fmt.Errorf("%s: flbas (byte 26) selects format %d but nlbaf is %d", what, n.Current, n.NLBAF)
	}
	// 512 B is the smallest data size the spec allows; LBADS 0 means unsupported.
	if s := n.LBAFormats[n.Current].LBADataSizeShift; s < 9 || s > 31 {
		return Namespace{}, fmt.Errorf("%s: lba format %d (bytes %d-%d): lbads %d is not a usable data size",
			what, n.Current, 128+4*n.Current, 131+4*n.Current, s)
	}
	return n, nil
}
