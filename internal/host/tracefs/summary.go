package tracefs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/prism-storage/prism/internal/blktrace"
)

// CaptureWorkload names the one workload of a capture's summary.
const CaptureWorkload = "capture"

// SummaryWriter writes a capture as a trace summary in the format of the committed OSD trace
// (internal/ioclass/defaults/testdata/ceph-osd-trace.json), which `kubectl prism simulate
// --trace` reads: one workload whose data device is the target (sectors relative to its
// start, its size as the host's dataBytes), with every bio in order (data.bios) so that a
// replay keeps the order and the rewrites, the bios grouped by task, operation, size and
// region (data.groups), and a capture section saying what was traced and how it ended.
//
// It streams: each bio is written when it is added, and the groups and the capture section,
// known only at the end, follow the bios (JSON objects have no field order). Its memory is
// one entry per group however long the trace, which keeps a capture inside the agent pod's
// memory limit.
type SummaryWriter struct {
	w      *bufio.Writer
	target Target
	sel    blktrace.Device
	agg    *blktrace.Aggregator
	bios   uint64
	origin blktrace.Origin
	err    error
}

// NewSummaryWriter writes the summary's beginning: the host (kernel is the running kernel's
// release) and the workload (command is what ran).
func NewSummaryWriter(w io.Writer, t Target, kernel, command string) *SummaryWriter {
	s := &SummaryWriter{w: bufio.NewWriterSize(w, 64<<10), target: t, sel: t.Selection()}
	s.agg = blktrace.NewAggregator(s.sel, 0)
	host, err := json.Marshal(blktrace.Host{Kernel: kernel, Config: map[string]string{}, DataBytes: int64(t.Sectors * 512)})
	if err != nil {
		s.err = err
		return s
	}
	cmd, _ := json.Marshal(command)
	fmt.Fprintf(s.w, `{"host":%s,"workloads":[{"name":%q,"command":%s,"clientBytes":0,`+
		`"bluefs":{"slowUsedBefore":0,"slowUsedAfter":0,"writtenSlowBefore":0,"writtenSlowAfter":0,"dbUsedAfter":0},`+
		`"db":{"groups":[]},"data":{"bios":[`, host, CaptureWorkload, cmd)
	return s
}

// Add writes a record of the target as the next bio; records of other devices are skipped.
func (s *SummaryWriter) Add(r blktrace.Record) {
	if s.err != nil || !s.agg.Add(r) {
		return
	}
	data, err := json.Marshal(blktrace.BioOf(r, s.sel, &s.origin))
	if err != nil {
		s.err = err
		return
	}
	if s.bios > 0 {
		s.w.WriteByte(',')
	}
	s.w.WriteByte('\n')
	_, s.err = s.w.Write(data)
	s.bios++
}

// Close writes the groups and the capture section and flushes.
func (s *SummaryWriter) Close(res Result) error {
	if s.err != nil {
		return s.err
	}
	groups, err := json.Marshal(s.agg.Result().Groups)
	if err != nil {
		return err
	}
	capture, err := json.Marshal(s.Capture(res))
	if err != nil {
		return err
	}
	fmt.Fprintf(s.w, "\n],\"groups\":%s}}],\"capture\":%s}\n", groups, capture)
	return s.w.Flush()
}

// Data is the groups so far.
func (s *SummaryWriter) Data() blktrace.DeviceTrace { return s.agg.Result() }

// Capture is the summary's capture section.
func (s *SummaryWriter) Capture(res Result) *blktrace.Capture {
	t := s.target
	return &blktrace.Capture{
		Device: t.Device, Disk: t.Disk(), Partition: t.Partition, StartSector: t.Start, Sectors: t.Sectors,
		Started: res.Started.UTC().Format(time.RFC3339), Seconds: res.Elapsed.Seconds(),
		StoppedBy: res.StoppedBy, Events: s.bios, Lost: res.Lost,
	}
}
