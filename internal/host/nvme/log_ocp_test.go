package nvme

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestOCPSMARTLogFixture(t *testing.T) {
	o, err := ParseOCPSMARTLog(readLog(t, "wdc-wus4bb019d4m9e7", LogIDOCPSMART, OCPSMARTLogSize))
	if err != nil {
		t.Fatal(err)
	}
	want := OCPSMARTLog{
		PhysicalMediaUnitsWritten:     Uint128{Lo: 609651339018240},
		PhysicalMediaUnitsRead:        Uint128{Lo: 567611790770176},
		BadUserNANDBlocksNormalized:   100,
		BadSystemNANDBlocksNormalized: 100,
		RefreshCounts:                 4,
		UserDataEraseCountMax:         293,
		UserDataEraseCountMin:         197,
		LogPageVersion:                2,
	}
	if o != want {
		t.Errorf("got  %+v\nwant %+v", o, want)
	}
	// Already in bytes: 609,651,339,018,240 B = 609.7 TB, CacheLib's expected value.
	if b, err := o.MediaBytesWritten(); err != nil || b != 609651339018240 {
		t.Errorf("MediaBytesWritten = %d, %v", b, err)
	}
}

// ocpPage builds a synthetic page with the GUID (not a drive recording).
func ocpPage(mut func(b []byte)) []byte {
	b := make([]byte, OCPSMARTLogSize)
	copy(b[496:], ocpSMARTGUID[:])
	mut(b)
	return b
}

func TestOCPSMARTLogOffsets(t *testing.T) {
	le := binary.LittleEndian
	o, err := ParseOCPSMARTLog(ocpPage(func(b []byte) {
		le.PutUint64(b[0:], 1)
		le.PutUint64(b[8:], 2) // PMUW = 2^65 + 1
		copy(b[32:38], []byte{1, 2, 3, 4, 5, 6})
		le.PutUint16(b[38:], 99)
		copy(b[40:46], []byte{0, 0, 0, 0, 0, 0x80})
		le.PutUint16(b[46:], 98)
		le.PutUint64(b[48:], 3)
		le.PutUint64(b[56:], 4)
		le.PutUint64(b[64:], 5)
		le.PutUint32(b[72:], 6)
		le.PutUint32(b[76:], 7)
		b[80] = 8
		copy(b[81:88], []byte{1, 0, 0, 0, 0, 0, 1}) // 2^48 + 1
		le.PutUint32(b[88:], 9)
		le.PutUint32(b[92:], 10)
		b[96], b[97] = 11, 12
		le.PutUint16(b[494:], 5)
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := OCPSMARTLog{
		PhysicalMediaUnitsWritten: Uint128{Lo: 1, Hi: 2},
		BadUserNANDBlocksRaw:      0x060504030201, BadUserNANDBlocksNormalized: 99,
		BadSystemNANDBlocksRaw: 0x800000000000, BadSystemNANDBlocksNormalized: 98,
		XORRecoveryCount: 3, UncorrectableReadErrors: 4, SoftECCErrors: 5,
		EndToEndDetectedErrors: 6, EndToEndCorrectedErrors: 7, SystemDataPercentUsed: 8,
		RefreshCounts: 1<<48 + 1, UserDataEraseCountMax: 9, UserDataEraseCountMin: 10,
		ThermalThrottlingEvents: 11, ThermalThrottlingStatus: 12, LogPageVersion: 5,
	}
	if o != want {
		t.Errorf("got  %+v\nwant %+v", o, want)
	}
	if _, err := o.MediaBytesWritten(); err == nil || !strings.Contains(err.Error(), "36893488147419103233") {
		t.Errorf("overflow error = %v, want 2^65+1 named", err)
	}
}

func TestOCPSMARTLogGUID(t *testing.T) {
	// The GUID written most-significant byte first (the order nvme-cli
	// prints it) is the wrong order for the page and must be refused.
	bigEndian := ocpPage(func(b []byte) {
		for i := range 16 {
			b[496+i] = ocpSMARTGUID[15-i]
		}
	})
	for name, b := range map[string][]byte{"zero": make([]byte, 512), "big-endian guid": bigEndian} {
		_, err := ParseOCPSMARTLog(b)
		if !errors.Is(err, ErrNotOCPSMART) || !strings.Contains(err.Error(), "not an OCP C0 log page") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := ParseOCPSMARTLog(make([]byte, 100)); err == nil || !strings.Contains(err.Error(), "buffer is 100 bytes, need 512") {
		t.Errorf("short: %v", err)
	}
}

func FuzzParseOCPSMARTLog(f *testing.F) {
	f.Add(readLog(f, "wdc-wus4bb019d4m9e7", LogIDOCPSMART, OCPSMARTLogSize)[:98])
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseOCPSMARTLog(b)
		p := ocpPage(func(p []byte) { copy(p[:496], b) })
		o, err := ParseOCPSMARTLog(p)
		if err != nil {
			t.Fatalf("page with GUID refused: %v", err)
		}
		if o.BadUserNANDBlocksRaw >= 1<<48 || o.RefreshCounts >= 1<<56 {
			t.Fatalf("narrow field too wide: %+v", o)
		}
		_, _ = o.MediaBytesWritten()
	})
}
