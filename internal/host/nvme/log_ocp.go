package nvme

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// OCPSMARTLogSize is the length of the OCP SMART / Health Information
// Extended log page (log id C0h).
const OCPSMARTLogSize = 512

// ErrNotOCPSMART means bytes 496-511 do not hold the OCP C0 log page GUID;
// vendors use log id C0h for unrelated pages, so the GUID is the only proof.
// Drives with an NVMe UUID list may also expect the OCP UUID index in
// CDW14 (nvme-cli looks it up with ocp_get_uuid_index); GetLogPage sends
// index 0, and a page that comes back for another UUID fails this check.
var ErrNotOCPSMART = errors.New("not an OCP C0 log page")

// ocpSMARTGUID is the log page GUID AFD514C97C6F4F9CA4F2BFEA2810AFC5h as it
// sits in bytes 496-511: the 128-bit value stored little-endian, so byte 496
// holds C5h and byte 511 holds AFh. nvme-cli's OCP plugin compares against the
// same byte sequence (plugins/ocp/ocp-smart-extended-log.c, scao_guid).
var ocpSMARTGUID = [16]byte{
	0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4,
	0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF,
}

// OCPSMARTLog holds the endurance and media-health fields of the OCP
// Datacenter NVMe SSD (and OCP Cloud SSD 1.0) log page C0h. Offsets are
// those of the OCP specification; later fields of the page are not decoded.
type OCPSMARTLog struct {
	PhysicalMediaUnitsWritten     Uint128 // bytes 0-15, in bytes written to the media (NAND)
	PhysicalMediaUnitsRead        Uint128 // bytes 16-31, in bytes
	BadUserNANDBlocksRaw          uint64  // bytes 32-37 (48-bit count)
	BadUserNANDBlocksNormalized   uint16  // bytes 38-39
	BadSystemNANDBlocksRaw        uint64  // bytes 40-45 (48-bit count)
	BadSystemNANDBlocksNormalized uint16  // bytes 46-47
	XORRecoveryCount              uint64  // bytes 48-55
	UncorrectableReadErrors       uint64  // bytes 56-63
	SoftECCErrors                 uint64  // bytes 64-71
	EndToEndDetectedErrors        uint32  // bytes 72-75
	EndToEndCorrectedErrors       uint32  // bytes 76-79
	SystemDataPercentUsed         uint8   // byte 80
	RefreshCounts                 uint64  // bytes 81-87 (56-bit count)
	UserDataEraseCountMax         uint32  // bytes 88-91
	UserDataEraseCountMin         uint32  // bytes 92-95
	ThermalThrottlingEvents       uint8   // byte 96
	ThermalThrottlingStatus       uint8   // byte 97
	LogPageVersion                uint16  // bytes 494-495
}

// MediaBytesWritten returns PhysicalMediaUnitsWritten (already in bytes) or
// an error when it does not fit in 64 bits.
func (o OCPSMARTLog) MediaBytesWritten() (uint64, error) {
	return unitsToBytes(o.PhysicalMediaUnitsWritten, 1, "ocp smart log: physical media units written (bytes 0-15)")
}

// ParseOCPSMARTLog decodes log page C0h after checking its GUID.
func ParseOCPSMARTLog(b []byte) (OCPSMARTLog, error) {
	const what = "ocp smart log"
	if len(b) < OCPSMARTLogSize {
		return OCPSMARTLog{}, fmt.Errorf("%s: buffer is %d bytes, need %d", what, len(b), OCPSMARTLogSize)
	}
	if !bytes.Equal(b[496:512], ocpSMARTGUID[:]) {
		return OCPSMARTLog{}, fmt.Errorf("%s: log page guid (bytes 496-511) is % x: %w", what, b[496:512], ErrNotOCPSMART)
	}
	le := binary.LittleEndian
	return OCPSMARTLog{
		PhysicalMediaUnitsWritten:     le128(b[0:]),
		PhysicalMediaUnitsRead:        le128(b[16:]),
		BadUserNANDBlocksRaw:          leUint(b[32:38]),
		BadUserNANDBlocksNormalized:   le.Uint16(b[38:]),
		BadSystemNANDBlocksRaw:        leUint(b[40:46]),
		BadSystemNANDBlocksNormalized: le.Uint16(b[46:]),
		XORRecoveryCount:              le.Uint64(b[48:]),
		UncorrectableReadErrors:       le.Uint64(b[56:]),
		SoftECCErrors:                 le.Uint64(b[64:]),
		EndToEndDetectedErrors:        le.Uint32(b[72:]),
		EndToEndCorrectedErrors:       le.Uint32(b[76:]),
		SystemDataPercentUsed:         b[80],
		RefreshCounts:                 leUint(b[81:88]),
		UserDataEraseCountMax:         le.Uint32(b[88:]),
		UserDataEraseCountMin:         le.Uint32(b[92:]),
		ThermalThrottlingEvents:       b[96],
		ThermalThrottlingStatus:       b[97],
		LogPageVersion:                le.Uint16(b[494:]),
	}, nil
}

// leUint reads a little-endian unsigned integer of up to 8 bytes.
func leUint(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
