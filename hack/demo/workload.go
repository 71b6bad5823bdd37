package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/fsutil"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/health"
	"github.com/prism-storage/prism/internal/node/inventory"
)

// A SIMULATED workload writes to the simulated nodes' drives: the drives' counters are
// recordings taken once, so without it every write rate would be zero. It advances the
// counters the agent reads, as a drive being written would: the NVMe SMART log's Data Units
// Written (the recorded page under <host root>/logs, bytes 48-63, NVMe Base Specification
// figure "SMART / Health Information Log Page"), a SATA drive's lifetime write attributes in
// its recorded smartctl report (sata.go) and the block layer's sectors written (field 7 of
// /sys/block/<name>/stat). Everything else in the recordings stays as recorded.

// Simulated write rates (bytes per second) by Prism tier, for drives whose recording gives no
// lifetime average to follow; the fast tier takes most writes, as the cache makes it.
var tierRate = map[prismv1.Tier]float64{prismv1.TierFast: 40e6, prismv1.TierCapacity: 10e6, prismv1.TierOther: 1e6}

// busierThanAverage is how much harder than its lifetime average a recorded drive is written
// in the simulation (and in its simulated past samples).
const busierThanAverage = 1.5

// simulatedDrive is one drive of one simulated node under the simulated workload.
type simulatedDrive struct {
	device                 prismv1.Device // as the inventory reports it
	node, name, stablePath string
	root                   string
	smartPage              string      // <root>/logs/<ctrl>/log-02.bin; "" when the drive has none
	sata                   *sataReport // <root>/logs/<name>/smartctl.json; nil when the drive has none
	rate                   float64     // bytes per second
	reading                health.Reading
	statBase               uint64  // sectors written in the fixture's stat before the simulation
	written                float64 // simulated bytes so far
}

// newSimulatedDrive picks the drive's simulated rate from its first reading: its lifetime
// average × busierThanAverage when the recording gives lifetime writes and power-on hours,
// else the tier's rate.
func newSimulatedDrive(node, root string, d prismv1.Device, r health.Reading, ctrl string) (*simulatedDrive, error) {
	s := &simulatedDrive{device: d, node: node, name: d.Name, stablePath: d.StablePath, root: root, reading: r, rate: tierRate[d.Tier]}
	if r.HostSource == health.SourceATASMART && r.HostWritten > 0 {
		var err error
		if s.sata, err = openSATAReport(root, d.Name); err != nil {
			return nil, err
		}
	}
	if ctrl != "" {
		page := filepath.Join(root, "logs", ctrl, nvme.LogFileName(nvme.LogIDSMART))
		if _, err := os.Stat(page); err == nil {
			s.smartPage = page
		}
	}
	if _, ok := r.Sample(); ok && r.PowerOnHours > 0 && r.HostWritten > 0 {
		s.rate = busierThanAverage * float64(r.HostWritten) / (float64(r.PowerOnHours) * 3600)
	}
	if s.rate == 0 {
		s.rate = tierRate[prismv1.TierOther]
	}
	if fields, err := statFields(s.statPath()); err == nil {
		s.statBase, _ = strconv.ParseUint(fields[6], 10, 64)
	}
	return s, nil
}

func (s *simulatedDrive) statPath() string {
	return filepath.Join(s.root, "sys", "block", s.name, "stat")
}

// statFields reads a /sys/block/<name>/stat file: at least the 7 fields up to sectors written.
func statFields(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(string(data))
	if len(fields) < 7 {
		return nil, fmt.Errorf("%s: %d fields, want at least 7", path, len(fields))
	}
	return fields, nil
}

// advance adds dt of simulated writes to the drive's counters.
func (s *simulatedDrive) advance(dt time.Duration) error {
	s.written += s.rate * dt.Seconds()
	if s.smartPage != "" {
		if err := s.writeSMART(); err != nil {
			return err
		}
	}
	if s.sata != nil {
		if err := s.sata.advance(1 + s.written/float64(s.reading.HostWritten)); err != nil {
			return err
		}
	}
	return s.writeStat()
}

// writeSMART rewrites the SMART page with Data Units Written advanced by the simulated bytes
// (units of 1000 × 512 bytes, rounded up as drives do), and checks the result with Prism's own
// parser.
func (s *simulatedDrive) writeSMART() error {
	page, err := os.ReadFile(s.smartPage)
	if err != nil {
		return err
	}
	before, err := nvme.ParseSMARTLog(page)
	if err != nil {
		return fmt.Errorf("%s: %w", s.smartPage, err)
	}
	units := (uint64(s.reading.HostWritten) + uint64(s.written) + nvme.DataUnitBytes - 1) / nvme.DataUnitBytes
	if units < before.DataUnitsWritten.Lo || before.DataUnitsWritten.Hi != 0 {
		return nil // never move a counter backwards (or past the 64 bits simulated here)
	}
	binary.LittleEndian.PutUint64(page[48:], units)
	after, err := nvme.ParseSMARTLog(page)
	if err != nil || after.DataUnitsWritten.Lo != units {
		return fmt.Errorf("%s: data units written did not read back as %d: %v", s.smartPage, units, err)
	}
	return fsutil.WriteFileAtomic(s.smartPage, page, 0o644)
}

// writeStat advances field 7 (sectors written) of the drive's /sys/block/<name>/stat.
func (s *simulatedDrive) writeStat() error {
	fields, err := statFields(s.statPath())
	if err != nil {
		return err
	}
	fields[6] = strconv.FormatUint(s.statBase+uint64(s.written)/512, 10)
	return fsutil.WriteFileAtomic(s.statPath(), []byte(strings.Join(fields, " ")+"\n"), 0o644)
}

// setUpWorkload reads every simulated drive once as the agent will, seeds each agent's
// history with simulated past samples and starts the simulated workload.
func (d *demo) setUpWorkload(ctx context.Context) error {
	now := time.Now()
	samples := 0
	for _, n := range d.nodes {
		drives, err := simulatedDrives(ctx, n.Name, d.roots[n.Name], now)
		if err != nil {
			return err
		}
		k, err := seedHistory(stateDir(d.dir, n.Name), drives, now)
		if err != nil {
			return fmt.Errorf("%s: seeding the wear history: %w", n.Name, err)
		}
		samples += k
		d.drives = append(d.drives, drives...)
	}
	say("Seeded the agents' wear histories with %d SIMULATED past samples (8 days, every 30 min, of the drives with lifetime counters), and started a SIMULATED workload that advances the drives' write counters.", samples)
	d.goroutine(ctx, func(ctx context.Context) {
		last := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			now := time.Now()
			for _, s := range d.drives {
				if err := s.advance(now.Sub(last)); err != nil {
					logf("simulated workload: %s/%s: %v", s.node, s.name, err)
				}
			}
			last = now
		}
	})
	return nil
}

// simulatedDrives reads a simulated node's drives as its agent will: the inventory, then the
// wear counters from the recorded pages under the host root.
func simulatedDrives(ctx context.Context, node, root string, now time.Time) ([]*simulatedDrive, error) {
	host := sysfs.Host{Root: root}
	rep, err := inventory.Take(ctx, inventory.Options{Host: host, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", node, err)
	}
	controllers := map[string]string{}
	if disks, err := host.BlockDevices(true); err == nil {
		for _, b := range disks {
			controllers[b.Name] = b.NVMeController
		}
	}
	logs := filepath.Join(root, "logs")
	readings := health.Collector{Host: host, Logs: nvme.RecordedLogReader{Dir: logs}, ATA: smart.RecordedReader{Dir: logs}, Now: func() time.Time { return now }}.Read(ctx, rep.Devices)
	var drives []*simulatedDrive
	for i, dev := range rep.Devices {
		s, err := newSimulatedDrive(node, root, dev, readings[i], controllers[dev.Name])
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", node, dev.Name, err)
		}
		drives = append(drives, s)
	}
	return drives, nil
}
