package ioclass

import (
	_ "embed"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// EvidenceAnnotation names what a policy's classes were derived from.
const EvidenceAnnotation = "prism.storage.io/evidence"

// CephOSDYAML is defaults/ceph-osd.yaml, the manifest of DefaultCephOSD
// (a test keeps the two identical).
//
//go:embed defaults/ceph-osd.yaml
var CephOSDYAML []byte

// DefaultCephOSD is the default PRISM policy for an Open CAS cache in front
// of a Ceph OSD's QLC data device. Every class rests on a block_bio_queue
// trace of a real OSD (internal/ioclass/defaults: the committed trace, and a
// replay of it through this package's evaluator; docs/ioclass-default-policy.md):
//
//	1  bluefs-spillover   write from bstore_kv_sync|rocksdb:high0|rocksdb:low0|rocksdb:low1  pinned, at most half the cache
//	2  large-writes       write, request_size >= 64 KiB    pass-through (allocation 0)
//	3  large-reads        read,  request_size >= 64 KiB    pass-through (allocation 0)
//	10 bluestore-deferred write from bstore_kv_final       priority 1
//	11 small-writes       write, request_size < 64 KiB     priority 5
//	0  unclassified       everything else (reads under 64 KiB)  priority 22
//
// With done on every class, the lowest matching id wins.
//   - BlueStore cuts large IO into 64 KiB blobs (bluestore_max_blob_size_ssd),
//     so 4 MiB client writes and reads reach the device as 64 KiB bios on
//     64 KiB boundaries: whole QLC write units, which pass through. 1 MiB
//     bios never appear.
//   - 4 KiB client writes arrive as 4-16 KiB bios from the OSD's op threads
//     (tp_osd_tp) and, for deferred overwrites, bstore_kv_final.
//   - RocksDB writes reach the data device only when BlueFS spills off the
//     DB slot, from its flush and compaction threads in 4 KiB bios; the
//     RocksDB WAL is written by bstore_kv_sync. A process name, not a size,
//     tells them from client writes, so their class comes first.
//
// The names follow Ceph's default bluestore_rocksdb_options (two compaction
// threads, one flush thread): more background threads are named
// rocksdb:low2, ... and need adding.
func DefaultCephOSD() *v1alpha1.ClassificationPolicy {
	write := v1alpha1.IOCondition{Type: v1alpha1.ConditionIODirection, Value: "write"}
	read := v1alpha1.IOCondition{Type: v1alpha1.ConditionIODirection, Value: "read"}
	size := func(cmp v1alpha1.Comparison, bytes string) v1alpha1.IOCondition {
		return v1alpha1.IOCondition{Type: v1alpha1.ConditionRequestSize, Comparison: cmp, Value: bytes}
	}
	comm := func(name string) v1alpha1.IOCondition {
		return v1alpha1.IOCondition{Type: v1alpha1.ConditionProcessName, Value: name}
	}
	term := func(c ...v1alpha1.IOCondition) v1alpha1.MatchTerm { return v1alpha1.MatchTerm{AnyOf: c} }
	prio := func(p int32) *int32 { return &p }
	return &v1alpha1.ClassificationPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ClassificationPolicy"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "ceph-osd",
			Annotations: map[string]string{
				EvidenceAnnotation: "block_bio_queue trace of a real Ceph 16.2.15 OSD: " +
					"internal/ioclass/defaults/testdata/ceph-osd-trace.json, docs/ioclass-default-policy.md",
			},
		},
		Spec: v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
			{ID: 0, Name: UnclassifiedName, EvictionPriority: prio(22), Allocation: "1"},
			{ID: 1, Name: "bluefs-spillover", AllOf: []v1alpha1.MatchTerm{
				term(comm("bstore_kv_sync"), comm("rocksdb:high0"), comm("rocksdb:low0"), comm("rocksdb:low1")), term(write)},
				Done: true, Pinned: true, Allocation: "0.5"},
			{ID: 2, Name: "large-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(size(v1alpha1.CompareGe, "65536"))},
				Done: true, EvictionPriority: prio(255), Allocation: "0"},
			{ID: 3, Name: "large-reads", AllOf: []v1alpha1.MatchTerm{term(read), term(size(v1alpha1.CompareGe, "65536"))},
				Done: true, EvictionPriority: prio(255), Allocation: "0"},
			{ID: 10, Name: "bluestore-deferred", AllOf: []v1alpha1.MatchTerm{term(comm("bstore_kv_final")), term(write)},
				Done: true, EvictionPriority: prio(1), Allocation: "1"},
			{ID: 11, Name: "small-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(size(v1alpha1.CompareLt, "65536"))},
				Done: true, EvictionPriority: prio(5), Allocation: "1"},
		}},
	}
}
