package agent

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/inventory"
)

// FieldManager names the agent in managed fields.
const FieldManager = "prism-agent"

// API is all the agent asks of the Kubernetes API (internal/node/agentclient on a cluster). Errors
// are the API's, so apierrors.IsNotFound and IsAlreadyExists work on them.
type API interface {
	GetStorageNode(ctx context.Context, name string) (*prismv1.StorageNode, error)
	// StorageNodeGeneration reads only the StorageNode's metadata.generation (the plan poll).
	StorageNodeGeneration(ctx context.Context, name string) (int64, error)
	// CreateStorageNode creates sn and updates it from the server's answer.
	CreateStorageNode(ctx context.Context, sn *prismv1.StorageNode) error
	// PatchStorageNodeStatus writes after's status as a merge patch from before.
	PatchStorageNodeStatus(ctx context.Context, before, after *prismv1.StorageNode) error
	// NodeUID reads the Node object's UID.
	NodeUID(ctx context.Context, name string) (types.UID, error)
}

// Publisher keeps one node's StorageNode status current. It writes only the object named
// after its own node.
type Publisher struct {
	Client    API
	NodeName  string
	Inventory func(ctx context.Context) (inventory.Report, error)
	Version   string
	// Period re-inventories even without udev events; Heartbeat rewrites an unchanged status.
	Period, Heartbeat time.Duration
	// Changes signals device changes (udev); nil when the host has no udev database.
	Changes <-chan struct{}
	Now     func() time.Time
	// Actuator carries out spec.plan after each inventory (partitions, then caches); nil
	// keeps the agent read-only (status.partitions and status.caches are then never written).
	Actuator *Actuator
	// CollectErrors describes the wear counters the last poll could not read ("" when all
	// were); nil when the agent reads none (no metrics), and then there is no condition.
	CollectErrors func() string
	// OSDs is the per-OSD table's summary (internal/node/osdstats); false keeps the published
	// list (no poll yet, or the socket directory could not be listed). nil: no OSD table.
	OSDs func() ([]prismv1.OSDStatus, bool)
	// Policy is told the StorageNode's spec.policyName at every sync ("" when no policy
	// manages the node); the metrics serve it as prism_node_info{policy}. nil: nobody asks.
	Policy func(name string)
	// PlanPoll is how often Run reads its StorageNode's generation to notice a new plan or
	// mode (a generation its last sync did not see); 0 turns the poll off.
	//
	// Why a poll and not a watch: the agent's RBAC (config/rbac/agent_role.yaml) grants only
	// get and create on storagenodes, and a watch needs list and watch, with a
	// metadata.name field selector to stay on the agent's own object. A GET of one object per
	// node every 10 s is cheap (0.1 request/s per node, served from the watch cache), keeps
	// no informer memory or long-lived connection in the agent, and has nothing to resync
	// after a disconnect: the next poll simply sees the generation. Large clusters can
	// lengthen it (--plan-poll); the period and udev events sync regardless. The GET asks
	// for the object's metadata only: the status, most of the object, is the agent's own
	// and it remembers what it last wrote (synced).
	PlanPoll time.Duration
	// Events records what an admin must notice (partitions created, a device refused, a
	// cache started or failed); nil records none.
	Events EventSink

	synced synced
}

// synced is what the last successful sync saw and wrote.
type synced struct {
	known      bool
	generation int64 // metadata.generation of the spec it carried out
	outdated   bool  // its status still lagged the spec (a plan not carried out yet: retry)
}

// Run syncs now, then on every change signal, every period and whenever the plan poll sees
// a spec the agent has not carried out, until ctx ends.
func (p *Publisher) Run(ctx context.Context) error {
	log := logf.FromContext(ctx).WithValues("node", p.NodeName)
	ticker := time.NewTicker(p.Period)
	defer ticker.Stop()
	var poll <-chan time.Time
	if p.Actuator != nil && p.PlanPoll > 0 {
		pt := time.NewTicker(p.PlanPoll)
		defer pt.Stop()
		poll = pt.C
	}
	for {
		if err := p.Sync(ctx); err != nil {
			log.Error(err, "Publishing inventory failed; will retry")
		}
		if !p.wait(ctx, ticker.C, poll) {
			return nil
		}
	}
}

// wait blocks until the next sync is due; false when ctx ended.
func (p *Publisher) wait(ctx context.Context, tick, poll <-chan time.Time) bool {
	log := logf.FromContext(ctx).WithValues("node", p.NodeName)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-p.Changes:
			log.V(1).Info("Device change seen, re-inventorying")
			return true
		case <-poll:
			if p.planOutdated(ctx) {
				if p.synced.known {
					log.Info("StorageNode spec changed, provisioning")
				} else {
					// No sync has gone through yet (the StorageNode, or its CRD, not there yet).
					log.V(1).Info("StorageNode not synced yet, trying again")
				}
				return true
			}
		}
	}
}

// planOutdated reports whether the StorageNode's status lags its spec: the last sync left it
// lagging, or the spec has a generation the last sync did not see (one metadata-only GET).
func (p *Publisher) planOutdated(ctx context.Context) bool {
	if p.synced.known && p.synced.outdated {
		return true
	}
	gen, err := p.Client.StorageNodeGeneration(ctx, p.NodeName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return true // Sync recreates it
		}
		logf.FromContext(ctx).V(1).Info("Polling the StorageNode failed", "node", p.NodeName, "error", err.Error())
		return false
	}
	return !p.synced.known || gen != p.synced.generation
}

// remember records what a sync of sn left in its status, next, for the plan poll.
func (p *Publisher) remember(sn *prismv1.StorageNode, next prismv1.StorageNodeStatus) {
	view := prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Generation: sn.Generation}, Spec: sn.Spec, Status: next}
	p.synced = synced{known: true, generation: sn.Generation, outdated: planOutdated(&view)}
}

// Sync takes one inventory, carries out spec.plan (when Provision is set), and writes the
// StorageNode status, in one patch, when it changed.
func (p *Publisher) Sync(ctx context.Context) error {
	sn, err := p.ensureStorageNode(ctx)
	if err != nil {
		return err
	}
	if p.Policy != nil {
		p.Policy(sn.Spec.PolicyName)
	}
	rep, invErr := p.Inventory(ctx)
	next := nodeStatus(sn.Status, rep, invErr, p.now(), p.Version)
	created := false
	if invErr == nil && p.Actuator != nil {
		// A failed inventory proves nothing about the devices: act only on a good one.
		restatus := func(again inventory.Report) prismv1.StorageNodeStatus {
			return nodeStatus(sn.Status, again, nil, p.now(), p.Version)
		}
		next, created = p.Actuator.Act(ctx, sn, rep, next, p.Inventory, restatus)
	}
	if p.CollectErrors != nil {
		next = withWearCounters(next, p.CollectErrors())
	}
	if p.OSDs != nil {
		if osds, ok := p.OSDs(); ok {
			next.OSDs = osds
		}
	}
	defer p.record(ctx, sn, transitions(sn.Status, next, created))
	sortLists(&next)
	if !needsWrite(sn.Status, next, p.Heartbeat) {
		p.remember(sn, next)
		return invErr
	}
	before := sn.DeepCopy()
	sn.Status = next
	if err := p.Client.PatchStorageNodeStatus(ctx, before, sn); err != nil {
		return fmt.Errorf("patching StorageNode %s status: %w", p.NodeName, err)
	}
	p.remember(sn, next)
	return invErr
}

// ensureStorageNode gets or creates this node's StorageNode, owned by the Node object so
// that it goes away with the node.
func (p *Publisher) ensureStorageNode(ctx context.Context) (*prismv1.StorageNode, error) {
	sn, err := p.Client.GetStorageNode(ctx, p.NodeName)
	if err == nil {
		return sn, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting StorageNode %s: %w", p.NodeName, err)
	}
	sn = &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: p.NodeName}}
	if uid, err := p.Client.NodeUID(ctx, p.NodeName); err == nil {
		sn.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: p.NodeName, UID: uid,
		}}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting Node %s: %w", p.NodeName, err)
	}
	if err := p.Client.CreateStorageNode(ctx, sn); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return p.Client.GetStorageNode(ctx, p.NodeName)
		}
		return nil, fmt.Errorf("creating StorageNode %s: %w", p.NodeName, err)
	}
	return sn, nil
}

func (p *Publisher) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
