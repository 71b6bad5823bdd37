package main

import (
	"slices"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestNotDone(t *testing.T) {
	const dev = "/dev/disk/by-id/nvme-FAST"
	slots := dbSlots(&prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: dev,
		Slots: []prismv1.DBSlot{{Partition: prismv1.PlannedPartition{Number: 1}}, {Index: 1, Partition: prismv1.PlannedPartition{Number: 2}}}}}})
	ready := &prismv1.DBVolumeStatus{Path: "/dev/vg/lv", State: prismv1.DBVolumeReady}
	part := func(n int32, st prismv1.PartitionState, v *prismv1.DBVolumeStatus) prismv1.PartitionStatus {
		return prismv1.PartitionStatus{Device: dev, Number: n, State: st, Volume: v}
	}
	for _, tc := range []struct {
		name    string
		o       options
		parts   []prismv1.PartitionStatus
		caches  []prismv1.CacheStatus
		problem string // "" for done
	}{
		{"partitions ready, no volumes asked", options{}, []prismv1.PartitionStatus{part(1, prismv1.PartitionReady, nil), part(2, prismv1.PartitionReady, nil)}, nil, ""},
		{"a partition pending", options{dbVolumes: true}, []prismv1.PartitionStatus{part(1, prismv1.PartitionPending, nil), part(2, prismv1.PartitionReady, ready)}, nil, "partition 1 on " + dev + " is Pending"},
		{"volumes ready", options{dbVolumes: true}, []prismv1.PartitionStatus{part(1, prismv1.PartitionReady, ready), part(2, prismv1.PartitionReady, ready)}, nil, ""},
		{"a slot without a volume", options{dbVolumes: true}, []prismv1.PartitionStatus{part(1, prismv1.PartitionReady, ready), part(2, prismv1.PartitionReady, nil)}, nil, "DB slot partition 2 on " + dev + " has no volume"},
		{"a volume pending", options{dbVolumes: true}, []prismv1.PartitionStatus{part(1, prismv1.PartitionReady, &prismv1.DBVolumeStatus{Path: "/dev/vg/lv", State: prismv1.DBVolumePending, Message: "stopped"}), part(2, prismv1.PartitionReady, ready)}, nil, "the volume /dev/vg/lv of DB slot partition 1 on " + dev + " is Pending: stopped"},
		{"a slot missing from the output", options{dbVolumes: true}, []prismv1.PartitionStatus{part(1, prismv1.PartitionReady, ready)}, nil, "DB slot partition 2 on " + dev + " is not in the output"},
		{"cache stopped, want running", options{}, nil, []prismv1.CacheStatus{{FastDevice: dev, State: prismv1.CacheStopped}}, "the cache on " + dev + " is Stopped, want Running"},
		{"cache stopped with --cache-off", options{cacheOff: true}, nil, []prismv1.CacheStatus{{FastDevice: dev, State: prismv1.CacheStopped}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notDone(tc.o, Output{Partitions: tc.parts, Caches: tc.caches}, slots)
			if tc.problem == "" {
				if len(got) > 0 {
					t.Fatalf("notDone: %q, want none", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, tc.problem) }) {
				t.Fatalf("notDone: %q, want one starting %q", got, tc.problem)
			}
		})
	}
}
