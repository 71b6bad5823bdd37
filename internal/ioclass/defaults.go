package ioclass

import (
	_ "embed"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// ProvisionalAnnotation marks a policy whose classes are educated guesses
// waiting for evidence; its value says what evidence.
const ProvisionalAnnotation = "prism.storage.io/provisional"

// CephOSDYAML is defaults/ceph-osd.yaml, the manifest of DefaultCephOSD
// (a test keeps the two identical).
//
//go:embed defaults/ceph-osd.yaml
var CephOSDYAML []byte

// DefaultCephOSD is the default PRISM policy for an Open CAS cache in front
// of a Ceph OSD's QLC data device.
//
// PROVISIONAL: built from Ceph's source and configuration defaults, not from
// a trace. Until a block_bio_queue trace of real OSDs confirms which threads
// submit which request sizes to the data device, treat every class as a guess.
//
// What the guesses rest on:
//   - The classifier sees the task that submits the bio. BlueStore submits
//     with io_submit from the thread that queues the IO; its bstore_aio
//     thread only reaps completions, so it never shows up as a submitter.
//   - Client writes are submitted by the OSD's op workers (tp_osd_tp).
//     Deferred writes (small overwrites first journaled in RocksDB) are
//     submitted by bstore_kv_final, and by bstore_kv_sync when draining;
//     bstore_kv_sync also writes BlueFS (RocksDB) data when the DB spills
//     over onto this device. On SSD-class devices (QLC is non-rotational)
//     bluestore_prefer_deferred_size_ssd is 0, so deferred writes are rare.
//   - Small writes (at most 64 KiB, QLC's indirection unit or less) cost
//     QLC a read-modify-write; the cache should absorb them. Writes of 1 MiB
//     and more are sequential enough for QLC, and reads that large (scrub,
//     recovery, backfill) would only flush the cache, so both bypass it.
//   - Open question for the trace: with bluestore_max_blob_size_ssd = 64 KiB
//     BlueStore issues one aio per blob, so a large client write may reach
//     the cache as 64 KiB bios that land in small-writes, and the 1 MiB
//     classes may rarely match.
//
// Classes, lowest id first (with done the lowest matching id wins):
//
//	1  large-writes       write, request_size >= 1 MiB     pass-through (allocation 0)
//	2  large-reads        read,  request_size >= 1 MiB     pass-through (allocation 0)
//	10 bluestore-deferred write from bstore_kv_final|bstore_kv_sync  priority 1
//	11 small-writes       write, request_size <= 64 KiB    priority 5
//	0  unclassified       everything else (reads, mid-size writes)  priority 22
//
// Nothing is pinned: a pinned class is never evicted for another class, so a
// wrong guess could hold the cache.
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
				ProvisionalAnnotation: "built from Ceph source and defaults without a trace; " +
					"keep until a block_bio_queue trace of real Ceph OSDs confirms thread names and request sizes",
			},
		},
		Spec: v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
			{ID: 0, Name: UnclassifiedName, EvictionPriority: prio(22), Allocation: "1"},
			{ID: 1, Name: "large-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(size(v1alpha1.CompareGe, "1048576"))},
				Done: true, EvictionPriority: prio(255), Allocation: "0"},
			{ID: 2, Name: "large-reads", AllOf: []v1alpha1.MatchTerm{term(read), term(size(v1alpha1.CompareGe, "1048576"))},
				Done: true, EvictionPriority: prio(255), Allocation: "0"},
			{ID: 10, Name: "bluestore-deferred", AllOf: []v1alpha1.MatchTerm{term(comm("bstore_kv_final"), comm("bstore_kv_sync")), term(write)},
				Done: true, EvictionPriority: prio(1), Allocation: "1"},
			{ID: 11, Name: "small-writes", AllOf: []v1alpha1.MatchTerm{term(write), term(size(v1alpha1.CompareLe, "65536"))},
				Done: true, EvictionPriority: prio(5), Allocation: "1"},
		}},
	}
}
