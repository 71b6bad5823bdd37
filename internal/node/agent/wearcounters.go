package agent

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Reasons of the WearCountersRead condition.
const (
	ReasonWearCountersRead    = "AllRead"
	ReasonWearCountersNotRead = "CollectErrors"
)

// withWearCounters records in the status whether the last poll read every device's wear
// counters: failures show in the StorageNode, not only in prism_device_collect_errors_total.
// collectErrors is the exporter's description ("" when nothing failed). Pure.
func withWearCounters(st prismv1.StorageNodeStatus, collectErrors string) prismv1.StorageNodeStatus {
	st = *st.DeepCopy()
	c := metav1.Condition{Type: prismv1.ConditionWearCountersRead, Status: metav1.ConditionTrue,
		Reason: ReasonWearCountersRead, Message: "the last poll read every device's wear counters"}
	if collectErrors != "" {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonWearCountersNotRead, collectErrors
	}
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}
