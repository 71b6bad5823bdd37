package rook

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// RookNode is one entry of a Rook CephCluster's spec.storage.nodes. Settings every device of
// the node shares go into the node's config (Rook applies node config to each device), which
// keeps a CephCluster of thousands of OSDs under the API server's object size limit.
type RookNode struct {
	Name    string            `json:"name"`
	Config  map[string]string `json:"config,omitempty"`
	Devices []RookDevice      `json:"devices"`
}

// RookDevice is one OSD device of a node entry. Rook matches config.metadataDevice against
// the kernel name, /dev/<name> or any udev link of a device (pkg/daemon/ceph/osd/volume.go,
// v1.20), so the fast device's by-id -partN link names the slot across reboots; for a partition
// Rook runs `ceph-volume lvm prepare --data <device> --block.db <partition>`: one OSD per slot.
// A slot the agent has wrapped in a logical volume is named /dev/<vg>/<lv> instead, which Rook
// finds by the same udev links and hands to --block.db the same way (decision 0036).
type RookDevice struct {
	Name   string           `json:"name"`
	Config RookDeviceConfig `json:"config,omitzero"`
}

// RookDeviceConfig is a device entry's config, as Rook reads it: the two keys Prism sets are
// fields, so that a CephCluster of thousands of OSDs costs no map per device, and Other holds
// any further key (or an empty one) of an entry kept as the CephCluster has it
// (GateReplacements). It encodes as the JSON object of all its keys, sorted as a map's are.
type RookDeviceConfig struct {
	// MetadataDevice is config.metadataDevice: the DB slot's partition, or the logical volume
	// on it (RookNodesOnVolumes).
	MetadataDevice string
	// DatabaseSizeMB is config.databaseSizeMB, set on the device when the node's slots differ
	// in size (else on the node); none for a logical volume.
	DatabaseSizeMB string
	// Other are the other keys.
	Other map[string]string
}

// Config keys Prism sets.
const (
	configMetadataDevice = "metadataDevice"
	configDatabaseSizeMB = "databaseSizeMB"
	configDeviceClass    = "deviceClass"
)

// DeviceConfigOf is the config holding exactly the keys of m.
func DeviceConfigOf(m map[string]string) RookDeviceConfig {
	var c RookDeviceConfig
	for k, v := range m {
		switch {
		case k == configMetadataDevice && v != "":
			c.MetadataDevice = v
		case k == configDatabaseSizeMB && v != "":
			c.DatabaseSizeMB = v
		default:
			if c.Other == nil {
				c.Other = make(map[string]string, len(m))
			}
			c.Other[k] = v
		}
	}
	return c
}

// Get is the value of a key ("" when absent).
func (c RookDeviceConfig) Get(key string) string {
	switch {
	case key == configMetadataDevice && c.MetadataDevice != "":
		return c.MetadataDevice
	case key == configDatabaseSizeMB && c.DatabaseSizeMB != "":
		return c.DatabaseSizeMB
	}
	return c.Other[key]
}

// Map returns every key in a new map.
func (c RookDeviceConfig) Map() map[string]string {
	m := make(map[string]string, len(c.Other)+2)
	for k, v := range c.Other {
		m[k] = v
	}
	if c.MetadataDevice != "" {
		m[configMetadataDevice] = c.MetadataDevice
	}
	if c.DatabaseSizeMB != "" {
		m[configDatabaseSizeMB] = c.DatabaseSizeMB
	}
	return m
}

// IsZero says whether the config has no key (it is then left out of its entry's JSON).
func (c RookDeviceConfig) IsZero() bool {
	return c.MetadataDevice == "" && c.DatabaseSizeMB == "" && len(c.Other) == 0
}

// MarshalJSON encodes the config as the object of its keys.
func (c RookDeviceConfig) MarshalJSON() ([]byte, error) { return json.Marshal(c.Map()) }

// UnmarshalJSON reads an object of string values.
func (c *RookDeviceConfig) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = DeviceConfigOf(m)
	return nil
}

// RookNodes turns node plans into Rook storage entries, one device per occupied DB slot,
// sorted by node and data device so that the same plans always give the same object.
// Nodes with a cache are left out: their OSDs are PVC-backed (OnClaims, DeviceSet).
// Every slot is named by its partition; RookNodesOnVolumes names logical volumes.
func RookNodes(plans map[string]prismv1.NodePlan, deviceClass string) []RookNode {
	return RookNodesOnVolumes(plans, nil, deviceClass)
}

// RookNodesOnVolumes is RookNodes where DB slots reach Rook as logical volumes (decision
// 0036): volumes maps a node to its slots' partition paths and, for each, the volume path its
// entry names instead (SlotVolumes). Such a device gets no databaseSizeMB: ceph-volume uses an
// existing LV whole. Slots not in the map keep their partition and its size.
func RookNodesOnVolumes(plans map[string]prismv1.NodePlan, volumes map[string]map[string]string, deviceClass string) []RookNode {
	nodes := make([]RookNode, 0, len(plans))
	for name, p := range plans {
		slots := slotEntries(p)
		onVolumes(slots, volumes[name])
		if n, ok := rookNode(name, p, deviceClass, slots); ok {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes
}

// onVolumes renames the slots whose partition has a volume in lv to that volume.
func onVolumes(slots []RookDevice, lv map[string]string) {
	if len(lv) == 0 {
		return
	}
	for i := range slots {
		if v, ok := lv[slots[i].Config.MetadataDevice]; ok {
			slots[i].Config.MetadataDevice, slots[i].Config.DatabaseSizeMB = v, ""
		}
	}
}

// rookNode is the entry of one node, false when the node has no OSD for storage.nodes.
// slots are the plan's slotEntries, which the entry keeps as its devices.
func rookNode(name string, p prismv1.NodePlan, deviceClass string, slots []RookDevice) (RookNode, bool) {
	if p.OnClaims() || len(slots) == 0 {
		return RookNode{}, false
	}
	n := RookNode{Name: name, Devices: slots}
	// Settings every device shares go to the node config (Rook applies it to each device).
	n.Config = make(map[string]string, 2)
	if deviceClass != "" {
		n.Config[configDeviceClass] = deviceClass
	}
	// Only a size every device has: one on logical volumes has none, and would inherit it.
	if sameSize(n.Devices) && n.Devices[0].Config.DatabaseSizeMB != "" {
		n.Config[configDatabaseSizeMB] = n.Devices[0].Config.DatabaseSizeMB
		for i := range n.Devices {
			n.Devices[i].Config.DatabaseSizeMB = ""
		}
	}
	return n, true
}

func sameSize(devs []RookDevice) bool {
	for _, d := range devs[1:] {
		if d.Config.DatabaseSizeMB != devs[0].Config.DatabaseSizeMB {
			return false
		}
	}
	return true
}

// slotEntries are the occupied DB slots of p as Rook device entries, sorted by data device
// (slots of one device in plan order): metadataDevice is the slot's partition path
// (prismv1.PartitionPath) and databaseSizeMB its size. The Rook entry's devices and the
// selection's dbSlot are both read from them, so that a node's slots are named and sorted
// once, and the paths are cut from one string.
func slotEntries(p prismv1.NodePlan) []RookDevice {
	// Sort references to the slots, not the entries: moving entries, which hold pointers,
	// costs the garbage collector's write barriers.
	var stack [256]slotRef
	refs := stack[:0]
	for i, f := range p.FastDevices {
		for j, s := range f.Slots {
			if s.DataDevice != "" {
				refs = append(refs, slotRef{int32(i), int32(j)})
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	slot := func(r slotRef) *prismv1.DBSlot { return &p.FastDevices[r.fast].Slots[r.slot] }
	slices.SortStableFunc(refs, func(a, b slotRef) int { return strings.Compare(slot(a).DataDevice, slot(b).DataDevice) })
	size := 0
	for _, r := range refs {
		size += len(p.FastDevices[r.fast].StablePath) + len(partitionSuffix(slot(r).Partition.Number))
	}
	var b strings.Builder
	b.Grow(size)
	for _, r := range refs {
		b.WriteString(p.FastDevices[r.fast].StablePath)
		b.WriteString(partitionSuffix(slot(r).Partition.Number))
	}
	all, at := b.String(), 0
	devs := make([]RookDevice, len(refs))
	mib, sizeMB := int64(-1), ""
	for i, r := range refs {
		f, s := &p.FastDevices[r.fast], slot(r)
		if m := f.SlotSizeBytes / prismv1.MiB; m != mib {
			mib, sizeMB = m, strconv.FormatInt(m, 10)
		}
		end := at + len(f.StablePath) + len(partitionSuffix(s.Partition.Number))
		devs[i] = RookDevice{Name: s.DataDevice, Config: RookDeviceConfig{MetadataDevice: all[at:end], DatabaseSizeMB: sizeMB}}
		at = end
	}
	return devs
}

// slotRef is a slot of a plan: fast device and slot, by index.
type slotRef struct{ fast, slot int32 }

// partitionSuffix is what prismv1.PartitionPath appends to a device's path for partition
// number, from a table for the numbers a GPT can have.
func partitionSuffix(number int32) string {
	if number >= 0 && int(number) < len(partitionSuffixes) {
		return partitionSuffixes[number]
	}
	return prismv1.PartitionSuffix + strconv.Itoa(int(number))
}

var partitionSuffixes = func() []string {
	s := make([]string, 129)
	for i := range s {
		s[i] = prismv1.PartitionSuffix + strconv.Itoa(i)
	}
	return s
}()

// MinAllocSize picks bluestore_min_alloc_size for the capacity devices: their common
// internal write unit. It refuses when they disagree or one is unknown, because the value is
// fixed for an OSD's lifetime and a wrong guess costs capacity or endurance.
func MinAllocSize(devices []prismv1.Device) (int64, error) {
	var iu int64
	for _, d := range devices {
		switch {
		case d.InternalWriteUnitBytes == 0:
			return 0, fmt.Errorf("%s (%s) has no known internal write unit", d.Name, d.Model)
		case iu != 0 && d.InternalWriteUnitBytes != iu:
			return 0, fmt.Errorf("capacity devices disagree on the internal write unit (%d and %d bytes)", iu, d.InternalWriteUnitBytes)
		}
		iu = d.InternalWriteUnitBytes
	}
	if iu == 0 {
		return 0, fmt.Errorf("no capacity devices")
	}
	return iu, nil
}

// CephConfigSection is the Rook cephConfig "who" under which bluestore_min_alloc_size takes
// effect when an OSD is created. Measured on real Ceph 16.2.15 (test/ceph): a device-class mask
// (osd/class:qlc) does NOT apply at mkfs — `ceph-osd --mkfs` fetches its configuration as
// client.?, and the monitor resolves class masks only for osd.N — so the value must go in the
// plain osd section, where it also applies to other OSDs created while it is set
// (docs/decisions/0007-min-alloc-size.md). The device class is kept in the signature for when
// Ceph resolves masks at mkfs.
func CephConfigSection(deviceClass string) string { return "osd" }

// MergeRookNodes replaces, in a CephCluster's spec.storage.nodes, the entries of the nodes a
// policy manages (those it managed before and those it manages now) with its new entries,
// and keeps every other entry exactly as it was, in its place. Rook declares the list atomic,
// so whoever applies it applies all of it: Prism re-applies foreign entries verbatim.
func MergeRookNodes(existing []any, previouslyManaged []string, prism []RookNode) ([]any, error) {
	names := append([]string(nil), previouslyManaged...)
	for _, n := range prism {
		names = append(names, n.Name)
	}
	merged, err := KeepOthers(existing, "spec.storage.nodes", names)
	if err != nil {
		return nil, err
	}
	for _, n := range prism {
		devices := make([]any, 0, len(n.Devices))
		for _, d := range n.Devices {
			cfg := map[string]any{}
			for k, v := range d.Config.Map() {
				cfg[k] = v
			}
			devices = append(devices, map[string]any{"name": d.Name, "config": cfg})
		}
		entry := map[string]any{"name": n.Name, "devices": devices}
		if len(n.Config) > 0 {
			cfg := map[string]any{}
			for k, v := range n.Config {
				cfg[k] = v
			}
			entry["config"] = cfg
		}
		merged = append(merged, entry)
	}
	return merged, nil
}

// KeepOthers returns the entries of an atomic Rook list whose name is not in names, in order.
func KeepOthers(existing []any, field string, names []string) ([]any, error) {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	kept := []any{}
	for i, e := range existing {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is not an object", field, i)
		}
		if name, _ := m["name"].(string); !drop[name] {
			kept = append(kept, m)
		}
	}
	return kept, nil
}
