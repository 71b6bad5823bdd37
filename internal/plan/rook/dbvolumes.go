package rook

import (
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// SlotVolumes reads from a node's status which of its plan's occupied DB slots reach Rook as
// logical volumes (decision 0036): the map from each such slot's partition path to its volume's
// path, for RookNodesOnVolumes. A volume counts only when the agent reports it Ready at exactly
// the path the plan gives it (prismv1.DBVolumePath), so the entry never names a device nobody
// has verified. A slot keeps its partition when its status entry has no volume (an agent that
// makes none) or says PartitionInUse (an OSD already has its DB on the partition itself:
// renaming it would hand Rook a new metadata device for that OSD). Any other state, or a Ready
// volume at another path, is an error naming each such slot: the node's entry must wait.
// Nodes with a cache (OnClaims) have no storage.nodes entry and give nothing. Pure.
func SlotVolumes(p prismv1.NodePlan, st prismv1.StorageNodeStatus) (map[string]string, error) {
	if p.OnClaims() || len(st.Partitions) == 0 {
		return nil, nil
	}
	type key struct {
		device string
		number int32
	}
	reported := make(map[key]*prismv1.DBVolumeStatus, len(st.Partitions))
	for i := range st.Partitions {
		ps := &st.Partitions[i]
		reported[key{ps.Device, ps.Number}] = ps.Volume
	}
	var volumes map[string]string
	var unverified []string
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			v := reported[key{f.StablePath, s.Partition.Number}]
			if v == nil || v.State == prismv1.DBVolumePartitionInUse {
				continue
			}
			partition := prismv1.PartitionPath(f.StablePath, s.Partition.Number)
			want := prismv1.DBVolumePath(f.StablePath, s.Index)
			switch {
			case v.State != prismv1.DBVolumeReady:
				unverified = append(unverified, fmt.Sprintf("%s: volume %s%s", partition, v.State, orNothing(": ", v.Message)))
			case want == "" || v.Path != want:
				unverified = append(unverified, fmt.Sprintf("%s: volume Ready at %q, not at %q as planned", partition, v.Path, want))
			default:
				if volumes == nil {
					volumes = map[string]string{}
				}
				volumes[partition] = want
			}
		}
	}
	if n := len(unverified); n > 3 {
		unverified = append(unverified[:3], fmt.Sprintf("and %d more", n-3))
	}
	if len(unverified) > 0 {
		return nil, fmt.Errorf("DB volumes not verified: %s", strings.Join(unverified, "; "))
	}
	return volumes, nil
}

func orNothing(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}
