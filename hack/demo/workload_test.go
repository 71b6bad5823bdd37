package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/internal/node/health"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

const repo = "../.."

// homelab builds the fixture node whose Optane 900P and 660p carry recorded SMART logs.
func homelab(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if _, err := fixturehost.BuildNode(repo, "optane-qlc-homelab-d", root); err != nil {
		t.Fatal(err)
	}
	return root
}

func byName(t *testing.T, drives []*simulatedDrive, name string) *simulatedDrive {
	t.Helper()
	for _, d := range drives {
		if d.name == name {
			return d
		}
	}
	t.Fatalf("no drive %s", name)
	return nil
}

// TestSimulatedWritesReachTheAgentsReader: an hour of the simulated workload moves the
// counters the agent's own collector reads, by the drive's rate: the SMART page's data units
// written (rounded up to whole units) and the sysfs sectors written; the rest of the recording
// stays.
func TestSimulatedWritesReachTheAgentsReader(t *testing.T) {
	root := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	drives, err := simulatedDrives(context.Background(), "homelab", root, now)
	if err != nil {
		t.Fatal(err)
	}
	qlc := byName(t, drives, "nvme1n1") // the 660p: recorded SMART page
	sata := byName(t, drives, "sda")    // no page: sysfs only
	if qlc.smartPage == "" || sata.smartPage != "" || qlc.reading.HostSource != health.SourceNVMeSMART {
		t.Fatalf("660p page %q source %q, 870 QVO page %q", qlc.smartPage, qlc.reading.HostSource, sata.smartPage)
	}
	// The 660p's lifetime average (its recording) x busierThanAverage.
	avg := float64(qlc.reading.HostWritten) / (float64(qlc.reading.PowerOnHours) * 3600)
	if math.Abs(qlc.rate/(busierThanAverage*avg)-1) > 1e-9 || sata.rate != tierRate["Capacity"] {
		t.Errorf("rates %v and %v, want %v and %v", qlc.rate, sata.rate, busierThanAverage*avg, tierRate["Capacity"])
	}
	for _, d := range []*simulatedDrive{qlc, sata} {
		if err := d.advance(time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	devs := []prismv1.Device{{Name: qlc.name, StablePath: qlc.stablePath}, {Name: sata.name, StablePath: sata.stablePath}}
	after := health.Collector{Host: sysfs.Host{Root: root}, Logs: nvme.RecordedLogReader{Dir: filepath.Join(root, "logs")}}.Read(context.Background(), devs)
	written := uint64(qlc.rate * 3600)
	units := (qlc.reading.HostWritten + written + nvme.DataUnitBytes - 1) / nvme.DataUnitBytes
	if got := after[0].HostWritten; got != units*nvme.DataUnitBytes {
		t.Errorf("660p host bytes %d after an hour, want %d (%d before, %d written)", got, units*nvme.DataUnitBytes, qlc.reading.HostWritten, written)
	}
	if after[0].PercentUsed != qlc.reading.PercentUsed || after[0].PowerOnHours != qlc.reading.PowerOnHours {
		t.Errorf("the rest of the recording changed: %+v", after[0])
	}
	if got, want := after[1].HostWritten, sata.reading.HostWritten+uint64(sata.rate*3600)/512*512; got != want || after[1].HostSource != health.SourceSysfs {
		t.Errorf("870 QVO sysfs bytes %d (%s), want %d", got, after[1].HostSource, want)
	}
}

// TestSimulatedWritesAdvanceTheSATAReport: an hour of the simulated workload on the 5210 ION
// (recorded smartctl report) moves its Total_LBAs_Written by the bytes written, and its
// program-page counters with it, so the WAF the agent reads stays the recorded lifetime one.
func TestSimulatedWritesAdvanceTheSATAReport(t *testing.T) {
	root := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	drives, err := simulatedDrives(context.Background(), "homelab", root, now)
	if err != nil {
		t.Fatal(err)
	}
	ion := byName(t, drives, "sdb")
	if ion.sata == nil || ion.reading.HostSource != health.SourceATASMART || ion.reading.WAF == 0 {
		t.Fatalf("5210 ION report %v, source %q, WAF %v", ion.sata, ion.reading.HostSource, ion.reading.WAF)
	}
	if err := ion.advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(root, "logs")
	after := health.Collector{Host: sysfs.Host{Root: root}, ATA: smart.RecordedReader{Dir: logs}}.Read(context.Background(),
		[]prismv1.Device{{Name: ion.name, StablePath: ion.stablePath}})[0]
	want := float64(ion.reading.HostWritten) + ion.rate*3600
	if got := float64(after.HostWritten); math.Abs(got-want) > 512 || after.HostSource != health.SourceATASMART {
		t.Errorf("host bytes %v (%s) after an hour, want %v ± one LBA", got, after.HostSource, want)
	}
	if math.Abs(after.WAF-ion.reading.WAF) > 1e-6 || after.MediaWritten <= ion.reading.MediaWritten {
		t.Errorf("WAF %v media %d after an hour; before %v and %d", after.WAF, after.MediaWritten, ion.reading.WAF, ion.reading.MediaWritten)
	}
	if after.PercentUsed != ion.reading.PercentUsed || after.PowerOnHours != ion.reading.PowerOnHours {
		t.Errorf("the rest of the recording changed: %+v", after)
	}
}

// TestSeededHistoryGivesTheAgentAForecast: the simulated past samples, written with the
// exporter's History and read by an exporter as the agent runs it (--state-dir), give the 660p
// a wear-out date; without them one poll gives none.
func TestSeededHistoryGivesTheAgentAForecast(t *testing.T) {
	root := homelab(t)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	drives, err := simulatedDrives(context.Background(), "homelab", root, now)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n, err := seedHistory(dir, drives, now)
	// Three drives have lifetime counters (900P, 660p, 5210 ION): one sample every 30 min for 8 days less an hour.
	if want := 3 * int(historySpan/historyStep); err != nil || n != want {
		t.Fatalf("seeded %d samples (%v), want %d", n, err, want)
	}
	for _, d := range drives {
		if err := d.advance(10 * time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(10 * time.Minute)
	wearOut := func(stateDir string) bool {
		e := &exporter.Exporter{Node: "homelab", Collector: health.Collector{Host: sysfs.Host{Root: root},
			Logs: nvme.RecordedLogReader{Dir: filepath.Join(root, "logs")}, Now: func() time.Time { return later }}}
		if stateDir != "" {
			e.StateFile, e.LegacyStateFile = exporter.StateFiles(stateDir)
		}
		qlc := byName(t, drives, "nvme1n1")
		if err := e.Poll(context.Background(), []prismv1.Device{qlc.device}); err != nil {
			t.Fatal(err)
		}
		s := e.Summary(qlc.name)
		return s != nil && s.WearOutTime != nil
	}
	if wearOut("") {
		t.Error("one poll without a history must give no wear-out date")
	}
	if !wearOut(dir) {
		t.Error("no wear-out date from the seeded history")
	}
}

// TestPastSample: ago before now the drive had rate x ago fewer bytes, as many fewer hours,
// and a percentage used lower by those bytes' share of what it used so far.
func TestPastSample(t *testing.T) {
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	last := endurance.Sample{Time: now, HostBytesWritten: 10e12, MediaBytesWritten: 20e12, PercentUsed: 10, PowerOnHours: 1000}
	for _, tc := range []struct {
		ago          time.Duration
		rate         float64
		host, media  uint64
		pct          int
		powerOnHours uint64
	}{
		{time.Hour, 1e6, 10e12 - 3.6e9, 20e12 - 7.2e9, 10, 999},
		{100 * time.Hour, 1e6, 10e12 - 360e9, 20e12 - 720e9, 10, 900}, // 360 GB < 1 TB per percent
		{1000 * time.Hour, 1e6, 10e12 - 3.6e12, 20e12 - 7.2e12, 7, 0}, // 3.6 TB: 3 percent less
		{2000 * time.Hour, 10e6, 0, 0, 0, 0},                          // never below zero
	} {
		s := pastSample(last, tc.rate, tc.ago, now)
		if s.HostBytesWritten != tc.host || s.MediaBytesWritten != tc.media || s.PercentUsed != tc.pct || s.PowerOnHours != tc.powerOnHours || !s.Time.Equal(now.Add(-tc.ago)) {
			t.Errorf("%s at %v B/s: %+v, want host %d media %d %d %% %d h", tc.ago, tc.rate, s, tc.host, tc.media, tc.pct, tc.powerOnHours)
		}
	}
}

func TestPartitionName(t *testing.T) {
	for disk, want := range map[string]string{"nvme0n1": "nvme0n1p3", "sda": "sda3", "loop7": "loop7p3"} {
		if got := partitionName(disk, 3); got != want {
			t.Errorf("partition 3 of %s: %s, want %s", disk, got, want)
		}
	}
}
