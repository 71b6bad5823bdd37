// Package health reads each device's wear counters: NVMe log pages (SMART 02h, OCP C0h,
// Intel/Solidigm CAh) through a LogReader, ATA SMART through an ATAReader (`smartctl -j`),
// and /sys/block/*/stat as a last resort. It only reads.
package health

import (
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// Host-written sources, most to least authoritative.
const (
	SourceNVMeSMART = "nvme-smart"
	SourceATASMART  = "ata-smart"
	SourceSysfs     = "sysfs" // since boot only: no lifetime counter available
)

// Media-written sources.
const (
	SourceOCPC0       = "ocp-c0"        // OCP datacenter SMART log C0h, Physical Media Units Written
	SourceIntelCA     = "intel-ca"      // Intel/Solidigm vendor SMART log CAh, NAND bytes written
	SourceATASMARTWAF = "ata-smart-waf" // SATA host bytes × the drive's program-page ratio (Micron 247/248)
)

// Reading is one collection of one device's counters.
type Reading struct {
	Device     string
	StablePath string
	Time       time.Time

	HostWritten uint64
	HostSource  string // "" = unknown
	// MediaWritten is bytes written to the flash; 0 = the drive does not publish it.
	MediaWritten uint64
	MediaSource  string
	// WAF is the drive's own lifetime write amplification when it reports it directly (Micron).
	WAF float64

	PercentUsed     int // endurance.UnknownPercent when unknown
	AvailableSpare  int // percent; -1 unknown
	SpareThreshold  int // percent; -1 unknown
	CriticalWarning int // bitmask; -1 unknown
	MediaErrors     uint64
	PowerOnHours    uint64
	TemperatureC    int
	TemperatureOK   bool

	// Errors are per-source failures (a log page the drive refused, smartctl missing).
	Errors map[string]string
}

func newReading(device, stablePath string, now time.Time) Reading {
	return Reading{
		Device: device, StablePath: stablePath, Time: now,
		PercentUsed: endurance.UnknownPercent, AvailableSpare: -1, SpareThreshold: -1, CriticalWarning: -1,
		Errors: map[string]string{},
	}
}

// Sample is the reading as an endurance model sample; ok is false without lifetime host writes.
func (r Reading) Sample() (endurance.Sample, bool) {
	if r.HostSource == "" || r.HostSource == SourceSysfs {
		return endurance.Sample{}, false
	}
	return endurance.Sample{
		Time: r.Time, HostBytesWritten: r.HostWritten, MediaBytesWritten: r.MediaWritten,
		PercentUsed: r.PercentUsed, PowerOnHours: r.PowerOnHours,
	}, true
}
