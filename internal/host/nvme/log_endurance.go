package nvme

import (
	"context"
	"encoding/binary"
	"fmt"
)

// LogIDEnduranceGroup is the Endurance Group Information log (09h, NVMe 1.4+), addressed to
// one endurance group by the Log Specific Identifier.
const (
	LogIDEnduranceGroup   uint8 = 0x09
	EnduranceGroupLogSize       = 512
)

// EnduranceGroupLog holds the fields of log 09h the agent uses (NVMe Base Specification,
// Endurance Group Information Log Page).
type EnduranceGroupLog struct {
	CriticalWarning         uint8   // byte 0
	AvailableSpare          uint8   // byte 3
	AvailableSpareThreshold uint8   // byte 4
	PercentageUsed          uint8   // byte 5
	EnduranceEstimate       Uint128 // bytes 32-47, in units of 10^9 bytes; 0 = not reported
	DataUnitsRead           Uint128 // bytes 48-63, units of 1000 × 512 bytes
	DataUnitsWritten        Uint128 // bytes 64-79
	MediaUnitsWritten       Uint128 // bytes 80-95
}

// ParseEnduranceGroupLog decodes log 09h.
func ParseEnduranceGroupLog(b []byte) (EnduranceGroupLog, error) {
	if len(b) < EnduranceGroupLogSize {
		return EnduranceGroupLog{}, fmt.Errorf("endurance group log: buffer is %d bytes, need %d", len(b), EnduranceGroupLogSize)
	}
	le := binary.LittleEndian
	u128 := func(off int) Uint128 { return Uint128{Lo: le.Uint64(b[off:]), Hi: le.Uint64(b[off+8:])} }
	return EnduranceGroupLog{
		CriticalWarning:         b[0],
		AvailableSpare:          b[3],
		AvailableSpareThreshold: b[4],
		PercentageUsed:          b[5],
		EnduranceEstimate:       u128(32),
		DataUnitsRead:           u128(48),
		DataUnitsWritten:        u128(64),
		MediaUnitsWritten:       u128(80),
	}, nil
}

// EnduranceEstimateBytes is the drive's estimate of the bytes the endurance group can be
// written over its life (the rated endurance, TBW × 10^12); false when it reports none or
// the value does not fit.
func (l EnduranceGroupLog) EnduranceEstimateBytes() (uint64, bool) {
	v, ok := l.EnduranceEstimate.Uint64()
	const unit = 1_000_000_000
	if !ok || v == 0 || v > (1<<64-1)/unit {
		return 0, false
	}
	return v * unit, true
}

// GroupLogReader reads a log page addressed to one endurance group (log 09h). The live
// ioctl and recordings implement it, as LogReader.
type GroupLogReader interface {
	GroupLog(ctx context.Context, ctrl string, logID uint8, group uint16, length int) ([]byte, error)
}

// GroupLog issues Get Log Page with the group as Log Specific Identifier.
func (d DeviceLogReader) GroupLog(ctx context.Context, ctrl string, logID uint8, group uint16, length int) ([]byte, error) {
	p, err := DeviceIdentifier{Root: d.Root}.path(ctrl)
	if err != nil {
		return nil, err
	}
	return GetLogPageSpecific(ctx, p, logID, group, length)
}

// GroupLogFileName is the recorded file name of a group's log page (log-09-0001.bin).
func GroupLogFileName(logID uint8, group uint16) string {
	return fmt.Sprintf("log-%02x-%04x.bin", logID, group)
}

// GroupLog serves <Dir>/<ctrl>/log-<id>-<group>.bin.
func (r RecordedLogReader) GroupLog(ctx context.Context, ctrl string, logID uint8, group uint16, length int) ([]byte, error) {
	return r.read(ctx, ctrl, logID, GroupLogFileName(logID, group), length)
}
