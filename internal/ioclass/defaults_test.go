package ioclass

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// TestDefaultYAMLIsTheGoValue keeps defaults/ceph-osd.yaml and
// DefaultCephOSD identical.
func TestDefaultYAMLIsTheGoValue(t *testing.T) {
	var fromYAML v1alpha1.ClassificationPolicy
	if err := yaml.UnmarshalStrict(CephOSDYAML, &fromYAML); err != nil {
		t.Fatal(err)
	}
	if want := DefaultCephOSD(); !reflect.DeepEqual(&fromYAML, want) {
		t.Errorf("YAML:\n%+v\nGo:\n%+v", fromYAML, *want)
	}
	if !strings.Contains(DefaultCephOSD().Annotations[EvidenceAnnotation], "ceph-osd-trace.json") {
		t.Error("the default policy must name the trace it rests on")
	}
}

func TestDefaultCompiles(t *testing.T) {
	p := DefaultCephOSD()
	cfg, err := Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `IO class id,IO class name,Eviction priority,Allocation
0,unclassified,22,1
1,process_name:bstore_kv_sync|process_name:rocksdb:high0|process_name:rocksdb:low0|process_name:rocksdb:low1&io_direction:write&done,,0.5
2,io_direction:write&request_size:ge:65536&done,255,0
3,io_direction:read&request_size:ge:65536&done,255,0
10,process_name:bstore_kv_final&io_direction:write&done,1,1
11,io_direction:write&request_size:lt:65536&done,5,1
`
	if got := cfg.CSV(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	if w := Warnings(&p.Spec); len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	e, err := NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for io, want := range map[string]int{
		"size=4KiB,dir=write,comm=rocksdb:high0":     1, // spill-over, whatever its size
		"size=1MiB,dir=write,comm=rocksdb:low1":      1,
		"size=0,dir=write,comm=bstore_kv_sync":       1,
		"size=4KiB,dir=read,comm=rocksdb:low0":       0,
		"size=64KiB,dir=write,comm=tp_osd_tp,direct": 2, // one 64 KiB blob of a large write
		"size=4MiB,dir=write,comm=tp_osd_tp":         2,
		"size=64KiB,dir=write,comm=bstore_kv_final":  2, // large wins over deferred
		"size=64KiB,dir=read,comm=tp_osd_tp":         3,
		"size=16KiB,dir=write,comm=bstore_kv_final":  10,
		"size=4KiB,dir=write,comm=tp_osd_tp,direct":  11,
		"size=65535,dir=write,comm=tp_osd_tp":        11,
		"size=4KiB,dir=read,comm=tp_osd_tp":          0,
		"size=65535,dir=read,comm=tp_osd_tp":         0,
	} {
		got, err := ParseIO(io)
		if err != nil {
			t.Fatal(err)
		}
		if class := e.Classify(got); class != want {
			t.Errorf("%s: class %d, want %d", io, class, want)
		}
	}
}
