package rook

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// OSDs on a cache: each capacity device behind a cache whose core is Ready becomes two local
// volumes and one storageClassDeviceSet (claims.go,
// docs/decisions/0010-rook-osds-on-cas.md). The volumes carry the policy's label: they are
// the record of which sets the policy manages (an annotation listing thousands of sets would
// outgrow the annotation size limit).

// LedgerSet is one device set the policy's volumes record.
type LedgerSet struct {
	Node    string
	Volumes []corev1.PersistentVolume
}

func (l LedgerSet) claimed() bool {
	for _, v := range l.Volumes {
		if v.Spec.ClaimRef != nil {
			return true
		}
	}
	return false
}

// Ledger groups the policy's volumes (those with its label) by their device set.
func Ledger(volumes []corev1.PersistentVolume) map[string]LedgerSet {
	sets := map[string]LedgerSet{}
	for _, v := range volumes {
		name := v.Labels[LabelDeviceSet]
		if name == "" {
			continue
		}
		l := sets[name]
		l.Node = v.Annotations[AnnotationNode]
		l.Volumes = append(l.Volumes, v)
		sets[name] = l
	}
	return sets
}

// DeviceSets is what a policy's OSDs on caches come to in one decision.
type DeviceSets struct {
	// existing and merged are the CephCluster's storageClassDeviceSets before and after.
	existing, merged []any
	// include says whether Prism's apply carries the list: only when Prism changes it or
	// already owns it (an apply that leaves out a list Prism owns would delete it).
	include bool
	// apply are the volumes to create or fix before the CephCluster names them.
	apply []*corev1.PersistentVolume
	// obsolete are unclaimed volumes of dropped sets, deleted after the CephCluster apply.
	obsolete []corev1.PersistentVolume
	// wanted counts Prism's sets in the list (new, updated and kept).
	wanted int
	// waiting and notes are for the RookConfigured condition.
	waiting, notes []string
}

// decideDeviceSets decides the policy's device sets and volumes from the ready plans and what
// the agents report about the cache cores. Nodes in raw keep their storage.nodes entries and
// get no set. in.Cluster may be nil (policy deletion with the CephCluster gone): then only
// volumes are cleaned up. lookup names volumes to observe first.
func decideDeviceSets(in Input, ready map[string]prismv1.NodePlan, waiting, raw []string) (*DeviceSets, []string, error) {
	out := &DeviceSets{}
	var want []RookDeviceSet
	var lookup []string
	wanted := map[string]bool{}
	// unread are the sets of capacity devices whose size could not be read: they stay as
	// they are (in the CephCluster, and their volumes), as a failed read withdraws nothing.
	unread := map[string]bool{}
	for _, n := range in.Nodes {
		p, ok := ready[n.Name]
		switch {
		case !ok:
			continue
		case slices.Contains(raw, n.Name):
			out.waiting = append(out.waiting, n.Name+": its OSDs stay in storage.nodes on the raw devices; to move them onto the cache, remove them and then the node's entry (docs/cache.md)")
			continue
		}
		osds := ClaimOSDsOf(n.Name, p, n.Status)
		var held []HeldDevice
		for _, h := range osds.Held {
			if !h.Partial {
				held = append(held, h)
				continue
			}
			unread[DeviceSetName(n.Name, h.DataDevice)] = true
			out.notes = append(out.notes, fmt.Sprintf("%s: the device set and volumes of %s stay as they are: %s", n.Name, h.DataDevice, h.Reason))
		}
		if len(held) > 0 {
			out.waiting = append(out.waiting, heldMessage(n.Name, held))
		}
		hostname := n.Hostname
		if hostname == "" {
			hostname = n.Name
		}
		for _, o := range osds.Ready {
			set := DeviceSet(o, in.DeviceClass)
			wanted[set.Name] = true
			data, meta := LocalVolumes(o, hostname, in.Policy)
			usable, missing := decideVolumes(in, out, in.Ledger[set.Name], data, meta)
			lookup = append(lookup, missing...)
			if usable {
				want = append(want, set)
			}
		}
	}
	if len(lookup) > 0 {
		return nil, lookup, nil
	}
	// Sets the policy no longer wants go, unless an OSD may sit on them (a claim holds a
	// volume: Rook fails to reconcile an OSD whose set is gone) or their node is being
	// re-provisioned (dropping and re-adding would flap).
	var replace []string
	for _, name := range sortedKeys(in.Ledger) {
		l := in.Ledger[name]
		switch {
		case wanted[name]:
		case unread[name]:
			out.wanted++
		case l.claimed():
			out.wanted++
			out.notes = append(out.notes, fmt.Sprintf("device set %s of %s kept: a claim holds its volumes (an OSD may run there)", name, l.Node))
		case slices.Contains(waiting, l.Node):
			out.wanted++
		default:
			replace = append(replace, name)
			out.obsolete = append(out.obsolete, l.Volumes...)
		}
	}
	out.wanted += len(want)
	if in.Cluster == nil {
		return out, nil, nil
	}
	var err error
	out.existing, _, _ = unstructured.NestedSlice(in.Cluster.Object, "spec", "storage", "storageClassDeviceSets")
	if out.merged, err = MergeRookDeviceSets(out.existing, replace, want); err != nil {
		return nil, nil, fmt.Errorf("CephCluster %s: %w", in.Cluster.GetName(), err)
	}
	out.include = len(want) > 0 || len(replace) > 0 || OwnsField(in.Cluster, in.Manager, "spec", "storage", "storageClassDeviceSets")
	return out, nil, nil
}

// decideVolumes decides what happens to one OSD's two volumes and says whether its set can be
// applied now; missing are volumes neither the ledger nor the lookups know.
func decideVolumes(in Input, out *DeviceSets, recorded LedgerSet, want ...*corev1.PersistentVolume) (usable bool, missing []string) {
	usable = true
	for _, w := range want {
		have, known := volume(in, recorded, w.Name)
		if !known {
			missing = append(missing, w.Name)
			continue
		}
		if have == nil {
			out.apply = append(out.apply, w)
			continue
		}
		immutable, mutable := VolumeDrift(have, w)
		switch {
		case !have.DeletionTimestamp.IsZero():
			out.waiting = append(out.waiting, fmt.Sprintf("volume %s is being deleted; it is re-created once gone", w.Name))
		case len(immutable) > 0 && have.Spec.ClaimRef != nil:
			// An OSD may sit on the old device: never pull its volume away.
			usable = false
			out.notes = append(out.notes, fmt.Sprintf("volume %s is claimed but has %s: re-create its OSD (docs/cache.md)", w.Name, strings.Join(immutable, ", ")))
		case len(immutable) > 0:
			out.obsolete = append(out.obsolete, *have)
			out.waiting = append(out.waiting, fmt.Sprintf("volume %s is re-created: %s", w.Name, strings.Join(immutable, ", ")))
		case len(mutable) > 0:
			out.apply = append(out.apply, w)
		}
	}
	return usable, missing
}

// volume finds a volume by name: in the ledger, or (adopted from another policy, or created
// before a crash lost nothing but the label) among the lookups. known is false when neither
// has looked for it.
func volume(in Input, recorded LedgerSet, name string) (have *corev1.PersistentVolume, known bool) {
	for i := range recorded.Volumes {
		if recorded.Volumes[i].Name == name {
			return &recorded.Volumes[i], true
		}
	}
	v, ok := in.Volumes[name]
	return v, ok
}

func heldMessage(node string, held []HeldDevice) string {
	first := held[0]
	msg := fmt.Sprintf("%s: %d capacity devices wait for their cache cores (%s: %s", node, len(held), first.DataDevice, first.Reason)
	if len(held) > 1 {
		msg += fmt.Sprintf("; and %d more", len(held)-1)
	}
	return msg + ")"
}

// changed says whether the CephCluster's list differs from what Prism wants there.
func (d *DeviceSets) changed() bool {
	return d.include && !equality.Semantic.DeepEqual(d.existing, d.merged)
}

// addTo puts the list into Prism's apply configuration.
func (d *DeviceSets) addTo(apply *unstructured.Unstructured) {
	if d.include {
		_ = unstructured.SetNestedSlice(apply.Object, d.merged, "spec", "storage", "storageClassDeviceSets")
	}
}

// summary is the part of the RookConfigured message about OSDs on caches.
func (d *DeviceSets) summary() string {
	if d.wanted == 0 && len(d.notes) == 0 {
		return ""
	}
	msg := fmt.Sprintf("%d OSDs on caches as device sets", d.wanted)
	if len(d.notes) > 0 {
		msg += "; " + summarise(d.notes)
	}
	return msg
}

func sortedKeys(m map[string]LedgerSet) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
