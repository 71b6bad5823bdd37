package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Event reasons the agent records on its StorageNode: what it did to the node's devices, and
// what it refused, for an admin to notice (kubectl describe storagenode, kubectl events).
const (
	// EventPartitionsCreated: the agent wrote partitions the plan asked for.
	EventPartitionsCreated = "PartitionsCreated"
	// EventDeviceRefused: the agent will not write a fast device (it holds data, is in use,
	// mounted, read-only...); recorded when the refusal's message changes.
	EventDeviceRefused = "DeviceRefused"
	// EventDBVolumeCreated: the agent made a DB slot's logical volume (decision 0036).
	EventDBVolumeCreated = "DBVolumeCreated"
	// EventDBVolumeRefused: the agent will not make a DB slot's logical volume (LVM that is
	// not Prism's, or a partition no longer proven empty); recorded when the message changes.
	EventDBVolumeRefused = "DBVolumeRefused"
	// EventCacheStarted: a cache came to Running.
	EventCacheStarted = "CacheStarted"
	// EventCacheFailed: a cache's device failed.
	EventCacheFailed = "CacheFailed"
)

// Event actions: what the agent did or refused.
const (
	actionPartition = "Partition"
	actionVolume    = "Volume"
	actionCache     = "Cache"
)

// Event is one event about the agent's StorageNode.
type Event struct {
	Type, Reason, Action, Note string
}

// EventSink records events about a StorageNode (internal/node/agentclient on a cluster).
type EventSink interface {
	RecordEvent(ctx context.Context, sn *prismv1.StorageNode, eventType, reason, action, note string) error
}

// transitions are the events of a status change: each describes a state an admin must
// notice, once, when it is reached, not on every sync. created is true when the agent wrote
// the devices in this sync.
func transitions(before, after prismv1.StorageNodeStatus, created bool) []Event {
	var out []Event
	for _, dev := range devicesOf(after.Partitions) {
		was, now := partitionsOf(before.Partitions, dev), partitionsOf(after.Partitions, dev)
		if msg := refusal(now); msg != "" && msg != refusal(was) {
			out = append(out, Event{Type: "Warning", Reason: EventDeviceRefused, Action: actionPartition, Note: fmt.Sprintf("%s: %s", dev, msg)})
		}
		if ready := newlyReady(was, now); created && len(ready) > 0 {
			out = append(out, Event{Type: "Normal", Reason: EventPartitionsCreated, Action: actionPartition,
				Note: fmt.Sprintf("%s: partitions %s created and ready", dev, strings.Join(ready, ", "))})
		}
	}
	out = append(out, volumeTransitions(before.Partitions, after.Partitions, created)...)
	for _, c := range after.Caches {
		i := slices.IndexFunc(before.Caches, func(b prismv1.CacheStatus) bool { return b.FastDevice == c.FastDevice })
		prev := prismv1.CacheState("")
		if i >= 0 {
			prev = before.Caches[i].State
		}
		switch {
		case c.State == prev:
		case c.State == prismv1.CacheRunning:
			out = append(out, Event{Type: "Normal", Reason: EventCacheStarted, Action: actionCache, Note: fmt.Sprintf("cache %d on %s is running", c.CacheID, c.FastDevice)})
		case c.State == prismv1.CacheFailed:
			out = append(out, Event{Type: "Warning", Reason: EventCacheFailed, Action: actionCache, Note: fmt.Sprintf("cache %d on %s failed: %s", c.CacheID, c.FastDevice, c.Message)})
		}
	}
	return out
}

// volumeTransitions are the events of the DB slots' volumes: made in this sync, or refused
// with a new message.
func volumeTransitions(before, after []prismv1.PartitionStatus, created bool) []Event {
	var out []Event
	for _, p := range after {
		v := p.Volume
		if v == nil {
			continue
		}
		var was prismv1.DBVolumeStatus
		if i := slices.IndexFunc(before, func(b prismv1.PartitionStatus) bool { return b.Device == p.Device && b.Number == p.Number }); i >= 0 && before[i].Volume != nil {
			was = *before[i].Volume
		}
		switch {
		case v.State == prismv1.DBVolumeRefused && (was.State != v.State || was.Message != v.Message):
			out = append(out, Event{Type: "Warning", Reason: EventDBVolumeRefused, Action: actionVolume, Note: fmt.Sprintf("%s partition %d: %s", p.Device, p.Number, v.Message)})
		case v.State == prismv1.DBVolumeReady && was.State != v.State && created:
			out = append(out, Event{Type: "Normal", Reason: EventDBVolumeCreated, Action: actionVolume, Note: fmt.Sprintf("%s partition %d: %s", p.Device, p.Number, v.Message)})
		}
	}
	return out
}

func devicesOf(ps []prismv1.PartitionStatus) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p.Device) {
			out = append(out, p.Device)
		}
	}
	return out
}

func partitionsOf(ps []prismv1.PartitionStatus, dev string) []prismv1.PartitionStatus {
	return slices.DeleteFunc(slices.Clone(ps), func(p prismv1.PartitionStatus) bool { return p.Device != dev })
}

// refusal is the message of a device whose every partition not Ready is refused with it;
// "" otherwise.
func refusal(ps []prismv1.PartitionStatus) string {
	msg := ""
	for _, p := range ps {
		switch {
		case p.State == prismv1.PartitionReady:
		case p.State != prismv1.PartitionRefused:
			return ""
		case msg == "":
			msg = p.Message
		}
	}
	return msg
}

func newlyReady(was, now []prismv1.PartitionStatus) []string {
	var out []string
	for _, p := range now {
		i := slices.IndexFunc(was, func(w prismv1.PartitionStatus) bool { return w.Number == p.Number })
		if p.State == prismv1.PartitionReady && (i < 0 || was[i].State != prismv1.PartitionReady) {
			out = append(out, fmt.Sprintf("%d (%s)", p.Number, p.Label))
		}
	}
	return out
}

// record sends the events; a failure is logged, never fails the sync.
func (p *Publisher) record(ctx context.Context, sn *prismv1.StorageNode, evs []Event) {
	if p.Events == nil {
		return
	}
	for _, ev := range evs {
		if err := p.Events.RecordEvent(ctx, sn, ev.Type, ev.Reason, ev.Action, ev.Note); err != nil {
			logf.FromContext(ctx).Info("Recording an event failed", "node", p.NodeName, "reason", ev.Reason, "error", err.Error())
		}
	}
}
