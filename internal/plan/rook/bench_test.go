package rook

import (
	"fmt"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// plansOf are n node plans as internal/plan lays out its benchmark cluster: 2 fast devices of
// 12 slots of 60 GiB each (one spare), serving 22 capacity devices.
func plansOf(n int) map[string]prismv1.NodePlan {
	plans := make(map[string]prismv1.NodePlan, n)
	for i := range n {
		dev := func(j int) string { return fmt.Sprintf("/dev/disk/by-id/nvme-NODE%04d_DEV%02d", i, j) }
		var p prismv1.NodePlan
		for f := range 2 {
			fp := prismv1.FastDevicePlan{StablePath: dev(f), SlotSizeBytes: 60 * GiB}
			for s := range int32(12) {
				slot := prismv1.DBSlot{Index: s, Partition: prismv1.PlannedPartition{Number: s + 1, StartBytes: MiB + int64(s)*60*GiB, SizeBytes: 60 * GiB}}
				if s < 11 {
					slot.DataDevice = dev(2 + 11*f + int(s))
				}
				fp.Slots = append(fp.Slots, slot)
			}
			p.FastDevices = append(p.FastDevices, fp)
		}
		plans[fmt.Sprintf("node-%04d", i)] = p
	}
	return plans
}

// BenchmarkRookNodes1000x24 makes the Rook entries of 1000 planned nodes: what Decide does on
// every reconcile.
func BenchmarkRookNodes1000x24(b *testing.B) {
	plans := plansOf(1000)
	b.ReportAllocs()
	for b.Loop() {
		if n := RookNodes(plans, "qlc"); len(n) != 1000 {
			b.Fatalf("%d rook nodes", len(n))
		}
	}
}

// BenchmarkRookNodesOnVolumes1000x24 is the same with every DB slot on a logical volume.
func BenchmarkRookNodesOnVolumes1000x24(b *testing.B) {
	plans := plansOf(1000)
	volumes := map[string]map[string]string{}
	for name, p := range plans {
		lv, err := SlotVolumes(p, readyVolumes(p))
		if err != nil || len(lv) != 22 {
			b.Fatalf("%s: %d volumes, %v", name, len(lv), err)
		}
		volumes[name] = lv
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := RookNodesOnVolumes(plans, volumes, "qlc"); len(n) != 1000 || n[0].Config[configDatabaseSizeMB] != "" {
			b.Fatalf("%d rook nodes", len(n))
		}
	}
}

// readyVolumes is the status of an agent that has made every slot's volume of p.
func readyVolumes(p prismv1.NodePlan) prismv1.StorageNodeStatus {
	var st prismv1.StorageNodeStatus
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			st.Partitions = append(st.Partitions, prismv1.PartitionStatus{Device: f.StablePath, Number: s.Partition.Number, State: prismv1.PartitionReady,
				Volume: &prismv1.DBVolumeStatus{Path: prismv1.DBVolumePath(f.StablePath, s.Index), State: prismv1.DBVolumeReady}})
		}
	}
	return st
}
