package nvme

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// enduranceLog builds a log 09h page with the spec's offsets.
func enduranceLog(percentUsed uint8, estimateGB, written uint64) []byte {
	b := make([]byte, EnduranceGroupLogSize)
	b[3], b[4], b[5] = 100, 10, percentUsed
	binary.LittleEndian.PutUint64(b[32:], estimateGB)
	binary.LittleEndian.PutUint64(b[64:], written)
	return b
}

func TestParseEnduranceGroupLog(t *testing.T) {
	// A 30.72 TB drive rated 0.58 DWPD over 5 years: 0.58 × 30.72 × 1826.25 = 32 540 TB.
	l, err := ParseEnduranceGroupLog(enduranceLog(3, 32_540_000, 1234))
	if err != nil {
		t.Fatal(err)
	}
	if l.PercentageUsed != 3 || l.AvailableSpare != 100 || l.AvailableSpareThreshold != 10 {
		t.Errorf("header = %+v", l)
	}
	if got, _ := l.DataUnitsWritten.Uint64(); got != 1234 {
		t.Errorf("data units written = %d, want 1234", got)
	}
	if got, ok := l.EnduranceEstimateBytes(); !ok || got != 32_540_000*1_000_000_000 {
		t.Errorf("EnduranceEstimateBytes = %d, %t", got, ok)
	}
	zero, _ := ParseEnduranceGroupLog(enduranceLog(0, 0, 0))
	if _, ok := zero.EnduranceEstimateBytes(); ok {
		t.Error("an estimate of 0 means not reported")
	}
	huge := enduranceLog(0, 1<<63, 0)
	if l, _ := ParseEnduranceGroupLog(huge); func() bool { _, ok := l.EnduranceEstimateBytes(); return ok }() {
		t.Error("an estimate that overflows bytes must be refused")
	}
	if _, err := ParseEnduranceGroupLog(make([]byte, 100)); err == nil {
		t.Error("a short page must be an error")
	}
}

func TestRecordedGroupLog(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "nvme0"), 0o755); err != nil {
		t.Fatal(err)
	}
	page := enduranceLog(1, 7000, 0)
	if err := os.WriteFile(filepath.Join(dir, "nvme0", GroupLogFileName(LogIDEnduranceGroup, 1)), page, 0o644); err != nil {
		t.Fatal(err)
	}
	r := RecordedLogReader{Dir: dir}
	b, err := r.GroupLog(context.Background(), "nvme0", LogIDEnduranceGroup, 1, EnduranceGroupLogSize)
	if err != nil || len(b) != EnduranceGroupLogSize || b[5] != 1 {
		t.Fatalf("GroupLog = %d bytes, %v", len(b), err)
	}
	if _, err := r.GroupLog(context.Background(), "nvme0", LogIDEnduranceGroup, 2, EnduranceGroupLogSize); err == nil {
		t.Error("group 2 was never recorded")
	}
	if _, err := r.GroupLog(context.Background(), "../x", LogIDEnduranceGroup, 1, EnduranceGroupLogSize); err == nil {
		t.Error("a controller name must not escape the directory")
	}
}

func TestIdentifyEnduranceGroupFields(t *testing.T) {
	ctrl := make([]byte, IdentifySize)
	binary.LittleEndian.PutUint32(ctrl[96:], 1<<4)
	c, err := ParseIdentifyController(ctrl)
	if err != nil || !c.EnduranceGroups() {
		t.Fatalf("CTRATT bit 4 not seen: %+v %v", c, err)
	}
	ns := make([]byte, IdentifySize)
	binary.LittleEndian.PutUint64(ns[0:], 1000)
	binary.LittleEndian.PutUint64(ns[8:], 1000)
	ns[24] = 1 << 4                                 // NSFEAT: NPWG and friends valid
	binary.LittleEndian.PutUint16(ns[64:], 15)      // NPWG: 16 blocks
	binary.LittleEndian.PutUint16(ns[68:], 31)      // NPDG: 32 blocks
	binary.LittleEndian.PutUint16(ns[102:], 1)      // ENDGID
	binary.LittleEndian.PutUint32(ns[128:], 12<<16) // LBA format 0: 4096 bytes
	n, err := ParseIdentifyNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	if n.ENDGID != 1 {
		t.Errorf("ENDGID = %d, want 1", n.ENDGID)
	}
	if g, ok := n.PreferredWriteGranularity(); !ok || g != 64<<10 {
		t.Errorf("NPWG = %d, %t; want 64 KiB", g, ok)
	}
	if g, ok := n.PreferredDeallocateGranularity(); !ok || g != 128<<10 {
		t.Errorf("NPDG = %d, %t; want 128 KiB", g, ok)
	}
}
