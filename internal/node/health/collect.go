package health

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// Collector reads the wear counters of a host's devices.
type Collector struct {
	Host sysfs.Host
	// Logs reads NVMe log pages (the admin ioctl, or recorded pages for fixtures).
	Logs nvme.LogReader
	// ATA reads SATA/SAS drives' SMART (smartctl, or recorded reports for fixtures); nil skips them.
	ATA ATAReader
	Now func() time.Time
}

// Read collects every device of the inventory. A source that fails is recorded in the
// reading's Errors and the next source is tried; nothing aborts the whole collection.
func (c Collector) Read(ctx context.Context, devices []prismv1.Device) []Reading {
	controllers := map[string]string{}
	if disks, err := c.Host.BlockDevices(true); err == nil {
		for _, d := range disks {
			controllers[d.Name] = d.NVMeController
		}
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	out := make([]Reading, 0, len(devices))
	for _, d := range devices {
		r := newReading(d.Name, d.StablePath, now)
		switch {
		case controllers[d.Name] != "" && c.Logs != nil:
			c.nvme(ctx, &r, controllers[d.Name], d.Model)
		case strings.HasPrefix(d.Name, "sd") && c.ATA != nil:
			c.ata(ctx, &r, d.Name)
		}
		if r.HostSource == "" {
			c.sysfs(&r, d.Name)
		}
		out = append(out, r)
	}
	return out
}

func (c Collector) nvme(ctx context.Context, r *Reading, ctrl, model string) {
	raw, err := c.Logs.Log(ctx, ctrl, nvme.LogIDSMART, nvme.SMARTLogSize)
	if err == nil {
		var l nvme.SMARTLog
		if l, err = nvme.ParseSMARTLog(raw); err == nil {
			applySMART(r, l)
		}
	}
	if err != nil {
		r.Errors[SourceNVMeSMART] = err.Error()
	}
	// Media writes: the OCP datacenter page first, then Intel/Solidigm's vendor page.
	if raw, err := c.Logs.Log(ctx, ctrl, nvme.LogIDOCPSMART, nvme.OCPSMARTLogSize); err == nil {
		if l, err := nvme.ParseOCPSMARTLog(raw); err == nil {
			if b, err := l.MediaBytesWritten(); err == nil && b > 0 {
				r.MediaWritten, r.MediaSource = b, SourceOCPC0
				return
			}
		} else if !errors.Is(err, nvme.ErrNotOCPSMART) {
			r.Errors[SourceOCPC0] = err.Error()
		}
	}
	unit, known := nvme.IntelWriteUnitBytes(model)
	if !known {
		return
	}
	raw, err = c.Logs.Log(ctx, ctrl, nvme.LogIDIntelSMARTAdd, 512)
	if err != nil {
		return // most drives do not have the Intel page: not an error worth reporting
	}
	l, err := nvme.ParseIntelSMARTLog(raw)
	if err != nil {
		r.Errors[SourceIntelCA] = err.Error()
		return
	}
	if a, ok := l.Attribute(nvme.IntelAttrNANDBytesWritten); ok {
		if b, err := a.Bytes(unit.UnitBytes); err == nil && b > 0 {
			r.MediaWritten, r.MediaSource = b, SourceIntelCA
		}
	}
}

func applySMART(r *Reading, l nvme.SMARTLog) {
	if b, err := l.DataUnitsWrittenBytes(); err == nil {
		r.HostWritten, r.HostSource = b, SourceNVMeSMART
	} else {
		r.Errors[SourceNVMeSMART] = err.Error()
	}
	r.PercentUsed = int(l.PercentageUsed)
	r.AvailableSpare, r.SpareThreshold = int(l.AvailableSpare), int(l.AvailableSpareThreshold)
	r.CriticalWarning = int(l.CriticalWarning)
	if v, ok := l.MediaErrors.Uint64(); ok {
		r.MediaErrors = v
	}
	if v, ok := l.PowerOnHours.Uint64(); ok {
		r.PowerOnHours = v
	}
	r.TemperatureC, r.TemperatureOK = l.CompositeTemperatureC()
}

// ATAReader returns a SATA/SAS disk's SMART report as `smartctl -j -a` prints it.
type ATAReader interface {
	SmartctlJSON(ctx context.Context, disk string) ([]byte, error)
}

// ata reads the disk's SMART report: host bytes written, percentage used and, for the families
// that publish it, write amplification (internal/host/smart maps the vendor attributes).
func (c Collector) ata(ctx context.Context, r *Reading, name string) {
	out, err := c.ATA.SmartctlJSON(ctx, name)
	if err != nil {
		r.Errors[SourceATASMART] = err.Error()
		return
	}
	rep, err := smart.ParseSmartctlJSON(out)
	if err != nil {
		r.Errors[SourceATASMART] = err.Error()
		return
	}
	w, err := rep.Wear()
	if err != nil {
		r.Errors[SourceATASMART] = err.Error()
		return
	}
	if w.HostBytesWrittenKnown {
		r.HostWritten, r.HostSource = w.HostBytesWritten, SourceATASMART
	}
	if w.PercentUsedKnown {
		r.PercentUsed = w.PercentUsed
	}
	if w.WAFKnown {
		r.WAF = w.WAF
		// The drive counts NAND pages, not bytes: its media bytes are its host bytes times its
		// own page ratio, so media ÷ host is exactly the WAF it reports.
		if media := float64(r.HostWritten) * w.WAF; r.HostSource == SourceATASMART && media < math.MaxUint64 {
			r.MediaWritten, r.MediaSource = uint64(media), SourceATASMARTWAF
		}
	}
	if rep.PowerOnHoursKnown {
		r.PowerOnHours = rep.PowerOnHours
	}
}

// sysfs falls back to the block layer's sectors-written counter (field 7 of stat), which
// counts since boot only: good for rates and α_tier, not for lifetime wear.
func (c Collector) sysfs(r *Reading, name string) {
	data, err := os.ReadFile(filepath.Join(c.Host.Root, "sys", "block", name, "stat"))
	if err != nil {
		r.Errors[SourceSysfs] = err.Error()
		return
	}
	fields := strings.Fields(string(data))
	if len(fields) < 7 {
		r.Errors[SourceSysfs] = fmt.Sprintf("sys/block/%s/stat: %d fields, want at least 7", name, len(fields))
		return
	}
	sectors, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil || sectors > (1<<63)/512 {
		r.Errors[SourceSysfs] = fmt.Sprintf("sys/block/%s/stat: sectors written %q is not a count", name, fields[6])
		return
	}
	r.HostWritten, r.HostSource = sectors*512, SourceSysfs
}
