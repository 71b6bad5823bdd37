package testenv

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// MarkProvisioned reports, as node's agent would once it has carried out the plan, every
// planned partition Ready (for tests whose agents cannot partition: fixture hosts, read-only
// agents). It retries when the agent wrote the status in between.
func MarkProvisioned(ctx context.Context, c client.Client, node string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sn := &prismv1.StorageNode{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, sn); err != nil {
			return err
		}
		if sn.Spec.Plan == nil {
			return fmt.Errorf("node %s has no plan", node)
		}
		sn.Status.Partitions = nil
		for _, f := range sn.Spec.Plan.FastDevices {
			for _, s := range f.Slots {
				sn.Status.Partitions = append(sn.Status.Partitions, prismv1.PartitionStatus{
					Device: f.StablePath, Number: s.Partition.Number, Label: s.Partition.Label,
					Path: prismv1.PartitionPath(f.StablePath, s.Partition.Number), State: prismv1.PartitionReady,
				})
			}
		}
		sn.Status.ObservedPlanGeneration = sn.Generation
		meta.SetStatusCondition(&sn.Status.Conditions, metav1.Condition{Type: prismv1.ConditionProvisioned, Status: metav1.ConditionTrue, Reason: "PartitionsReady"})
		return c.Status().Update(ctx, sn)
	})
}
