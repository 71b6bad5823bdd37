package agent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/inventory"
)

// FieldManager names the agent in managed fields.
const FieldManager = "prism-agent"

// Publisher keeps one node's StorageNode status current. It writes only the object named
// after its own node.
type Publisher struct {
	Client    client.Client
	NodeName  string
	Inventory func(ctx context.Context) (inventory.Report, error)
	Version   string
	// Period re-inventories even without udev events; Heartbeat rewrites an unchanged status.
	Period, Heartbeat time.Duration
	// Changes signals device changes (udev); nil when the host has no udev database.
	Changes <-chan struct{}
	Now     func() time.Time
}

// Run syncs now, then on every change signal and every period, until ctx ends.
func (p *Publisher) Run(ctx context.Context) error {
	log := logf.FromContext(ctx).WithValues("node", p.NodeName)
	ticker := time.NewTicker(p.Period)
	defer ticker.Stop()
	for {
		if err := p.Sync(ctx); err != nil {
			log.Error(err, "Publishing inventory failed; will retry")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-p.Changes:
			log.V(1).Info("Device change seen, re-inventorying")
		}
	}
}

// Sync takes one inventory and writes the StorageNode status when it changed.
func (p *Publisher) Sync(ctx context.Context) error {
	sn, err := p.ensureStorageNode(ctx)
	if err != nil {
		return err
	}
	rep, invErr := p.Inventory(ctx)
	next := nodeStatus(sn.Status, rep, invErr, p.now(), p.Version)
	if !needsWrite(sn.Status, next, p.Heartbeat) {
		return invErr
	}
	before := sn.DeepCopy()
	sn.Status = next
	if err := p.Client.Status().Patch(ctx, sn, client.MergeFrom(before), client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("patching StorageNode %s status: %w", p.NodeName, err)
	}
	return invErr
}

// ensureStorageNode gets or creates this node's StorageNode, owned by the Node object so
// that it goes away with the node.
func (p *Publisher) ensureStorageNode(ctx context.Context) (*prismv1.StorageNode, error) {
	sn := &prismv1.StorageNode{}
	err := p.Client.Get(ctx, client.ObjectKey{Name: p.NodeName}, sn)
	if err == nil {
		return sn, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting StorageNode %s: %w", p.NodeName, err)
	}
	sn = &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: p.NodeName}}
	node := &corev1.Node{}
	if err := p.Client.Get(ctx, client.ObjectKey{Name: p.NodeName}, node); err == nil {
		sn.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
		}}
	} else if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("getting Node %s: %w", p.NodeName, err)
	}
	if err := p.Client.Create(ctx, sn, client.FieldOwner(FieldManager)); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return sn, p.Client.Get(ctx, client.ObjectKey{Name: p.NodeName}, sn)
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
