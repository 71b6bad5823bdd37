package plan

import (
	"fmt"
	"sort"
	"strconv"

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
type RookDevice struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config,omitempty"`
}

// RookNodes turns node plans into Rook storage entries, one device per occupied DB slot,
// sorted by node and data device so that the same plans always give the same object.
// Nodes with a cache are left out: their OSDs are PVC-backed (OnClaims, DeviceSet).
func RookNodes(plans map[string]prismv1.NodePlan, deviceClass string) []RookNode {
	nodes := make([]RookNode, 0, len(plans))
	for name, p := range plans {
		if n, ok := rookNode(name, p, deviceClass); ok {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes
}

// rookNode is the entry of one node, false when the node has no OSD for storage.nodes.
func rookNode(name string, p prismv1.NodePlan, deviceClass string) (RookNode, bool) {
	if OnClaims(p) {
		return RookNode{}, false
	}
	slots := 0
	for _, f := range p.FastDevices {
		slots += len(f.Slots)
	}
	n := RookNode{Name: name, Devices: make([]RookDevice, 0, slots)}
	sizes := make([]string, 0, slots)
	for _, f := range p.FastDevices {
		size := strconv.FormatInt(f.SlotSizeBytes/MiB, 10)
		for _, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			// Room for databaseSizeMB too, when the node's slots differ in size.
			cfg := make(map[string]string, 2)
			cfg["metadataDevice"] = prismv1.PartitionPath(f.StablePath, s.Partition.Number)
			n.Devices = append(n.Devices, RookDevice{Name: s.DataDevice, Config: cfg})
			sizes = append(sizes, size)
		}
	}
	if len(n.Devices) == 0 {
		return RookNode{}, false
	}
	// Settings every device shares go to the node config (Rook applies it to each device).
	n.Config = map[string]string{}
	if deviceClass != "" {
		n.Config["deviceClass"] = deviceClass
	}
	if allEqual(sizes) {
		n.Config["databaseSizeMB"] = sizes[0]
	} else {
		for i := range n.Devices {
			n.Devices[i].Config["databaseSizeMB"] = sizes[i]
		}
	}
	sort.Slice(n.Devices, func(i, j int) bool { return n.Devices[i].Name < n.Devices[j].Name })
	return n, true
}

func allEqual(s []string) bool {
	for _, v := range s[1:] {
		if v != s[0] {
			return false
		}
	}
	return true
}

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
			for k, v := range d.Config {
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
