package health

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

const repo = "../../.."

// homelab reads the fixture node whose SATA Micron 5210 ION carries a recorded smartctl report
// and whose Samsung 870 QVO carries none.
func homelab(t *testing.T) map[string]Reading {
	t.Helper()
	root := t.TempDir()
	if _, err := fixturehost.BuildNode(repo, "optane-qlc-homelab-d", root); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := inventory.Take(ctx, inventory.Options{Host: sysfs.Host{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(root, "logs")
	c := Collector{Host: sysfs.Host{Root: root}, Logs: nvme.RecordedLogReader{Dir: logs}, ATA: smart.RecordedReader{Dir: logs}}
	out := map[string]Reading{}
	for _, r := range c.Read(ctx, rep.Devices) {
		out[r.Device] = r
	}
	return out
}

// TestSATAWearFromTheRecordedReport: the 5210 ION's figures are its recorded attributes
// (internal/host/smart/testdata/micron-5210-ion-7t6/SOURCE.md): 246 Total_LBAs_Written
// 147037848489 × 512 B, WAF (247 + 248) ÷ 247 = (6923736636 + 17931795822) ÷ 6923736636,
// 100 − normalized 97 of 202, and 10835 power-on hours; its media bytes are host × WAF.
func TestSATAWearFromTheRecordedReport(t *testing.T) {
	r := homelab(t)["sdb"]
	if len(r.Errors) != 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	wantHost := uint64(147037848489) * 512
	wantWAF := (6923736636.0 + 17931795822.0) / 6923736636.0
	if r.HostWritten != wantHost || r.HostSource != SourceATASMART {
		t.Errorf("host written %d from %q, want %d from %q", r.HostWritten, r.HostSource, wantHost, SourceATASMART)
	}
	if math.Abs(r.WAF-wantWAF) > 1e-12 {
		t.Errorf("WAF %v, want %v", r.WAF, wantWAF)
	}
	if got := float64(r.MediaWritten) / float64(r.HostWritten); math.Abs(got-wantWAF) > 1e-9 || r.MediaSource != SourceATASMARTWAF {
		t.Errorf("media ÷ host %v from %q, want %v from %q", got, r.MediaSource, wantWAF, SourceATASMARTWAF)
	}
	if r.PercentUsed != 3 || r.PowerOnHours != 10835 {
		t.Errorf("percent used %d, power-on hours %d; want 3 and 10835", r.PercentUsed, r.PowerOnHours)
	}
	if _, ok := r.Sample(); !ok {
		t.Error("a lifetime SATA counter gives no endurance sample")
	}
}

// TestSATAWithoutAReportFallsBackToSysfs: the 870 QVO has no recording: the error names the
// source and the block layer's since-boot counter stands in (no lifetime sample).
func TestSATAWithoutAReportFallsBackToSysfs(t *testing.T) {
	r := homelab(t)["sda"]
	if !strings.Contains(r.Errors[SourceATASMART], "smartctl.json") {
		t.Errorf("errors %v, want the missing report under %s", r.Errors, SourceATASMART)
	}
	if r.HostSource != SourceSysfs || r.MediaWritten != 0 || r.WAF != 0 {
		t.Errorf("source %q media %d WAF %v, want sysfs only", r.HostSource, r.MediaWritten, r.WAF)
	}
	if _, ok := r.Sample(); ok {
		t.Error("a since-boot counter must not give an endurance sample")
	}
}
