package agent

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/inventory"
)

// Actuator carries out a StorageNode's plan on the host: the partitions, then the caches on
// them. It changes devices and writes nothing to the API: the Publisher puts what it reports
// into the status.
type Actuator struct {
	// Provision realises the plan's partitions (provision.Runner.Reconcile).
	Provision ProvisionFunc
	// Cache realises the plan's caches after the partitions (opencas.Runner.ReconcileNode);
	// nil leaves caches alone (status.caches is then never written).
	Cache CacheFunc
}

// Act carries out sn's plan on the devices of rep and returns next with the partitions and
// caches in it, and whether a device was written (what the created events report: an LV
// activated or a table re-read makes nothing). After a change it takes the inventory again
// (inventory, turned into a status by restatus), so that the status shows the devices as they
// are now, with their new partitions.
func (a *Actuator) Act(ctx context.Context, sn *prismv1.StorageNode, rep inventory.Report, next prismv1.StorageNodeStatus,
	inventoryAgain func(context.Context) (inventory.Report, error), restatus func(inventory.Report) prismv1.StorageNodeStatus) (prismv1.StorageNodeStatus, bool) {
	log := logf.FromContext(ctx).WithValues("node", sn.Name, "generation", sn.Generation)
	if sn.Spec.Plan == nil {
		return withoutPlan(next), false
	}
	res := a.Provision(ctx, sn.Spec.Plan, rep.Devices, sn.Spec.Mode)
	devices := rep.Devices
	if res.Changed {
		if again, err := inventoryAgain(ctx); err == nil {
			next = restatus(again)
			devices = again.Devices
		}
	}
	next = withPartitions(next, res.Partitions, sn.Generation, sn.Spec.Mode)
	if a.Cache != nil {
		// The cache starts on a partition provisioning reports Ready, in front of capacity
		// devices whose signatures the (latest) inventory read.
		cr := a.Cache(ctx, sn.Spec.Plan, devices, res.Partitions, sn.Spec.Mode)
		next = withCaches(next, cr, sn.Spec.Plan.Cache != nil, sn.Generation, sn.Spec.Mode)
		if cr.Changed {
			log.Info("Caches changed")
		}
	}
	if c := meta.FindStatusCondition(next.Conditions, prismv1.ConditionProvisioned); c != nil {
		if old := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionProvisioned); res.Changed || old == nil || old.Reason != c.Reason {
			log.Info("Provisioning", "mode", sn.Spec.Mode, "changed", res.Changed, "reason", c.Reason, "message", c.Message)
		}
	}
	return next, res.Wrote
}
