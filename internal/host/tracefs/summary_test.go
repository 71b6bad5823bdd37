package tracefs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/blktrace"
)

// TestSummaryWriter: the streamed summary of the recorded trace decodes (strictly, as
// kubectl prism simulate reads it) to what the batch functions make of the same records:
// blktrace.Aggregate's groups and blktrace.Bios's bios, for the partition and for the disk.
func TestSummaryWriter(t *testing.T) {
	tr, err := blktrace.ParseTrace(strings.NewReader(read(t, "trace-loop0.txt")))
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	for _, target := range []Target{
		{Device: "/dev/loop0p1", Name: "loop0p1", Major: 7, Minor: 0, Partition: true, Start: 2048, Sectors: 32768},
		{Device: "/dev/loop0", Name: "loop0", Major: 7, Minor: 0, Sectors: 131072},
		{Device: "/dev/loop1", Name: "loop1", Major: 7, Minor: 1, Sectors: 131072}, // none of its bios
	} {
		var out bytes.Buffer
		w := NewSummaryWriter(&out, target, "6.18.44", "prism-agent trace --device "+target.Device)
		for _, r := range tr.Records {
			w.Add(r)
		}
		res := Result{Events: uint64(len(tr.Records)), Lost: 2, StoppedBy: StoppedByDuration, Started: started, Elapsed: 1500 * time.Millisecond}
		if err := w.Close(res); err != nil {
			t.Fatal(err)
		}
		size := out.Len()
		var s blktrace.Summary
		dec := json.NewDecoder(&out)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil || dec.More() {
			t.Fatalf("%s: %v (more: %v)\n%s", target.Device, err, dec.More(), out.String())
		}
		sel := target.Selection()
		want := blktrace.Aggregate(tr.Records, sel, 0)
		bios := blktrace.Bios(tr.Records, sel)
		got := s.Workloads[0].Data
		if !reflect.DeepEqual(got.Groups, want.Groups) || len(got.Others) != 0 {
			t.Errorf("%s: groups\n got %+v\nwant %+v", target.Device, got.Groups, want.Groups)
		}
		if len(got.Bios) != len(bios) || len(bios) > 0 && !reflect.DeepEqual(got.Bios, bios) {
			t.Errorf("%s: %d bios, want %d", target.Device, len(got.Bios), len(bios))
		}
		wantCapture := blktrace.Capture{Device: target.Device, Disk: "7:" + map[uint32]string{0: "0", 1: "1"}[target.Minor], Partition: target.Partition,
			StartSector: target.Start, Sectors: target.Sectors, Started: "2026-11-25T21:00:00Z", Seconds: 1.5, StoppedBy: "duration",
			Events: uint64(len(bios)), Lost: 2}
		if s.Capture == nil || *s.Capture != wantCapture {
			t.Errorf("%s: capture %+v, want %+v", target.Device, s.Capture, wantCapture)
		}
		if s.Host.DataBytes != int64(target.Sectors)*512 || s.Host.Kernel != "6.18.44" || s.Workloads[0].Name != CaptureWorkload ||
			s.Workloads[0].Command != "prism-agent trace --device "+target.Device || len(s.Workloads) != 1 {
			t.Errorf("%s: host %+v, workload %s %q", target.Device, s.Host, s.Workloads[0].Name, s.Workloads[0].Command)
		}
		t.Logf("%s: %d bios, %d groups, %d bytes", target.Device, len(got.Bios), len(got.Groups), size)
	}
}
