package advisor

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/api/v1alpha1"
)

func sample(exported, core int64, classes map[int32]ClassSample) Sample {
	return Sample{CacheID: 1, Config: "sha256:a", SizeBytes: 100 * gib, ExportedWritten: exported, CoreWritten: core, Classes: classes}
}

func TestDelta(t *testing.T) {
	prev := sample(100, 80, map[int32]ClassSample{0: {Written: 40, Occupancy: 10}, 3: {Written: 60, Occupancy: 20, Dirty: 5}})
	cases := []struct {
		name string
		cur  Sample
		want []ClassWindow
		skip string
	}{
		{"counters grow", sample(250, 120, map[int32]ClassSample{0: {Written: 50, Occupancy: 11}, 3: {Written: 200, Occupancy: 30, Dirty: 7}}),
			[]ClassWindow{{ID: 0, Written: 10, Occupancy: 10}, {ID: 3, Written: 140, Occupancy: 25, Dirty: 7}}, ""},
		{"a class first reported now waits for the next window",
			sample(100, 80, map[int32]ClassSample{0: {Written: 40, Occupancy: 10}, 3: {Written: 60, Occupancy: 20}, 4: {Written: 9, Occupancy: 9}}),
			[]ClassWindow{{ID: 0, Occupancy: 10}, {ID: 3, Occupancy: 20}}, ""},
		{"cache counter down: restarted", sample(10, 5, prev.Classes), nil, "write counters went down"},
		{"class counter down: reset", sample(100, 80, map[int32]ClassSample{0: {Written: 1}, 3: {Written: 60}}), nil, "class 0's write counter went down"},
		{"other cache id", func() Sample { s := sample(300, 90, prev.Classes); s.CacheID = 2; return s }(), nil, "cache id changed from 1 to 2"},
		{"class file reloaded", func() Sample { s := sample(300, 90, prev.Classes); s.Config = "sha256:b"; return s }(), nil, "IO class file changed"},
		{"no size", func() Sample { s := sample(300, 90, prev.Classes); s.SizeBytes = 0; return s }(), nil, "size is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, skip := Delta("n/d", prev, tc.cur)
			if tc.skip != "" {
				if !strings.Contains(skip, tc.skip) {
					t.Fatalf("skip %q, want %q", skip, tc.skip)
				}
				return
			}
			if skip != "" {
				t.Fatalf("skipped: %s", skip)
			}
			if len(w.Classes) != len(tc.want) {
				t.Fatalf("classes %+v, want %+v", w.Classes, tc.want)
			}
			for i := range tc.want {
				if w.Classes[i] != tc.want[i] {
					t.Errorf("class %d: %+v, want %+v", i, w.Classes[i], tc.want[i])
				}
			}
			if tc.name == "counters grow" && (w.ExportedWritten != 150 || w.CoreWritten != 40 || w.SizeBytes != 100*gib || w.Key != "n/d") {
				t.Errorf("cache deltas %+v", w)
			}
		})
	}
}

func TestTrackerWindows(t *testing.T) {
	t0 := time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	s := func(written int64) Sample {
		return sample(written, 0, map[int32]ClassSample{3: {Written: written, Occupancy: 10}})
	}
	var tr Tracker
	const window = 10 * time.Minute

	if tr.Observe(at(0), nil, window) {
		t.Fatal("no samples must not start a window")
	}
	if since, n := tr.Since(); !since.IsZero() || n != 0 {
		t.Fatalf("since %v, %d caches", since, n)
	}
	if tr.Observe(at(1), map[string]Sample{"a/x": s(100)}, window) || tr.Last != nil {
		t.Fatal("the first sample only starts the window")
	}
	// A second cache appears mid-window: it waits for the next one.
	if tr.Observe(at(5), map[string]Sample{"a/x": s(150), "b/y": s(7)}, window) {
		t.Fatal("a window closed after 4 minutes")
	}
	if !tr.Observe(at(11), map[string]Sample{"a/x": s(300), "b/y": s(17)}, window) {
		t.Fatal("the window did not close after 10 minutes")
	}
	w := tr.Last
	if len(w.Caches) != 1 || w.Caches[0].Key != "a/x" || w.Caches[0].Classes[0].Written != 200 || !w.Start.Equal(at(1)) || !w.End.Equal(at(11)) {
		t.Fatalf("first window %+v", w)
	}
	// Next window: b/y is in; a/x restarted (counter down) and is skipped for this window only.
	if !tr.Observe(at(21), map[string]Sample{"a/x": s(5), "b/y": s(57)}, window) {
		t.Fatal("second window did not close")
	}
	w = tr.Last
	if len(w.Caches) != 1 || w.Caches[0].Key != "b/y" || w.Caches[0].Classes[0].Written != 40 ||
		len(w.Skipped) != 1 || !strings.HasPrefix(w.Skipped[0], "a/x: its write counters went down") {
		t.Fatalf("second window %+v", w)
	}
	// Third window: a/x counts again from its restart; b/y stopped reporting.
	if !tr.Observe(at(31), map[string]Sample{"a/x": s(25)}, window) {
		t.Fatal("third window did not close")
	}
	w = tr.Last
	if len(w.Caches) != 1 || w.Caches[0].Key != "a/x" || w.Caches[0].Classes[0].Written != 20 ||
		len(w.Skipped) != 1 || w.Skipped[0] != "b/y: no longer reported" {
		t.Fatalf("third window %+v", w)
	}
}

func TestSamplesFromStorageNode(t *testing.T) {
	csv := "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n"
	sn := &v1alpha1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	if Samples(sn) != nil {
		t.Fatal("no plan must give no samples")
	}
	sn.Spec.Plan = &v1alpha1.NodePlan{
		FastDevices: []v1alpha1.FastDevicePlan{
			{StablePath: "/dev/disk/by-id/nvme-A", Cache: &v1alpha1.PlannedPartition{SizeBytes: 200 * gib}},
			{StablePath: "/dev/disk/by-id/nvme-B"},
		},
		Cache: &v1alpha1.NodeCachePlan{Mode: v1alpha1.CacheWriteBack, IOClassCSV: csv},
	}
	sn.Status.Caches = []v1alpha1.CacheStatus{
		{FastDevice: "/dev/disk/by-id/nvme-A", CacheID: 1, State: v1alpha1.CacheRunning, ExportedWrittenBytes: 9, CoreWrittenBytes: 4,
			IOClasses: []v1alpha1.IOClassUsage{{ID: 3, WrittenBytes: 7, OccupancyBytes: 5, DirtyBytes: 2}}},
		{FastDevice: "/dev/disk/by-id/nvme-B", CacheID: 2, State: v1alpha1.CacheIncomplete},
		{FastDevice: "/dev/disk/by-id/nvme-C", CacheID: 3, State: v1alpha1.CachePending},
	}
	got := Samples(sn)
	a, b := got["n1//dev/disk/by-id/nvme-A"], got["n1//dev/disk/by-id/nvme-B"]
	if len(got) != 2 || a.SizeBytes != 200*gib || a.CacheID != 1 || a.ExportedWritten != 9 || a.CoreWritten != 4 ||
		a.Classes[3] != (ClassSample{Written: 7, Occupancy: 5, Dirty: 2}) || a.Config != CSVHash(csv) || b.SizeBytes != 0 {
		t.Fatalf("samples %+v", got)
	}
	if !WritesBack(v1alpha1.CacheWriteBack) || !WritesBack(v1alpha1.CacheWriteOnly) || WritesBack(v1alpha1.CacheWriteThrough) || WritesBack(v1alpha1.CacheWriteAround) {
		t.Error("WritesBack")
	}
}
