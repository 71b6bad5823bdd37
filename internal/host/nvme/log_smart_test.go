package nvme

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

var recordedLogs = RecordedLogReader{Dir: "testdata/logs"}

func readLog(t testing.TB, dir string, id uint8, n int) []byte {
	t.Helper()
	b, err := recordedLogs.Log(context.Background(), dir, id, n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantSMART lists the recorded values of testdata/logs/*/SOURCE.md.
type wantSMART struct {
	tempC, spare, thresh, used int
	duw, dur, hostW, poh       uint64
	cycles, unsafe, errLog     uint64
	bytesW                     uint64
	warnMin                    uint32 // warning composite temperature time, minutes
	sensors                    []int
}

func TestSMARTLogFixtures(t *testing.T) {
	tests := []struct {
		dir  string
		want wantSMART
	}{
		// 65,516,455 units × 512,000 B = 33,544,424,960,000 B (33.5 TB).
		{"intel-optane-900p-ssdped1d280ga", wantSMART{tempC: 31, spare: 100, thresh: 0, used: 0,
			duw: 65516455, dur: 67343004, hostW: 2714560339, poh: 42772, cycles: 26, unsafe: 14, errLog: 4,
			bytesW: 33544424960000}},
		// 464,403,132 × 512,000 = 237,774,403,584,000 B; 311 K − 273 = 38 °C.
		{"intel-dc-p3700-ssdpedmd400g4", wantSMART{tempC: 38, spare: 100, thresh: 10, used: 3,
			duw: 464403132, dur: 228744653, hostW: 9043251297, poh: 27567, cycles: 19,
			bytesW: 237774403584000}},
		// 188,100,801 × 512,000 = 96,307,610,112,000 B, smartctl's "[96.3 TB]".
		{"samsung-980pro-heatsink-1tb", wantSMART{tempC: 42, spare: 100, thresh: 10, used: 11,
			duw: 188100801, dur: 3504142530, hostW: 4435505451, poh: 3022, cycles: 199, unsafe: 16,
			bytesW: 96307610112000, sensors: []int{42, 45}}},
		// 42,773,337 × 512,000 = 21,899,948,544,000 B (smartctl truncates to "[21.8 TB]").
		{"intel-660p-ssdpeknw512g8", wantSMART{tempC: 36, spare: 100, thresh: 50, used: 5,
			duw: 42773337, dur: 49063817, hostW: 609579603, poh: 4094, cycles: 1149, unsafe: 165,
			bytesW: 21899948544000}},
		// Data-centre drives from hw-probe reports (recordings_datacenter.go).
		// 3,262,673,484 × 512,000 = 1,670,488,823,808,000 B, smartctl's "[1.67 PB]".
		{"intel-optane-p4800x-ssdpe21k375ga", wantSMART{tempC: 34, spare: 100, thresh: 0, used: 4,
			duw: 3262673484, dur: 1025206661, hostW: 44185064429, poh: 24544, cycles: 100, unsafe: 63,
			bytesW: 1670488823808000}},
		// 36,747,753 × 512,000 = 18,814,849,536,000 B, "[18.8 TB]".
		{"intel-optane-p5800x-ssdpf21q400gb", wantSMART{tempC: 41, spare: 100, thresh: 0, used: 0,
			duw: 36747753, dur: 17965964, hostW: 476666464, poh: 1768, cycles: 35, unsafe: 24,
			bytesW: 18814849536000}},
		// 804,199,769 × 512,000 = 411,750,281,728,000 B, "[411 TB]"; 688 min above WCTEMP.
		{"intel-d5-p5316-ssdpf2nv307tz", wantSMART{tempC: 43, spare: 100, thresh: 10, used: 1,
			duw: 804199769, dur: 363181883, hostW: 14689857715, poh: 8855, cycles: 366, unsafe: 174,
			bytesW: 411750281728000, warnMin: 688}},
		// 52,465,172 × 512,000 = 26,862,168,064,000 B (smartctl truncates to "[26.8 TB]").
		{"intel-d5-p4320-ssdpe2nv076t8", wantSMART{tempC: 31, spare: 100, thresh: 10, used: 0,
			duw: 52465172, dur: 100202013, hostW: 1708891388, poh: 6453, cycles: 149, unsafe: 133,
			bytesW: 26862168064000}},
		// 253,792 × 512,000 = 129,941,504,000 B, "[129 GB]".
		{"solidigm-d5-p5430-sbfpf2bu307t", wantSMART{tempC: 39, spare: 100, thresh: 10, used: 0,
			duw: 253792, dur: 140632, hostW: 3252970, poh: 4563, cycles: 152, unsafe: 47,
			bytesW: 129941504000, warnMin: 195}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s, err := ParseSMARTLog(readLog(t, tt.dir, LogIDSMART, SMARTLogSize))
			if err != nil {
				t.Fatal(err)
			}
			tc, ok := s.CompositeTemperatureC()
			w := tt.want
			if !ok || tc != w.tempC {
				t.Errorf("temperature = %d °C (%v), want %d", tc, ok, w.tempC)
			}
			if int(s.AvailableSpare) != w.spare || int(s.AvailableSpareThreshold) != w.thresh || int(s.PercentageUsed) != w.used {
				t.Errorf("spare/thresh/used = %d/%d/%d, want %d/%d/%d", s.AvailableSpare, s.AvailableSpareThreshold, s.PercentageUsed, w.spare, w.thresh, w.used)
			}
			got := []uint64{s.DataUnitsWritten.Lo, s.DataUnitsRead.Lo, s.HostWriteCommands.Lo, s.PowerOnHours.Lo, s.PowerCycles.Lo, s.UnsafeShutdowns.Lo, s.ErrorLogEntries.Lo}
			exp := []uint64{w.duw, w.dur, w.hostW, w.poh, w.cycles, w.unsafe, w.errLog}
			for i := range got {
				if got[i] != exp[i] {
					t.Errorf("counter %d = %d, want %d", i, got[i], exp[i])
				}
			}
			if b, err := s.DataUnitsWrittenBytes(); err != nil || b != w.bytesW {
				t.Errorf("DataUnitsWrittenBytes = %d, %v; want %d", b, err, w.bytesW)
			}
			for i := range 8 {
				c, ok := s.TemperatureSensorC(i)
				if i < len(w.sensors) {
					if !ok || c != w.sensors[i] {
						t.Errorf("sensor %d = %d (%v), want %d", i+1, c, ok, w.sensors[i])
					}
				} else if ok {
					t.Errorf("sensor %d = %d, want not implemented", i+1, c)
				}
			}
			if s.WarningTempTimeMinutes != w.warnMin || s.CriticalTempTimeMinutes != 0 {
				t.Errorf("temperature times = %d/%d min, want %d/0", s.WarningTempTimeMinutes, s.CriticalTempTimeMinutes, w.warnMin)
			}
			if s.CriticalWarning != 0 || s.PercentageUsedSaturated() {
				t.Errorf("warning %#x saturated %v", s.CriticalWarning, s.PercentageUsedSaturated())
			}
		})
	}
}

// smartPage builds a synthetic page (not a drive recording).
func smartPage(mut func(b []byte)) []byte {
	b := make([]byte, SMARTLogSize)
	mut(b)
	return b
}

func TestSMARTLogDecoding(t *testing.T) {
	le := binary.LittleEndian
	s, err := ParseSMARTLog(smartPage(func(b []byte) {
		b[0] = byte(WarnSpareBelowThreshold | WarnReadOnly)
		le.PutUint16(b[1:], 0x0150) // 336 K
		b[5], b[6] = 255, 0x04
		le.PutUint64(b[48:], 7)
		le.PutUint64(b[56:], 1) // Data Units Written = 2^64 + 7
		le.PutUint32(b[192:], 11)
		le.PutUint32(b[196:], 12)
		le.PutUint16(b[214:], 300) // sensor 8
		le.PutUint32(b[216:], 1)
		le.PutUint32(b[228:], 4)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.CriticalWarning.Has(WarnSpareBelowThreshold|WarnReadOnly) || s.CriticalWarning.Has(WarnTemperature) {
		t.Errorf("critical warning = %#x", s.CriticalWarning)
	}
	if c, _ := s.CompositeTemperatureC(); c != 63 {
		t.Errorf("temperature = %d °C, want 336 − 273 = 63", c)
	}
	if !s.PercentageUsedSaturated() || s.EnduranceGroupCriticalWarning != 4 {
		t.Errorf("used %d egcws %d", s.PercentageUsed, s.EnduranceGroupCriticalWarning)
	}
	if s.DataUnitsWritten != (Uint128{Lo: 7, Hi: 1}) {
		t.Errorf("data units written = %+v", s.DataUnitsWritten)
	}
	if _, err := s.DataUnitsWrittenBytes(); err == nil || !strings.Contains(err.Error(), "data units written (bytes 48-63) = 18446744073709551623") {
		t.Errorf("overflow error = %v", err)
	}
	if c, ok := s.TemperatureSensorC(7); !ok || c != 27 {
		t.Errorf("sensor 8 = %d %v", c, ok)
	}
	if _, ok := s.TemperatureSensorC(8); ok {
		t.Error("sensor 9 exists")
	}
	if s.WarningTempTimeMinutes != 11 || s.CriticalTempTimeMinutes != 12 || s.ThermalMgmtT1Transitions != 1 || s.ThermalMgmtT2TimeSeconds != 4 {
		t.Errorf("times %+v", s)
	}
}

func TestSMARTLogBytesOverflow(t *testing.T) {
	// 36,028,797,018,963 units × 512,000 = 18,446,744,073,709,056,000 fits;
	// one more unit is 18,446,744,073,709,568,000 > 2^64 − 1.
	for _, tt := range []struct {
		units uint64
		ok    bool
	}{{36028797018963, true}, {36028797018964, false}} {
		s, err := ParseSMARTLog(smartPage(func(b []byte) { binary.LittleEndian.PutUint64(b[32:], tt.units) }))
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.DataUnitsReadBytes()
		if (err == nil) != tt.ok {
			t.Errorf("%d units: %d, %v", tt.units, b, err)
		}
		if tt.ok && b != 18446744073709056000 {
			t.Errorf("%d units = %d bytes", tt.units, b)
		}
	}
}

func TestSMARTLogErrors(t *testing.T) {
	tests := []struct {
		b    []byte
		want string
	}{
		{make([]byte, 511), "smart log: buffer is 511 bytes, need 512"},
		{smartPage(func(b []byte) { b[3] = 101 }), "available spare (byte 3) 101 exceeds 100"},
		{smartPage(func(b []byte) { b[4] = 255 }), "available spare threshold (byte 4) 255 exceeds 100"},
	}
	for _, tt := range tests {
		if _, err := ParseSMARTLog(tt.b); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
}

// pad512 zero-pads fuzz input to a page; every field lives in the first 232 bytes.
func pad512(b []byte) []byte {
	p := make([]byte, 512)
	copy(p, b)
	return p
}

func FuzzParseSMARTLog(f *testing.F) {
	f.Add(readLog(f, "samsung-980pro-heatsink-1tb", LogIDSMART, SMARTLogSize)[:232])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseSMARTLog(b)
		s, err := ParseSMARTLog(pad512(b))
		if err != nil {
			return
		}
		if s.AvailableSpare > 100 || s.AvailableSpareThreshold > 100 {
			t.Fatalf("accepted reserved spare %d/%d", s.AvailableSpare, s.AvailableSpareThreshold)
		}
		if v, err := s.DataUnitsWrittenBytes(); err == nil && s.DataUnitsWritten.Lo != 0 && v/DataUnitBytes != s.DataUnitsWritten.Lo {
			t.Fatalf("bytes %d do not divide back to %d units", v, s.DataUnitsWritten.Lo)
		}
		_, _ = s.DataUnitsReadBytes()
		_, _ = s.CompositeTemperatureC()
	})
}
