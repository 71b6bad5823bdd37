package rook

import (
	"fmt"
	"strings"
	"time"
)

// Replacement pacing: after Prism releases one re-created OSD to Rook, the next waits until
// Ceph is healthy again and has been through a health change since (the new OSD's backfill),
// or MaxSettle has passed with Ceph healthy; never sooner than MinSettle, which gives Rook
// time to start preparing the OSD before a still-green health is taken as "done".
const (
	MinSettle = 2 * time.Minute
	MaxSettle = 15 * time.Minute
	// HealthOK is the CephCluster status.ceph.health of a healthy cluster.
	HealthOK = "HEALTH_OK"
)

// CephHealth is what a CephCluster's status says about Ceph's health.
type CephHealth struct {
	// Health is status.ceph.health ("" when Rook has not reported yet).
	Health string
	// LastChanged is status.ceph.lastChanged: when the health last changed.
	LastChanged time.Time
}

// Release is the re-created OSD entry Prism last handed to Rook, kept on the CephCluster
// (an annotation) so that pacing survives operator restarts.
type Release struct {
	Node, Device string
	At           time.Time
}

// String is the annotation value.
func (r Release) String() string {
	return r.Node + " " + r.Device + " " + r.At.UTC().Format(time.RFC3339)
}

// ParseRelease reads an annotation value written by Release.String.
func ParseRelease(s string) (Release, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return Release{}, fmt.Errorf("release %q: want \"<node> <device> <RFC 3339 time>\"", s)
	}
	at, err := time.Parse(time.RFC3339, f[2])
	if err != nil {
		return Release{}, fmt.Errorf("release %q: time: %w", s, err)
	}
	return Release{Node: f[0], Device: f[1], At: at}, nil
}

// GateResult is what GateReplacements decided.
type GateResult struct {
	// Entries are the entries to apply: held-back devices keep the entry the CephCluster has.
	Entries []RookNode
	// Released is the device released in this pass (nil when none).
	Released *Release
	// Held lists the devices waiting, with why ("node device: reason").
	Held []string
}

// GateReplacements paces OSDs that must be re-created because their DB slot moved (the fast
// device was replaced, so the planned metadataDevice differs from the one in the
// CephCluster's entry): one at a time, each only while Ceph reports HEALTH_OK and the previous
// one has settled. Devices new to the CephCluster (added disks) and unchanged ones pass
// untouched. existing is the CephCluster's spec.storage.nodes; last is the previous release
// (nil when none). Pure.
func GateReplacements(entries []RookNode, existing []any, health CephHealth, last *Release, now time.Time) GateResult {
	current := existingDevices(existing)
	out := GateResult{}
	free := canRelease(health, last, now)
	for _, n := range entries {
		kept := RookNode{Name: n.Name, Config: n.Config}
		for _, d := range n.Devices {
			old, ok := current[n.Name][d.Name]
			oldMeta := old.metadataDevice
			if !ok || oldMeta == "" || oldMeta == d.Config.MetadataDevice {
				kept.Devices = append(kept.Devices, d)
				continue
			}
			if free == "" {
				kept.Devices = append(kept.Devices, d)
				out.Released = &Release{Node: n.Name, Device: d.Name, At: now}
				free = "another OSD was released in this pass"
				continue
			}
			// Keep the CephCluster's entry as it is until this device's turn, with the DB size it
			// had from its node when the node's new config carries none (its other devices are on
			// logical volumes, which get no size).
			cfg := DeviceConfigOf(old.own)
			if cfg.DatabaseSizeMB == "" && old.databaseSizeMB != "" && n.Config[configDatabaseSizeMB] == "" {
				cfg.DatabaseSizeMB = old.databaseSizeMB
			}
			kept.Devices = append(kept.Devices, RookDevice{Name: d.Name, Config: cfg})
			out.Held = append(out.Held, fmt.Sprintf("%s %s: DB moves from %s to %s; waiting: %s", n.Name, d.Name, oldMeta, d.Config.MetadataDevice, free))
		}
		out.Entries = append(out.Entries, kept)
	}
	return out
}

// canRelease is "" when a re-created OSD may be released now, or why not.
func canRelease(h CephHealth, last *Release, now time.Time) string {
	if h.Health != HealthOK {
		return fmt.Sprintf("Ceph reports %q, not %s", orUnknown(h.Health), HealthOK)
	}
	if last == nil {
		return ""
	}
	since := now.Sub(last.At)
	switch {
	case since < MinSettle:
		return fmt.Sprintf("%s %s was released %s ago (at least %s between OSDs)", last.Node, last.Device, since.Round(time.Second), MinSettle)
	case h.LastChanged.After(last.At) || since >= MaxSettle:
		return ""
	}
	return fmt.Sprintf("%s %s was released %s ago and Ceph's health has not changed since (at most %s)", last.Node, last.Device, since.Round(time.Second), MaxSettle)
}

func orUnknown(s string) string {
	if s == "" {
		return "no health yet"
	}
	return s
}

// existingDevice is a device entry of a CephCluster: its own config, and the
// metadataDevice and databaseSizeMB Rook applies to it (its own, else its node's).
type existingDevice struct {
	own                            map[string]string
	metadataDevice, databaseSizeMB string
}

// ExistingMetadataDevices indexes the metadataDevice Rook applies to each device of a
// CephCluster's spec.storage.nodes: node → device name → metadataDevice ("" when none).
func ExistingMetadataDevices(existing []any) map[string]map[string]string {
	out := map[string]map[string]string{}
	for node, devs := range existingDevices(existing) {
		m := make(map[string]string, len(devs))
		for name, d := range devs {
			m[name] = d.metadataDevice
		}
		out[node] = m
	}
	return out
}

// existingDevices indexes a CephCluster's node entries: node → device name → entry.
func existingDevices(existing []any) map[string]map[string]existingDevice {
	out := map[string]map[string]existingDevice{}
	for _, e := range existing {
		m, _ := e.(map[string]any)
		name, _ := m["name"].(string)
		nodeConfig := strings2(m["config"])
		devs := map[string]existingDevice{}
		list, _ := m["devices"].([]any)
		for _, d := range list {
			dm, _ := d.(map[string]any)
			dn, _ := dm["name"].(string)
			own := strings2(dm["config"])
			meta, size := own[configMetadataDevice], own[configDatabaseSizeMB]
			if meta == "" {
				meta = nodeConfig[configMetadataDevice]
			}
			if size == "" {
				size = nodeConfig[configDatabaseSizeMB]
			}
			devs[dn] = existingDevice{own: own, metadataDevice: meta, databaseSizeMB: size}
		}
		out[name] = devs
	}
	return out
}

func strings2(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}
