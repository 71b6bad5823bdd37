package ioclasstest

import (
	"strconv"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// Policy33 is a full policy for benchmarks: class 0 and 32 classes of three
// terms each (process name, pid or direct; size or write; lba or io_class),
// done on every eighth class only, so an IO matching none walks every rule.
func Policy33() *v1alpha1.ClassificationPolicySpec {
	prio := func(p int32) *int32 { return &p }
	cond := func(t v1alpha1.IOConditionType, cmp v1alpha1.Comparison, v string) v1alpha1.IOCondition {
		return v1alpha1.IOCondition{Type: t, Comparison: cmp, Value: v}
	}
	anyOf := func(c ...v1alpha1.IOCondition) v1alpha1.MatchTerm { return v1alpha1.MatchTerm{AnyOf: c} }
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"}}}
	for id := int32(1); id <= 32; id++ {
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
