package nvme_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/drivedb"
	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/host/nvme"
)

// The endurance model fed from recorded log pages of real drives: the unit
// math (512,000 B per data unit, power-on hours ÷ 24, H ÷ C ÷ days) and the
// rating the drive database gives each model, checked against figures worked
// out by hand from the numbers in testdata/logs/*/SOURCE.md.

var fixtureLogs = nvme.RecordedLogReader{Dir: "testdata/logs"}

func approx(t *testing.T, what string, got endurance.Value, want float64) {
	t.Helper()
	if !got.Known || math.Abs(got.V-want) > 1e-12*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %+v, want %.15g", what, got, want)
	}
}

// sampleFromSMART is what the agent does with a 02h page: host bytes from
// Data Units Written, percent used and power-on hours as read.
func sampleFromSMART(t *testing.T, dir string) endurance.Sample {
	t.Helper()
	raw, err := fixtureLogs.Log(context.Background(), dir, nvme.LogIDSMART, nvme.SMARTLogSize)
	if err != nil {
		t.Fatal(err)
	}
	l, err := nvme.ParseSMARTLog(raw)
	if err != nil {
		t.Fatal(err)
	}
	h, err := l.DataUnitsWrittenBytes()
	if err != nil {
		t.Fatal(err)
	}
	poh, ok := l.PowerOnHours.Uint64()
	if !ok {
		t.Fatalf("%s: power-on hours overflow", dir)
	}
	return endurance.Sample{Time: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), HostBytesWritten: h, PercentUsed: int(l.PercentageUsed), PowerOnHours: poh}
}

func TestEnduranceFromRecordedDatacenterDrives(t *testing.T) {
	tests := []struct {
		dir, model string
		capacity   uint64 // the recorded "Namespace 1 Size/Capacity"
		hostBytes  uint64
		used       int
		days, dwpd float64 // power-on days and lifetime DWPD
		inDB       bool
		// Set when the database publishes TBW, or DWPD and warranty years to derive it from.
		tbw, tbwUsed, tbwUsedPct float64
		tbwDerived               bool
	}{
		// H = 3,262,673,484 × 512,000 = 1,670,488,823,808,000 B; 24,544 h ÷ 24 = 1,022.67 d;
		// H ÷ 375,083,606,016 B ÷ 1,022.67 d = 4.3549 DWPD.
		// Database: 30 DWPD, 5 years ⇒ TBW = 30 × 0.375083606016 TB × 1,825 d = 20,535.827429376 TB;
		// used 1,670.488823808 TB = 8.1345 % of it, while the drive itself reports 4 %.
		{"intel-optane-p4800x-ssdpe21k375ga", "INTEL SSDPE21K375GA", 375083606016, 1670488823808000, 4,
			24544.0 / 24, 1670488823808000.0 / 375083606016 / (24544.0 / 24), true,
			20535.827429376, 1670.488823808, 1670.488823808 / 20535.827429376 * 100, true},
		// 36,747,753 × 512,000 = 18,814,849,536,000 B over 1,768 h = 73.67 d on 400,088,457,216 B: 0.6384 DWPD.
		// Database: 100 DWPD, warranty years unpublished ⇒ no TBW.
		{"intel-optane-p5800x-ssdpf21q400gb", "INTEL SSDPF21Q400GB", 400088457216, 18814849536000, 0,
			1768.0 / 24, 18814849536000.0 / 400088457216 / (1768.0 / 24), true, 0, 0, 0, false},
		// 804,199,769 × 512,000 = 411,750,281,728,000 B over 8,855 h = 368.96 d on 30.73 TB: 0.0363 DWPD.
		{"intel-d5-p5316-ssdpf2nv307tz", "INTEL SSDPF2NV307TZ", 30725971992576, 411750281728000, 1,
			8855.0 / 24, 411750281728000.0 / 30725971992576 / (8855.0 / 24), true, 0, 0, 0, false},
		// 52,465,172 × 512,000 = 26,862,168,064,000 B over 6,453 h = 268.875 d on 7.68 TB: 0.0130 DWPD.
		{"intel-d5-p4320-ssdpe2nv076t8", "INTEL SSDPE2NV076T8", 7681501126656, 26862168064000, 0,
			6453.0 / 24, 26862168064000.0 / 7681501126656 / (6453.0 / 24), true, 0, 0, 0, false},
		// 253,792 × 512,000 = 129,941,504,000 B over 4,563 h = 190.125 d on 30.73 TB: 2.22e-5 DWPD.
		// Database (D5-P5430 30.72 TB): 32,000 TBW published ⇒ 0.129941504 TB used = 0.00040607 %.
		{"solidigm-d5-p5430-sbfpf2bu307t", "SOLIDIGM SBFPF2BU307T", 30725971992576, 129941504000, 0,
			4563.0 / 24, 129941504000.0 / 30725971992576 / (4563.0 / 24), true, 32000, 0.129941504, 0.129941504 / 32000 * 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s := sampleFromSMART(t, tt.dir)
			e, found := drivedb.Default().Lookup(tt.model, tt.capacity)
			if found != tt.inDB {
				t.Fatalf("drive database row for %s: found %v, want %v", tt.model, found, tt.inDB)
			}
			r := endurance.Rating{CapacityBytes: tt.capacity, RatedDWPD: e.RatedDWPD, RatedTBW: e.RatedTBW, WarrantyYears: e.WarrantyYears}
			rep, err := endurance.Project([]endurance.Sample{s}, r, endurance.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.HostBytesWritten != tt.hostBytes || rep.PercentUsed != tt.used || rep.WAF.Known {
				t.Errorf("host %d B, used %d %%, WAF %+v; want %d B, %d %%, unknown WAF (no media counter recorded)",
					rep.HostBytesWritten, rep.PercentUsed, rep.WAF, tt.hostBytes, tt.used)
			}
			approx(t, "power-on days", rep.PowerOnDays, tt.days)
			approx(t, "lifetime DWPD", rep.DWPDLifetime, tt.dwpd)
			if tt.tbw == 0 {
				if rep.Rating.TBW.Known || rep.TBWUsed.Known {
					t.Errorf("TBW %+v used %+v, want unknown: no TBW published and no warranty years to derive one", rep.Rating.TBW, rep.TBWUsed)
				}
				return
			}
			if rep.Rating.TBWDerived != tt.tbwDerived {
				t.Errorf("TBW derived = %v, want %v", rep.Rating.TBWDerived, tt.tbwDerived)
			}
			approx(t, "rated TBW", rep.Rating.TBW, tt.tbw)
			approx(t, "TBW used", rep.TBWUsed, tt.tbwUsed)
			approx(t, "TBW used %", rep.TBWUsedPercent, tt.tbwUsedPct)
			approx(t, "TBW remaining", rep.TBWRemaining, tt.tbw-tt.tbwUsed)
		})
	}
}

// TestEnduranceWAFFromRecordedIntelPage uses the only recorded page with both
// media and host writes: the DC P3600's CAh (32 MiB per count).
func TestEnduranceWAFFromRecordedIntelPage(t *testing.T) {
	raw, err := fixtureLogs.Log(context.Background(), "intel-dc-p3600-ssdpedme016t4f", nvme.LogIDIntelSMARTAdd, 512)
	if err != nil {
		t.Fatal(err)
	}
	l, err := nvme.ParseIntelSMARTLog(raw)
	if err != nil {
		t.Fatal(err)
	}
	unit, ok := nvme.IntelWriteUnitBytes("INTEL SSDPEDME016T4F")
	if !ok {
		t.Fatal("no F4h/F5h unit for the P3600")
	}
	nandAttr, _ := l.Attribute(nvme.IntelAttrNANDBytesWritten)
	hostAttr, _ := l.Attribute(nvme.IntelAttrHostBytesWritten)
	media, err1 := nandAttr.Bytes(unit.UnitBytes)
	host, err2 := hostAttr.Bytes(unit.UnitBytes)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	rep, err := endurance.Project([]endurance.Sample{{Time: time.Unix(0, 0), HostBytesWritten: host, MediaBytesWritten: media, PercentUsed: endurance.UnknownPercent}},
		endurance.Rating{}, endurance.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 224,943,088 × 32 MiB = 7,547,837,550,166,016 B of NAND writes;
	// 172,365,270 × 32 MiB = 5,783,618,731,376,640 B of host writes;
	// WAF = 224,943,088 ÷ 172,365,270 = 1.30503719223716.
	if rep.MediaBytesWritten != 7547837550166016 || rep.HostBytesWritten != 5783618731376640 {
		t.Errorf("media %d B, host %d B", rep.MediaBytesWritten, rep.HostBytesWritten)
	}
	approx(t, "WAF", rep.WAF, 1.30503719223716)
}
