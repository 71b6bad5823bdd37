package rook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// OSDs on a cache go to Rook as PVC-backed OSDs (docs/decisions/0010-rook-osds-on-cas.md):
// for storage.nodes[] entries with a metadataDevice Rook always runs `ceph-volume lvm`, and
// LVM refuses /dev/casX-Y ("device type is unknown"); for a storageClassDeviceSet with `data`
// and `metadata` claims it runs `ceph-volume raw prepare --data <data> --block.db <metadata>`,
// which needs no LVM. Each capacity device of a node with a cache therefore becomes two
// static local block volumes (its exported object, or itself, and its DB slot) and one device
// set that claims exactly those two.

// ClaimOSD is one capacity device of a node whose OSDs Rook creates from claims: everything
// its two local volumes and its device set are built from.
type ClaimOSD struct {
	// Node is the Kubernetes node name.
	Node string
	// DataDevice is the capacity device's stable path.
	DataDevice string
	// DataPath is the block device the OSD is created on: the cache's exported object
	// (/dev/cas<cache>-<core>) when the device is behind a cache, else DataDevice itself.
	DataPath string
	// Cached is true when DataPath is an exported object.
	Cached bool
	// DataSizeBytes is the capacity device's size (an exported object is as large as its core).
	DataSizeBytes int64
	// FastDevice is the stable path of the fast device holding the DB slot.
	FastDevice string
	// Slot is the DB slot partition's stable path.
	Slot string
	// SlotSizeBytes is the DB slot's size.
	SlotSizeBytes int64
}

// HeldDevice is a capacity device that gets no OSD yet, and why.
type HeldDevice struct {
	DataDevice string
	Reason     string
	// Partial: its size could not be read (its latest inventory record is partial). What it
	// already has, its device set and volumes, stays as it is: a failed read withdraws nothing.
	Partial bool `json:",omitempty"`
}

// ClaimOSDs sorts the capacity devices of a node whose OSDs come from claims.
type ClaimOSDs struct {
	// Ready can have their OSD created: on the exported object of a Ready core, or on the
	// device itself when its fast device runs no cache.
	Ready []ClaimOSD
	// Held wait (no core yet, a core not Ready, a status that contradicts the plan).
	Held []HeldDevice
}

// ClaimOSDsOf sorts every capacity device of a node's plan by whether its OSD can be created
// now, from what the node's agent reports about the cache cores. Pure; sorted by data device.
// A node that is not OnClaims gives nothing.
func ClaimOSDsOf(node string, p prismv1.NodePlan, st prismv1.StorageNodeStatus) ClaimOSDs {
	var out ClaimOSDs
	if !p.OnClaims() {
		return out
	}
	sizes := map[string]int64{}
	var partials map[string]string
	for i := range st.Devices {
		d := &st.Devices[i]
		if d.StablePath == "" {
			continue
		}
		sizes[d.StablePath] = d.SizeBytes
		if msg, ok := d.PartialRecord(); ok {
			if partials == nil {
				partials = map[string]string{}
			}
			partials[d.StablePath] = msg
		}
	}
	for _, f := range p.FastDevices {
		cache := cacheStatusOf(st.Caches, f.StablePath)
		for _, s := range f.Slots {
			if s.DataDevice == "" {
				continue
			}
			osd := ClaimOSD{
				Node: node, DataDevice: s.DataDevice, DataPath: s.DataDevice, DataSizeBytes: sizes[s.DataDevice],
				FastDevice: f.StablePath, Slot: prismv1.PartitionPath(f.StablePath, s.Partition.Number), SlotSizeBytes: f.SlotSizeBytes,
			}
			var reason string
			if f.BehindCache() {
				osd.Cached = true
				osd.DataPath, reason = readyCore(f, cache, s.DataDevice)
			}
			switch {
			case reason != "":
				out.Held = append(out.Held, HeldDevice{DataDevice: s.DataDevice, Reason: reason})
			case osd.DataSizeBytes <= 0 && partials[s.DataDevice] != "":
				out.Held = append(out.Held, HeldDevice{DataDevice: s.DataDevice, Partial: true,
					Reason: "its size could not be read, its latest inventory record is partial (Readable: " + partials[s.DataDevice] + ")"})
			case osd.DataSizeBytes <= 0:
				out.Held = append(out.Held, HeldDevice{DataDevice: s.DataDevice, Reason: "not in the node's inventory"})
			default:
				out.Ready = append(out.Ready, osd)
			}
		}
	}
	sort.Slice(out.Ready, func(i, j int) bool { return out.Ready[i].DataDevice < out.Ready[j].DataDevice })
	sort.Slice(out.Held, func(i, j int) bool { return out.Held[i].DataDevice < out.Held[j].DataDevice })
	return out
}

func cacheStatusOf(caches []prismv1.CacheStatus, fast string) *prismv1.CacheStatus {
	for i := range caches {
		if caches[i].FastDevice == fast {
			return &caches[i]
		}
	}
	return nil
}

// readyCore returns the exported object of a capacity device's core, or why there is none
// usable. The exported object must agree with the plan's cache id and the reported core id:
// a local volume pointing at another core's device would put the OSD on the wrong disk.
func readyCore(f prismv1.FastDevicePlan, cache *prismv1.CacheStatus, dataDevice string) (string, string) {
	if cache == nil {
		return "", "waiting for its cache: the node's agent has not reported it yet"
	}
	var core *prismv1.CacheCoreStatus
	for i := range cache.Cores {
		if cache.Cores[i].Device == dataDevice {
			core = &cache.Cores[i]
		}
	}
	switch {
	case core == nil:
		return "", "not a core of its cache yet"
	case core.State != prismv1.CoreReady:
		reason := "core is " + string(core.State)
		if core.Message != "" {
			reason += ": " + core.Message
		}
		return "", reason
	}
	cacheID, coreID, err := ParseExportedObject(core.ExportedObject)
	switch {
	case err != nil:
		return "", "cores[].exportedObject: " + err.Error()
	case f.CacheID > 0 && cacheID != f.CacheID:
		return "", fmt.Sprintf("exported object %s is in cache %d but the plan gives its fast device cache %d", core.ExportedObject, cacheID, f.CacheID)
	case core.CoreID > 0 && coreID != core.CoreID:
		return "", fmt.Sprintf("exported object %s does not match core id %d", core.ExportedObject, core.CoreID)
	}
	return core.ExportedObject, ""
}

// ParseExportedObject reads an Open CAS exported object path, /dev/cas<cache id>-<core id>,
// with casadm's ranges (cache 1–16384, core 0–4095).
func ParseExportedObject(path string) (cacheID, coreID int32, err error) {
	rest, ok := strings.CutPrefix(path, "/dev/cas")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not /dev/cas<cache>-<core>", path)
	}
	cache, core, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not /dev/cas<cache>-<core>", path)
	}
	ca, err1 := parseID(cache, 1, 16384)
	co, err2 := parseID(core, 0, 4095)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not /dev/cas<cache 1-16384>-<core 0-4095>", path)
	}
	return ca, co, nil
}

func parseID(s string, lo, hi int64) (int32, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a decimal number")
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("out of range")
	}
	return int32(n), nil
}

// DeviceSetName is the storageClassDeviceSet of one capacity device: stable for the device's
// life on the node, at most 37 characters (Rook puts "<set>-metadata-<index>" in a label,
// which allows 63) and a valid DNS label.
func DeviceSetName(node, dataDevice string) string {
	sum := sha256.Sum256([]byte(node + "\n" + dataDevice))
	short := strings.Trim(dnsLabel(node, 20), "-")
	if short == "" {
		return "prism-" + hex.EncodeToString(sum[:])[:10]
	}
	return "prism-" + short + "-" + hex.EncodeToString(sum[:])[:10]
}

// dnsLabel lower-cases s, turns anything outside [a-z0-9-] into '-' and cuts it to n bytes.
func dnsLabel(s string, n int) string {
	b := []byte(strings.ToLower(s))
	if len(b) > n {
		b = b[:n]
	}
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// LabelValue fits a name (node, policy: up to 253 characters) into a label value: unchanged
// when it fits, otherwise its first 50 characters and a hash.
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:50], ".-_") + "-" + hex.EncodeToString(sum[:])[:12]
}
