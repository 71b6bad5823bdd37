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
			now = devices[i].Identity.Stable()
			break
		}
	}
	if prev == nil || prev.Identity == nil {
		return now
	}
	if now != nil && *now != *prev.Identity {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s now reports %s, but it was planned as %s: the agent writes nothing to it; if the drive was replaced on purpose, follow docs/runbooks/replace-fast-device.md",
			path, now, prev.Identity))
	}
	return prev.Identity.DeepCopy()
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
		if k := d.Identity.Key(); k != "" {
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
		s = append(s, fmt.Sprintf("%s: %s", d.Path, d.Identity.Stable()))
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
