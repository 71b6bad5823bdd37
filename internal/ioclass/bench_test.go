package ioclass

import (
	"strconv"
	"testing"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// policy33 is a full policy: class 0 and 32 classes of three terms each,
// mostly without done so an unmatched IO walks every rule.
func policy33() *v1alpha1.ClassificationPolicySpec {
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"}}}
	for id := int32(1); id <= MaxClassID; id++ {
		n := strconv.Itoa(int(id))
		spec.Classes = append(spec.Classes, v1alpha1.IOClass{
			ID: id, Name: "class-" + n, EvictionPriority: prio(id), Allocation: "0.5", Done: id%8 == 0,
			AllOf: []v1alpha1.MatchTerm{
				anyOf(cond(v1alpha1.ConditionProcessName, "", "proc-"+n), cond(v1alpha1.ConditionPID, "", n), cond(v1alpha1.ConditionDirect, "", "")),
				anyOf(cond(v1alpha1.ConditionRequestSize, v1alpha1.CompareLe, strconv.Itoa(4096*int(id))), cond(v1alpha1.ConditionIODirection, "", "write")),
				anyOf(cond(v1alpha1.ConditionLBA, v1alpha1.CompareGe, strconv.Itoa(1<<20*int(id))), cond(v1alpha1.ConditionIOClass, v1alpha1.CompareLt, n)),
			},
		})
	}
	return spec
}

func BenchmarkCompile33(b *testing.B) {
	spec := policy33()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	cfg, err := Compile(policy33())
	if err != nil {
		b.Fatal(err)
	}
	e, err := NewEvaluator(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ios := []IO{
		{Size: 4096, Write: true, Comm: "bstore_kv_sync", LBA: 1 << 30},
		{Size: 1 << 20, Comm: "tp_osd_tp", PID: 4242, Direct: true, LBA: 77},
		{Size: 65536, Write: true, Comm: "proc-31", LBA: 1 << 40},
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.Classify(ios[i%len(ios)])
		i++
	}
}
