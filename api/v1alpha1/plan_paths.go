package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// The node agent and the operator both read a plan with these; they live beside the types so
// that the agent follows the plan without importing the planner.

// PartitionSuffix comes between a device's by-id link and a partition number in the
// partition's link (udev's rule).
const PartitionSuffix = "-part"

// PartitionPath is the udev by-id link of partition number on a device named by its by-id path.
func PartitionPath(stablePath string, number int32) string {
	return stablePath + PartitionSuffix + strconv.Itoa(int(number))
}

// CacheCores are the capacity devices a fast device's cache fronts: the data devices of its
// slots, in slot order (so core ids follow slot indexes as devices are added).
func (f FastDevicePlan) CacheCores() []string {
	var cores []string
	slots := slices.Clone(f.Slots)
	slices.SortFunc(slots, func(a, b DBSlot) int { return int(a.Index - b.Index) })
	for _, s := range slots {
		if s.DataDevice != "" {
			cores = append(cores, s.DataDevice)
		}
	}
	return cores
}

// DBVolumeNames are the LVM volume group and logical volume names of DB slot index on the
// fast device with this stable path (decision 0036):
//
//	VG  prism-db-<h>-NN   h: the first 12 hex digits of SHA-256("prism/lvm/v1\x00" + stablePath)
//	LV  prism-db-NN       NN: the slot index, two digits at least, as the slot's GPT label
//
// The stable path (up to 512 characters, with characters such as '@' and ':' that LVM names
// do not allow) is hashed: the VG name is the same on every reconcile and restart for as long
// as the plan names the device, and differs between the fast devices of a node (VG names are
// host-wide). The agent makes the volumes with these names and the operator names the Rook
// entry's metadataDevice with them, both from the plan alone. Pure.
func DBVolumeNames(stablePath string, index int32) (vg, lv string, err error) {
	if stablePath == "" {
		return "", "", errors.New("DB volume names: no stable path")
	}
	if index < 0 {
		return "", "", fmt.Errorf("DB volume names: slot index %d is negative", index)
	}
	h := sha256.Sum256([]byte("prism/lvm/v1\x00" + stablePath))
	vg = fmt.Sprintf("prism-db-%s-%02d", hex.EncodeToString(h[:6]), index)
	lv = fmt.Sprintf("prism-db-%02d", index)
	return vg, lv, nil
}

// DBVolumePath is the device path of DB slot index's logical volume, /dev/<vg>/<lv>: the form
// Rook hands to ceph-volume's --block.db. "" when the names cannot be made.
func DBVolumePath(stablePath string, index int32) string {
	vg, lv, err := DBVolumeNames(stablePath, index)
	if err != nil {
		return ""
	}
	return "/dev/" + vg + "/" + lv
}

// BehindCache says whether the capacity devices whose DB slots a fast device holds are the
// cores of a cache on it.
func (f FastDevicePlan) BehindCache() bool { return f.Cache != nil }

// OnClaims says whether a node's OSDs are PVC-backed (device sets, decision 0010) rather than
// storage.nodes[] entries: whenever the node runs a cache. Then every capacity device of the
// node goes through claims, also those on a fast device without a cache partition, because
// a storage.nodes[] entry makes Rook's prepare job list every BlueStore device of the node
// (`ceph-volume raw list` with no device) — which would include the cores under the exported
// objects, whose raw devices carry the same BlueStore labels. Such OSDs take their DB slot
// partitions as they are (`ceph-volume raw prepare`), so the agent makes no DB volumes there.
func (p NodePlan) OnClaims() bool {
	if p.Cache != nil {
		return true
	}
	return slices.ContainsFunc(p.FastDevices, FastDevicePlan.BehindCache)
}
