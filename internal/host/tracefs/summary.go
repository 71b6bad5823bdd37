package tracefs

import (
	"time"

	"github.com/prism-storage/prism/internal/ioclass/defaults"
)

// CaptureWorkload names the one workload of a capture's summary.
const CaptureWorkload = "capture"

// Summary is the capture in the format of the committed OSD trace
// (internal/ioclass/defaults/testdata/ceph-osd-trace.json), which `kubectl prism simulate
// --trace` reads: one workload whose data device is the target (sectors relative to its
// start, its size as the host's dataBytes), grouped by task, operation, size and region, with
// every bio in order (Bios) so that a replay keeps the order and the rewrites; and a capture
// section saying what was traced and how it ended. kernel is the running kernel's release;
// command what ran.
func (r *Result) Summary(kernel, command string) *defaults.Summary {
	sel := r.Target.Selection()
	data := defaults.Aggregate(r.Records, sel, 0)
	data.Bios = defaults.Bios(r.Records, sel)
	return &defaults.Summary{
		Host: defaults.Host{Kernel: kernel, Config: map[string]string{}, DataBytes: int64(r.Target.Sectors * 512)},
		Workloads: []defaults.Workload{{
			Name: CaptureWorkload, Command: command,
			Data: data, DB: defaults.DeviceTrace{Groups: []defaults.Group{}},
		}},
		Capture: &defaults.Capture{
			Device: r.Target.Device, Disk: r.Target.Disk(), Partition: r.Target.Partition,
			StartSector: r.Target.Start, Sectors: r.Target.Sectors,
			Started: r.Started.UTC().Format(time.RFC3339), Seconds: r.Elapsed.Seconds(),
			StoppedBy: r.StoppedBy, Events: uint64(len(data.Bios)), Lost: r.Lost,
		},
	}
}
