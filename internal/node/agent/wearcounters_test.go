package agent

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestWearCountersCondition(t *testing.T) {
	failing := withWearCounters(prismv1.StorageNodeStatus{}, "wear counters not read for 1 of 5 devices: sda (ata-smart)")
	c := meta.FindStatusCondition(failing.Conditions, prismv1.ConditionWearCountersRead)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonWearCountersNotRead || c.Message == "" {
		t.Fatalf("with collect errors: %+v", c)
	}
	read := withWearCounters(failing, "")
	c = meta.FindStatusCondition(read.Conditions, prismv1.ConditionWearCountersRead)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonWearCountersRead {
		t.Fatalf("after a clean poll: %+v", c)
	}
	if len(read.Conditions) != 1 {
		t.Fatalf("conditions = %+v, want the one condition updated in place", read.Conditions)
	}
}
