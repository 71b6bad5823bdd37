package nvme

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Log page identifiers read by the agent.
const (
	LogIDSMART         uint8 = 0x02 // SMART / Health Information (NVMe Base Specification)
	LogIDOCPSMART      uint8 = 0xC0 // OCP Datacenter NVMe SSD "SMART / Health Information Extended"
	LogIDIntelSMARTAdd uint8 = 0xCA // Intel/Solidigm "Additional SMART Attributes" (vendor specific)
)

// SMARTLogSize is the length of the SMART / Health Information log page.
const SMARTLogSize = 512

// DataUnitBytes is one SMART "data unit": 1000 units of 512 bytes. The
// controller rounds the count up, so a value is an upper bound of the bytes
// moved (NVMe Base Specification, Data Units Read/Written).
const DataUnitBytes = 1000 * 512

// CriticalWarning is byte 0 of the SMART / Health log.
type CriticalWarning uint8

const (
	WarnSpareBelowThreshold  CriticalWarning = 1 << 0 // available spare under threshold
	WarnTemperature          CriticalWarning = 1 << 1 // a temperature is over or under a threshold
	WarnReliabilityDegraded  CriticalWarning = 1 << 2 // media or internal errors degrade reliability
	WarnReadOnly             CriticalWarning = 1 << 3 // all media placed in read-only mode
	WarnVolatileBackupFailed CriticalWarning = 1 << 4 // volatile memory backup device failed
	WarnPMRReadOnly          CriticalWarning = 1 << 5 // persistent memory region read-only (NVMe 1.4)
)

// Has reports whether every bit of w is set.
func (c CriticalWarning) Has(w CriticalWarning) bool { return c&w == w }

// SMARTLog is the SMART / Health Information log page (log id 02h). Counters
// wider than a byte keep their raw little-endian width; the byte offsets in
// the comments are those of the NVMe Base Specification.
type SMARTLog struct {
	CriticalWarning               CriticalWarning // byte 0
	CompositeTemperatureK         uint16          // bytes 1-2, kelvin; 0 = not reported
	AvailableSpare                uint8           // byte 3, percent (0-100)
	AvailableSpareThreshold       uint8           // byte 4, percent (0-100)
	PercentageUsed                uint8           // byte 5, percent; may exceed 100, 255 means "255 or more"
	EnduranceGroupCriticalWarning uint8           // byte 6, summary of endurance group warnings (NVMe 1.4)
	DataUnitsRead                 Uint128         // bytes 32-47, units of DataUnitBytes
	DataUnitsWritten              Uint128         // bytes 48-63, units of DataUnitBytes
	HostReadCommands              Uint128         // bytes 64-79
	HostWriteCommands             Uint128         // bytes 80-95
	ControllerBusyTimeMinutes     Uint128         // bytes 96-111
	PowerCycles                   Uint128         // bytes 112-127
	PowerOnHours                  Uint128         // bytes 128-143
	UnsafeShutdowns               Uint128         // bytes 144-159
	MediaErrors                   Uint128         // bytes 160-175, media and data integrity errors
	ErrorLogEntries               Uint128         // bytes 176-191, error information log entries
	WarningTempTimeMinutes        uint32          // bytes 192-195
	CriticalTempTimeMinutes       uint32          // bytes 196-199
	TemperatureSensorsK           [8]uint16       // bytes 200-215, kelvin; 0 = sensor not implemented
	ThermalMgmtT1Transitions      uint32          // bytes 216-219
	ThermalMgmtT2Transitions      uint32          // bytes 220-223
	ThermalMgmtT1TimeSeconds      uint32          // bytes 224-227
	ThermalMgmtT2TimeSeconds      uint32          // bytes 228-231
}

// kelvinOffset converts whole kelvins to whole degrees Celsius the way
// smartctl and nvme-cli print them (K - 273), so values match their output.
const kelvinOffset = 273

// CompositeTemperatureC returns the composite temperature in °C, false when
// the drive reports 0 K.
func (s SMARTLog) CompositeTemperatureC() (int, bool) {
	return kelvinToC(s.CompositeTemperatureK)
}

// TemperatureSensorC returns sensor i (0-7, "Temperature Sensor i+1") in °C.
func (s SMARTLog) TemperatureSensorC(i int) (int, bool) {
	if i < 0 || i >= len(s.TemperatureSensorsK) {
		return 0, false
	}
	return kelvinToC(s.TemperatureSensorsK[i])
}

func kelvinToC(k uint16) (int, bool) {
	if k == 0 {
		return 0, false
	}
	return int(k) - kelvinOffset, true
}

// PercentageUsedSaturated reports the 255 ceiling: the drive has used 255 %
// or more of its rated endurance and the true value is unknown.
func (s SMARTLog) PercentageUsedSaturated() bool { return s.PercentageUsed == 255 }

// DataUnitsWrittenBytes returns DataUnitsWritten × 512 000 bytes, or an
// error when the product does not fit in 64 bits (use DataUnitsWritten.BigInt).
func (s SMARTLog) DataUnitsWrittenBytes() (uint64, error) {
	return unitsToBytes(s.DataUnitsWritten, DataUnitBytes, "smart log: data units written (bytes 48-63)")
}

// DataUnitsReadBytes returns DataUnitsRead × 512 000 bytes, like DataUnitsWrittenBytes.
func (s SMARTLog) DataUnitsReadBytes() (uint64, error) {
	return unitsToBytes(s.DataUnitsRead, DataUnitBytes, "smart log: data units read (bytes 32-47)")
}

// unitsToBytes multiplies a 128-bit counter by unit, refusing overflow.
func unitsToBytes(u Uint128, unit uint64, what string) (uint64, error) {
	hi, lo := bits.Mul64(u.Lo, unit)
	if u.Hi != 0 || hi != 0 {
		return 0, fmt.Errorf("%s = %s × %d bytes overflows uint64", what, u.BigInt(), unit)
	}
	return lo, nil
}

func le128(b []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(b), Hi: binary.LittleEndian.Uint64(b[8:])}
}

// ParseSMARTLog decodes a SMART / Health Information log page. Values the
// specification reserves (spare percentages above 100) are rejected so a
// misread buffer is not taken for a worn drive.
func ParseSMARTLog(b []byte) (SMARTLog, error) {
	const what = "smart log"
	if len(b) < SMARTLogSize {
		return SMARTLog{}, fmt.Errorf("%s: buffer is %d bytes, need %d", what, len(b), SMARTLogSize)
	}
	le := binary.LittleEndian
	s := SMARTLog{
		CriticalWarning:               CriticalWarning(b[0]),
		CompositeTemperatureK:         le.Uint16(b[1:]),
		AvailableSpare:                b[3],
		AvailableSpareThreshold:       b[4],
		PercentageUsed:                b[5],
		EnduranceGroupCriticalWarning: b[6],
		DataUnitsRead:                 le128(b[32:]),
		DataUnitsWritten:              le128(b[48:]),
		HostReadCommands:              le128(b[64:]),
		HostWriteCommands:             le128(b[80:]),
		ControllerBusyTimeMinutes:     le128(b[96:]),
		PowerCycles:                   le128(b[112:]),
		PowerOnHours:                  le128(b[128:]),
		UnsafeShutdowns:               le128(b[144:]),
		MediaErrors:                   le128(b[160:]),
		ErrorLogEntries:               le128(b[176:]),
		WarningTempTimeMinutes:        le.Uint32(b[192:]),
		CriticalTempTimeMinutes:       le.Uint32(b[196:]),
		ThermalMgmtT1Transitions:      le.Uint32(b[216:]),
		ThermalMgmtT2Transitions:      le.Uint32(b[220:]),
		ThermalMgmtT1TimeSeconds:      le.Uint32(b[224:]),
		ThermalMgmtT2TimeSeconds:      le.Uint32(b[228:]),
	}
	for i := range s.TemperatureSensorsK {
		s.TemperatureSensorsK[i] = le.Uint16(b[200+2*i:])
	}
	if s.AvailableSpare > 100 {
		return SMARTLog{}, fmt.Errorf("%s: available spare (byte 3) %d exceeds 100", what, s.AvailableSpare)
	}
	if s.AvailableSpareThreshold > 100 {
		return SMARTLog{}, fmt.Errorf("%s: available spare threshold (byte 4) %d exceeds 100", what, s.AvailableSpareThreshold)
	}
	return s, nil
}
