package agent

import (
	"context"
	"slices"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/provision"
)

// reasonSink keeps the reason of each event recorded.
type reasonSink struct{ reasons []string }

func (s *reasonSink) RecordEvent(_ context.Context, _ *prismv1.StorageNode, _, reason, _, _ string) error {
	s.reasons = append(s.reasons, reason)
	return nil
}

// TestSyncActivationCreatesNothing: a pass that only activated the slots' LVs (a node whose
// fast device came back after a reboot, on a host that does not autoactivate: the reboot
// drill's second boot) changed the kernel's view but wrote nothing, so its partitions and
// volumes going from Pending (the device absent) to Ready raise no PartitionsCreated or
// DBVolumeCreated event; a pass that wrote them does.
func TestSyncActivationCreatesNothing(t *testing.T) {
	sn := storageNode(3, prismv1.ModeApply)
	sn.Status.ObservedPlanGeneration = 3
	sn.Status.Partitions = parts(prismv1.PartitionPending)
	f := newAgentFixture(t, sn)
	events := &reasonSink{}
	f.p.Events = events
	// lvchange --activate y ran: the devices changed as the kernel sees them, none was written.
	f.provisionOut = provision.Result{Partitions: withVolumes(parts(prismv1.PartitionReady), prismv1.DBVolumeReady), Changed: true}
	if err := f.p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range events.reasons {
		if r == EventPartitionsCreated || r == EventDBVolumeCreated {
			t.Errorf("an activation recorded %s (events %v): nothing was created", r, events.reasons)
		}
	}

	// The same transition in a pass that wrote the table and made the volume.
	sn = storageNode(3, prismv1.ModeApply)
	sn.Status.ObservedPlanGeneration = 3
	sn.Status.Partitions = parts(prismv1.PartitionPending)
	f = newAgentFixture(t, sn)
	events = &reasonSink{}
	f.p.Events = events
	f.provisionOut = provision.Result{Partitions: withVolumes(parts(prismv1.PartitionReady), prismv1.DBVolumeReady), Changed: true, Wrote: true}
	if err := f.p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{EventPartitionsCreated, EventDBVolumeCreated}; !slices.Equal(events.reasons, want) {
		t.Errorf("a pass that wrote recorded %v, want %v", events.reasons, want)
	}
}
