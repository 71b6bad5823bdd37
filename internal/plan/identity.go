package plan

import (
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// plannedIdentity is the identity a fast device's plan carries: the one it already has (a
// plan names the drive it was made for, whatever later answers to its by-id name), else the
// identity of the device's inventory record, without the diskseq that changes at every boot.
// A mismatch is a warning: the plan stays, and the agent writes nothing to the device.
func plannedIdentity(path string, prev *prismv1.FastDevicePlan, devices []prismv1.Device, out *Layout) *prismv1.DeviceIdentity {
	var now *prismv1.DeviceIdentity
	for i := range devices {
		if devices[i].StablePath == path && devices[i].Identity != nil {
			now = stableIdentity(devices[i].Identity)
			break
		}
	}
	if prev == nil || prev.Identity == nil {
		return now
	}
	if now != nil && *now != *prev.Identity {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s now reports %s, but it was planned as %s: the agent writes nothing to it; if the drive was replaced on purpose, follow docs/runbooks/replace-fast-device.md",
			path, identityString(now), identityString(prev.Identity)))
	}
	return prev.Identity.DeepCopy()
}

func stableIdentity(id *prismv1.DeviceIdentity) *prismv1.DeviceIdentity {
	s := prismv1.DeviceIdentity{WWID: id.WWID, Serial: id.Serial, BackingFile: id.BackingFile}
	if s == (prismv1.DeviceIdentity{}) {
		return nil
	}
	return &s
}

// identityKey is what two devices share only when they report the same identity ("" when a
// device reports none): the WWID, else the serial, else a loop device's file.
func identityKey(id *prismv1.DeviceIdentity) string {
	switch {
	case id == nil:
		return ""
	case id.WWID != "":
		return "wwid " + id.WWID
	case id.Serial != "":
		return "serial " + id.Serial
	case id.BackingFile != "":
		return "loop file " + id.BackingFile
	}
	return ""
}

func identityString(id *prismv1.DeviceIdentity) string {
	var parts []string
	for _, p := range []struct{ k, v string }{{"wwid", id.WWID}, {"serial", id.Serial}, {"loop file", id.BackingFile}} {
		if p.v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", p.k, p.v))
		}
	}
	if len(parts) == 0 {
		return "no identity"
	}
	return strings.Join(parts, ", ")
}

// ambiguities lists what makes a node's inventory ambiguous: two records under one stable
// path (udev gives drives with cloned serials one by-id link, pointed at whichever came
// last), or two reporting one identity. Nil when every device can be told apart.
func ambiguities(devices []*prismv1.Device) []string {
	var out []string
	byPath, byKey := map[string][]*prismv1.Device{}, map[string][]*prismv1.Device{}
	var paths, keys []string
	for _, d := range devices {
		if d.StablePath != "" {
			if len(byPath[d.StablePath]) == 0 {
				paths = append(paths, d.StablePath)
			}
			byPath[d.StablePath] = append(byPath[d.StablePath], d)
		}
		if k := identityKey(d.Identity); k != "" {
			if len(byKey[k]) == 0 {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], d)
		}
	}
	for _, p := range paths {
		if ds := byPath[p]; len(ds) > 1 {
			out = append(out, fmt.Sprintf("%s names %d devices (%s)", p, len(ds), describeAll(ds)))
		}
	}
	for _, k := range keys {
		if ds := byKey[k]; len(ds) > 1 && !sameStablePath(ds) {
			out = append(out, fmt.Sprintf("%d devices report %s (%s)", len(ds), k, describeAll(ds)))
		}
	}
	return out
}

func sameStablePath(ds []*prismv1.Device) bool {
	for _, d := range ds[1:] {
		if d.StablePath != ds[0].StablePath {
			return false
		}
	}
	return true
}

func describeAll(ds []*prismv1.Device) string {
	var s []string
	for _, d := range ds {
		id := "no identity"
		if d.Identity != nil {
			id = identityString(d.Identity)
		}
		s = append(s, fmt.Sprintf("%s: %s", d.Path, id))
	}
	return strings.Join(s, "; ")
}

// holdAmbiguousNode is the selection's rule for an ambiguous inventory: Prism takes no new
// device on the node, since it cannot know which device a name leads to. The devices of the
// current plan keep their places (dropping them would withdraw their OSDs' entries on an
// observation, not a decision), one record per stable path; every other device is rejected
// with the reason. The agent writes none of the ambiguous devices either.
func holdAmbiguousNode(ordered []*prismv1.Device, planned map[string]prismv1.Tier, why []string) (kept []*prismv1.Device, rejected []prismv1.RejectedDevice) {
	reason := "Prism takes no new device on this node while its inventory is ambiguous: " + strings.Join(why, "; ")
	seen := map[string]bool{}
	for _, d := range ordered {
		if planned[d.StablePath] != "" && !seen[d.StablePath] {
			seen[d.StablePath] = true
			kept = append(kept, d)
			continue
		}
		rejected = append(rejected, prismv1.RejectedDevice{Name: d.Name, Reason: truncateReason(reason)})
	}
	return kept, rejected
}

// truncateReason keeps a reason within the API's 1024 characters.
func truncateReason(s string) string {
	if len(s) <= 1024 {
		return s
	}
	return s[:1020] + " ..."
}
