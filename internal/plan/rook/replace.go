package rook

import (
	"fmt"
	"strings"
	"time"
)

// Replacement pacing: after Prism releases one re-created OSD to Rook, the next waits until
// Ceph's health has changed since (the new OSD's backfill) or MaxSettle has passed; never
// sooner than MinSettle, which gives Rook time to start preparing the OSD before Ceph's
// answers, still as before, are taken as "done".
const (
	MinSettle = 2 * time.Minute
	MaxSettle = 15 * time.Minute
)

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
	// HeldNew lists the new drives not written yet, with why ("node device: reason").
	HeldNew []string
	// Destroyed maps each node whose new drives wait on OSDs destroyed under its CRUSH host to
	// the hold's message, which names the ids and the purge (decision 0061).
	Destroyed map[string]string
	// Awaiting are the devices of Held and HeldNew by node, in the order the gate judges them:
	// the drives Ceph's answers must cover (the probe's PRISM_DEVICES, decision 0057).
	Awaiting map[string][]ProbeDrive
}

// GateInput is what GateReplacements reads, all of it observed before.
type GateInput struct {
	// Entries are the planned entries; Existing the CephCluster's spec.storage.nodes.
	Entries  []RookNode
	Existing []any
	// Answers are Ceph's answers per node (Input.Answers); Kernel maps node → device path
	// (stable path) → kernel name, from the node's inventory, to find the device in Ceph's.
	Answers map[string]CephAnswers
	Kernel  map[string]map[string]string
	// Ignore are health check codes the policy says never hold (spec.osd.ignoreHealthChecks).
	Ignore []string
	// LastChanged is the CephCluster's status.ceph.lastChanged; Last the previous release
	// (nil when none).
	LastChanged time.Time
	Last        *Release
	Now         time.Time
}

// GateReplacements paces OSDs that must be re-created because their DB slot moved (the fast
// device was replaced, so the planned metadataDevice differs from the one in the
// CephCluster's entry): one at a time, each only when Ceph's own answers for its node say the
// OSD on its data device can go without making data unavailable (cephAllows) and the previous
// one has settled (its backfill done: every PG active+clean, backfilled). Unchanged devices pass
// untouched, and so do new ones, except on a node with entries, whose new drives wait until
// Ceph's answers say no OSD is destroyed under its CRUSH host (newDriveAllows). Pure.
func GateReplacements(in GateInput) GateResult {
	current := existingDevices(in.Existing)
	out := GateResult{}
	paced := settled(in.LastChanged, in.Last, in.Now)
	since, sinceWhat := answersSince(in.LastChanged, in.Last)
	for _, n := range in.Entries {
		kept := RookNode{Name: n.Name, Config: n.Config}
		_, hasEntry := current[n.Name]
		for _, d := range n.Devices {
			old, ok := current[n.Name][d.Name]
			if !ok && hasEntry {
				// A new drive of a node with entries waits while its CRUSH host may hold a
				// destroyed id (decision 0061); a new node has no OSD and no CRUSH host yet.
				a, found := in.Answers[n.Name]
				if why, destroyed := newDriveAllows(a, found, n.Name, in.Now); why != "" {
					if destroyed {
						if out.Destroyed == nil {
							out.Destroyed = map[string]string{}
						}
						out.Destroyed[n.Name] = why
					}
					out.await(n.Name, ProbeDrive{Path: d.Name, Kernel: in.Kernel[n.Name][d.Name]})
					out.HeldNew = append(out.HeldNew, fmt.Sprintf("%s %s: a new drive; waiting: %s", n.Name, d.Name, why))
					continue
				}
			}
			oldMeta := old.metadataDevice
			if !ok || oldMeta == "" || oldMeta == d.Config.MetadataDevice {
				kept.Devices = append(kept.Devices, d)
				continue
			}
			why := paced
			if why == "" && out.Released != nil {
				why = "another OSD was released in this pass"
			}
			a, found := in.Answers[n.Name]
			if why == "" {
				why = answeredSince(a, found, n.Name, since, sinceWhat)
			}
			if why == "" {
				why = cephAllows(a, found, n.Name, d.Name, in.Kernel[n.Name][d.Name], in.Ignore, in.Now)
			}
			if why == "" {
				why = backfilled(a, in.Last)
			}
			if why == "" {
				kept.Devices = append(kept.Devices, d)
				out.Released = &Release{Node: n.Name, Device: d.Name, At: in.Now}
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
			out.await(n.Name, ProbeDrive{Path: d.Name, Kernel: in.Kernel[n.Name][d.Name]})
			out.Held = append(out.Held, fmt.Sprintf("%s %s: DB moves from %s to %s; waiting: %s", n.Name, d.Name, oldMeta, d.Config.MetadataDevice, why))
		}
		if len(kept.Devices) == 0 {
			// Every planned drive of the node is new and held: its entry stays as the
			// CephCluster has it (an entry without devices would not mean "none" to Rook).
			kept = existingNode(in.Existing, n.Name)
		}
		out.Entries = append(out.Entries, kept)
	}
	return out
}

// await adds a held drive to the ones Ceph's answers must cover, in the gate's order.
func (r *GateResult) await(node string, d ProbeDrive) {
	if r.Awaiting == nil {
		r.Awaiting = map[string][]ProbeDrive{}
	}
	r.Awaiting[node] = append(r.Awaiting[node], d)
}

// existingNode is the CephCluster's entry of a node, as it is.
func existingNode(existing []any, name string) RookNode {
	for _, e := range existing {
		m, _ := e.(map[string]any)
		if n, _ := m["name"].(string); n != name {
			continue
		}
		node := RookNode{Name: name}
		if cfg := strings2(m["config"]); len(cfg) > 0 {
			node.Config = cfg
		}
		list, _ := m["devices"].([]any)
		for _, d := range list {
			dm, _ := d.(map[string]any)
			dn, _ := dm["name"].(string)
			node.Devices = append(node.Devices, RookDevice{Name: dn, Config: DeviceConfigOf(strings2(dm["config"]))})
		}
		return node
	}
	return RookNode{Name: name}
}

// settled is "" when the previous release (nil: none) has settled, or why not.
func settled(lastChanged time.Time, last *Release, now time.Time) string {
	if last == nil {
		return ""
	}
	since := now.Sub(last.At)
	switch {
	case since < MinSettle:
		return fmt.Sprintf("%s %s was released %s ago (at least %s between OSDs)", last.Node, last.Device, since.Round(time.Second), MinSettle)
	case lastChanged.After(last.At) || since >= MaxSettle:
		return ""
	}
	return fmt.Sprintf("%s %s was released %s ago and Ceph's health has not changed since (at most %s)", last.Node, last.Device, since.Round(time.Second), MaxSettle)
}

// answersSince is the time Ceph's answers must not predate to judge the next release: the
// previous release, or the health change that settled it (its OSD came up and its PGs began to
// move). Answers from before it describe the cluster without that OSD: the mgr's PG map, read
// before, says every PG is active+clean (test/ceph's fast-device drill saw it seconds after an
// OSD came up). Zero when nothing was released.
func answersSince(lastChanged time.Time, last *Release) (time.Time, string) {
	switch {
	case last == nil:
		return time.Time{}, ""
	case lastChanged.After(last.At):
		return lastChanged, "Ceph's health changed after " + last.Node + " " + last.Device + " was released"
	}
	return last.At, last.Node + " " + last.Device + " was released"
}

// answeredSince is "" when the node's answers are not older than since (zero: any age), else
// why they cannot judge the release.
func answeredSince(a CephAnswers, found bool, node string, since time.Time, what string) string {
	if !found || since.IsZero() || !a.At.Before(since) {
		return ""
	}
	return fmt.Sprintf("Ceph's answers for %s are from %s, before %s at %s", node, a.At.UTC().Format(time.RFC3339), what, since.UTC().Format(time.RFC3339))
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
