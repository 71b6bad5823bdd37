package rook

import (
	"reflect"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

const volFast = "/dev/disk/by-id/nvme-A"

// volumePlan has two occupied slots on volFast (indexes 0 and 1, partitions 1 and 2, for q1 and
// q2) and a free one (index 2, partition 3).
func volumePlan() prismv1.NodePlan {
	return prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: volFast, SlotSizeBytes: 60 * GiB, Slots: []prismv1.DBSlot{
		{Index: 0, Partition: prismv1.PlannedPartition{Number: 1}, DataDevice: "/dev/disk/by-id/q1"},
		{Index: 1, Partition: prismv1.PlannedPartition{Number: 2}, DataDevice: "/dev/disk/by-id/q2"},
		{Index: 2, Partition: prismv1.PlannedPartition{Number: 3}},
	}}}}
}

// partitionsOf is a status reporting each of volFast's partitions 1, 2, 3 Ready with the volume given
// (nil: none).
func partitionsOf(volumes ...*prismv1.DBVolumeStatus) prismv1.StorageNodeStatus {
	var st prismv1.StorageNodeStatus
	for i, v := range volumes {
		n := int32(i + 1)
		st.Partitions = append(st.Partitions, prismv1.PartitionStatus{Device: volFast, Number: n, Path: prismv1.PartitionPath(volFast, n),
			State: prismv1.PartitionReady, Volume: v})
	}
	return st
}

func volumeStatus(state prismv1.DBVolumeState, path string) *prismv1.DBVolumeStatus {
	return &prismv1.DBVolumeStatus{Path: path, State: state, Message: "lvm says so"}
}

func TestSlotVolumes(t *testing.T) {
	lv0, lv1, lv2 := prismv1.DBVolumePath(volFast, 0), prismv1.DBVolumePath(volFast, 1), prismv1.DBVolumePath(volFast, 2)
	part1, part2 := prismv1.PartitionPath(volFast, 1), prismv1.PartitionPath(volFast, 2)
	cached := volumePlan()
	cached.FastDevices[0].Cache = &prismv1.PlannedPartition{Number: 4}
	tests := []struct {
		name    string
		plan    prismv1.NodePlan
		status  prismv1.StorageNodeStatus
		want    map[string]string
		problem []string // substrings of the error; nil: no error
	}{
		{"no partitions reported: every slot keeps its partition", volumePlan(), prismv1.StorageNodeStatus{}, nil, nil},
		{"an agent that makes no volumes", volumePlan(), partitionsOf(nil, nil, nil), nil, nil},
		{"every volume Ready where planned", volumePlan(), partitionsOf(volumeStatus(prismv1.DBVolumeReady, lv0), volumeStatus(prismv1.DBVolumeReady, lv1), volumeStatus(prismv1.DBVolumePending, lv2)),
			map[string]string{part1: lv0, part2: lv1}, nil},
		{"a partition an OSD already uses keeps its partition", volumePlan(), partitionsOf(volumeStatus(prismv1.DBVolumePartitionInUse, ""), volumeStatus(prismv1.DBVolumeReady, lv1)),
			map[string]string{part2: lv1}, nil},
		{"a Ready volume at another path is not named", volumePlan(), partitionsOf(volumeStatus(prismv1.DBVolumeReady, lv0), volumeStatus(prismv1.DBVolumeReady, "/dev/other/lv")),
			nil, []string{part2 + `: volume Ready at "/dev/other/lv", not at "` + lv1 + `" as planned`}},
		{"a Ready volume without a path is not named", volumePlan(), partitionsOf(volumeStatus(prismv1.DBVolumeReady, ""), nil),
			nil, []string{part1 + `: volume Ready at ""`}},
		{"Pending, Refused and Failed volumes make the node wait, each named", volumePlan(), partitionsOf(volumeStatus(prismv1.DBVolumePending, lv0), volumeStatus(prismv1.DBVolumeRefused, lv1)),
			nil, []string{"DB volumes not verified", part1 + ": volume Pending: lvm says so", part2 + ": volume Refused: lvm says so"}},
		{"a Failed volume", volumePlan(), partitionsOf(nil, volumeStatus(prismv1.DBVolumeFailed, lv1)),
			nil, []string{part2 + ": volume Failed"}},
		{"the free slot's volume is not looked at", volumePlan(), partitionsOf(nil, nil, volumeStatus(prismv1.DBVolumeFailed, lv2)), nil, nil},
		{"a volume reported for another device is not this slot's", volumePlan(), func() prismv1.StorageNodeStatus {
			st := partitionsOf(volumeStatus(prismv1.DBVolumeFailed, lv0))
			st.Partitions[0].Device = "/dev/disk/by-id/nvme-B"
			return st
		}(), nil, nil},
		{"a node on a cache has no storage.nodes entry", cached, partitionsOf(volumeStatus(prismv1.DBVolumeFailed, lv0)), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SlotVolumes(tc.plan, tc.status)
			if tc.problem == nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("SlotVolumes = %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if err == nil || got != nil {
				t.Fatalf("SlotVolumes = %v, %v; want an error", got, err)
			}
			for _, p := range tc.problem {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q lacks %q", err, p)
				}
			}
		})
	}
}

// Many unverified slots are summarised, so that the condition stays readable.
func TestSlotVolumesSummarises(t *testing.T) {
	p := prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: volFast}}}
	var vols []*prismv1.DBVolumeStatus
	for i := range 6 {
		p.FastDevices[0].Slots = append(p.FastDevices[0].Slots, prismv1.DBSlot{Index: int32(i), Partition: prismv1.PlannedPartition{Number: int32(i + 1)}, DataDevice: "q"})
		vols = append(vols, volumeStatus(prismv1.DBVolumePending, ""))
	}
	_, err := SlotVolumes(p, partitionsOf(vols...))
	if err == nil || !strings.HasSuffix(err.Error(), "; and 3 more") || strings.Count(err.Error(), "Pending") != 3 {
		t.Errorf("error %v, want three slots and 3 more", err)
	}
}

func TestRookNodesOnVolumes(t *testing.T) {
	lv0, lv1 := prismv1.DBVolumePath(volFast, 0), prismv1.DBVolumePath(volFast, 1)
	part1, part2 := prismv1.PartitionPath(volFast, 1), prismv1.PartitionPath(volFast, 2)
	type dev struct{ name, meta, size string }
	tests := []struct {
		name     string
		volumes  map[string]string
		nodeSize string // the node's databaseSizeMB ("": none)
		devices  []dev
	}{
		{"no volumes: partitions, the shared size on the node", nil, "61440",
			[]dev{{"/dev/disk/by-id/q1", part1, ""}, {"/dev/disk/by-id/q2", part2, ""}}},
		{"every slot on a volume: no size anywhere", map[string]string{part1: lv0, part2: lv1}, "",
			[]dev{{"/dev/disk/by-id/q1", lv0, ""}, {"/dev/disk/by-id/q2", lv1, ""}}},
		{"one slot on a volume: the partition keeps its size on the device", map[string]string{part2: lv1}, "",
			[]dev{{"/dev/disk/by-id/q1", part1, "61440"}, {"/dev/disk/by-id/q2", lv1, ""}}},
		{"a volume for a partition the plan does not name changes nothing", map[string]string{prismv1.PartitionPath(volFast, 3): "/dev/x/y"}, "61440",
			[]dev{{"/dev/disk/by-id/q1", part1, ""}, {"/dev/disk/by-id/q2", part2, ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := RookNodesOnVolumes(map[string]prismv1.NodePlan{"a": volumePlan(), "b": volumePlan()}, map[string]map[string]string{"a": tc.volumes}, "qlc")
			if len(nodes) != 2 || nodes[0].Name != "a" {
				t.Fatalf("nodes %+v", nodes)
			}
			n := nodes[0]
			if size, ok := n.Config["databaseSizeMB"]; size != tc.nodeSize || ok != (tc.nodeSize != "") || n.Config["deviceClass"] != "qlc" {
				t.Errorf("node config %v, want databaseSizeMB %q", n.Config, tc.nodeSize)
			}
			var got []dev
			for _, d := range n.Devices {
				got = append(got, dev{d.Name, d.Config.MetadataDevice, d.Config.DatabaseSizeMB})
			}
			if !reflect.DeepEqual(got, tc.devices) {
				t.Errorf("devices %v, want %v", got, tc.devices)
			}
			// Another node's volumes are not this node's.
			if b := nodes[1]; b.Devices[0].Config.MetadataDevice != part1 || b.Config["databaseSizeMB"] != "61440" {
				t.Errorf("node b: %+v", b)
			}
			if plain := RookNodes(map[string]prismv1.NodePlan{"a": volumePlan()}, "qlc"); !reflect.DeepEqual(plain[0].Devices[0].Config.MetadataDevice, part1) {
				t.Errorf("RookNodes names %v", plain[0].Devices)
			}
		})
	}
}

// Whatever an agent (or anyone who can write a StorageNode's status) reports, SlotVolumes names
// only the planned volume of an occupied slot the status reports Ready at exactly that path.
func FuzzSlotVolumes(f *testing.F) {
	f.Add(uint8(1), string(prismv1.DBVolumeReady), prismv1.DBVolumePath(volFast, 0), volFast)
	f.Add(uint8(2), string(prismv1.DBVolumePartitionInUse), "", volFast)
	f.Add(uint8(1), string(prismv1.DBVolumeReady), "/dev/vg/lv", volFast+"x")
	f.Add(uint8(3), "", "", "")
	f.Fuzz(func(t *testing.T, number uint8, state, path, device string) {
		p := volumePlan()
		st := partitionsOf(nil, nil, nil)
		st.Partitions = append(st.Partitions, prismv1.PartitionStatus{Device: device, Number: int32(number),
			Volume: &prismv1.DBVolumeStatus{State: prismv1.DBVolumeState(state), Path: path}})
		volumes, err := SlotVolumes(p, st)
		if err != nil && volumes != nil {
			t.Fatalf("volumes %v with error %v", volumes, err)
		}
		for part, lv := range volumes {
			ok := false
			for _, s := range p.FastDevices[0].Slots {
				ok = ok || (s.DataDevice != "" && part == prismv1.PartitionPath(volFast, s.Partition.Number) &&
					lv == prismv1.DBVolumePath(volFast, s.Index) && lv == path && state == string(prismv1.DBVolumeReady))
			}
			if !ok {
				t.Errorf("%s named %s from a report of %q at %q", part, lv, state, path)
			}
		}
	})
}
