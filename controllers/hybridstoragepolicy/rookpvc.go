package hybridstoragepolicy

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rookvolumes"
)

// OSDs on a cache: each capacity device behind a cache whose core is Ready becomes two local
// volumes and one storageClassDeviceSet (internal/plan/rookpvc.go,
// docs/decisions/0010-rook-osds-on-cas.md). The volumes carry the policy's label: they are
// the record of which sets the policy manages (an annotation listing thousands of sets would
// outgrow the annotation size limit).

// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch;create

// ReasonWaitingForCacheCores: some capacity devices behind a cache have no Ready core yet.
const ReasonWaitingForCacheCores = "WaitingForCacheCores"

// deviceSets is what a policy's OSDs on caches come to in one reconcile.
type deviceSets struct {
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

// ledgerSet is one device set the policy's volumes record.
type ledgerSet struct {
	node    string
	volumes []corev1.PersistentVolume
}

func (l ledgerSet) claimed() bool {
	for _, v := range l.volumes {
		if v.Spec.ClaimRef != nil {
			return true
		}
	}
	return false
}

// planDeviceSets decides the policy's device sets and volumes from the provisioned plans and
// what the agents report about the cache cores. Nodes in raw keep their storage.nodes entries
// and get no set. cluster may be nil (policy deletion with the CephCluster gone): then only
// volumes are cleaned up.
func (r *Reconciler) planDeviceSets(ctx context.Context, s *scope, cluster *unstructured.Unstructured, ready map[string]prismv1.NodePlan, waiting, raw []string) (*deviceSets, error) {
	ledger, err := r.ledger(ctx, s.policy.Name)
	if err != nil {
		return nil, err
	}
	out := &deviceSets{}
	var want []rookvolumes.RookDeviceSet
	wanted := map[string]bool{}
	for _, c := range s.candidates {
		p, ok := ready[c.node]
		switch {
		case !ok:
			continue
		case slices.Contains(raw, c.node):
			out.waiting = append(out.waiting, c.node+": its OSDs stay in storage.nodes on the raw devices; to move them onto the cache, remove them and then the node's entry (docs/cache.md)")
			continue
		}
		osds := plan.ClaimOSDsOf(c.node, p, c.storage.Status)
		if len(osds.Held) > 0 {
			out.waiting = append(out.waiting, heldMessage(c.node, osds.Held))
		}
		hostname, err := r.hostname(ctx, c.node)
		if err != nil {
			return nil, err
		}
		for _, o := range osds.Ready {
			set := rookvolumes.DeviceSet(o, deviceClass(s.policy))
			wanted[set.Name] = true
			data, meta := rookvolumes.LocalVolumes(o, hostname, s.policy.Name)
			usable, err := r.reconcileVolumes(ctx, out, ledger[set.Name], data, meta)
			if err != nil {
				return nil, err
			}
			if usable {
				want = append(want, set)
			}
		}
	}
	// Sets the policy no longer wants go, unless an OSD may sit on them (a claim holds a
	// volume: Rook fails to reconcile an OSD whose set is gone) or their node is being
	// re-provisioned (dropping and re-adding would flap).
	var replace []string
	for _, name := range sortedKeys(ledger) {
		l := ledger[name]
		switch {
		case wanted[name]:
		case l.claimed():
			out.wanted++
			out.notes = append(out.notes, fmt.Sprintf("device set %s of %s kept: a claim holds its volumes (an OSD may run there)", name, l.node))
		case slices.Contains(waiting, l.node):
			out.wanted++
		default:
			replace = append(replace, name)
			out.obsolete = append(out.obsolete, l.volumes...)
		}
	}
	out.wanted += len(want)
	if cluster == nil {
		return out, nil
	}
	out.existing, _, _ = unstructured.NestedSlice(cluster.Object, "spec", "storage", "storageClassDeviceSets")
	if out.merged, err = rookvolumes.MergeRookDeviceSets(out.existing, replace, want); err != nil {
		return nil, fmt.Errorf("CephCluster %s: %w", cluster.GetName(), err)
	}
	out.include = len(want) > 0 || len(replace) > 0 || ownsField(cluster, cephClusterManager(s.policy.Name), "spec", "storage", "storageClassDeviceSets")
	return out, nil
}

// reconcileVolumes decides what happens to one OSD's two volumes and says whether its set
// can be applied now.
func (r *Reconciler) reconcileVolumes(ctx context.Context, out *deviceSets, recorded ledgerSet, want ...*corev1.PersistentVolume) (bool, error) {
	usable := true
	for _, w := range want {
		have, err := r.volume(ctx, recorded, w.Name)
		if err != nil {
			return false, err
		}
		if have == nil {
			out.apply = append(out.apply, w)
			continue
		}
		immutable, mutable := rookvolumes.VolumeDrift(have, w)
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
	return usable, nil
}

// volume finds a volume by name: in the ledger, or (adopted from another policy, or created
// before a crash lost nothing but the label) in the cluster.
func (r *Reconciler) volume(ctx context.Context, recorded ledgerSet, name string) (*corev1.PersistentVolume, error) {
	for i := range recorded.volumes {
		if recorded.volumes[i].Name == name {
			return &recorded.volumes[i], nil
		}
	}
	v := &corev1.PersistentVolume{}
	// From the API server: a volume of this name without Prism's label is not in the cache.
	if err := r.apiReader().Get(ctx, client.ObjectKey{Name: name}, v); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("reading volume %s: %w", name, err)
	}
	return v, nil
}

// ledger lists the policy's volumes by device set.
func (r *Reconciler) ledger(ctx context.Context, policy string) (map[string]ledgerSet, error) {
	list := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{plan.LabelPolicy: plan.LabelValue(policy)}); err != nil {
		return nil, fmt.Errorf("listing the policy's local volumes: %w", err)
	}
	sets := map[string]ledgerSet{}
	for _, v := range list.Items {
		name := v.Labels[plan.LabelDeviceSet]
		if name == "" {
			continue
		}
		l := sets[name]
		l.node = v.Annotations[plan.AnnotationNode]
		l.volumes = append(l.volumes, v)
		sets[name] = l
	}
	return sets, nil
}

// stayingInNodes are the nodes that now run a cache but still have the storage.nodes entry
// this policy gave them before: OSDs may run on their raw capacity devices, so the entry
// stays (Rook stops updating OSDs of nodes that leave the list) and the node gets no device
// set (a second OSD on the same disk) until an admin removes the entry.
func stayingInNodes(previous []string, ready map[string]prismv1.NodePlan, existing []any) []string {
	var raw []string
	for _, n := range previous {
		p, ok := ready[n]
		if !ok || !plan.OnClaims(p) {
			continue
		}
		for _, e := range existing {
			if m, ok := e.(map[string]any); ok && m["name"] == n {
				raw = append(raw, n)
			}
		}
	}
	return raw
}

// hostname is the node's kubernetes.io/hostname label, which local volumes are pinned with
// (it differs from the node name on some clouds). A failed read is an error, not the node
// name: a wrong hostname would make every volume of the node look changed and re-created.
func (r *Reconciler) hostname(ctx context.Context, node string) (string, error) {
	n := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return node, nil
		}
		return "", fmt.Errorf("reading node %s: %w", node, err)
	}
	if h := n.Labels["kubernetes.io/hostname"]; h != "" {
		return h, nil
	}
	return node, nil
}

func heldMessage(node string, held []plan.HeldDevice) string {
	first := held[0]
	msg := fmt.Sprintf("%s: %d capacity devices wait for their cache cores (%s: %s", node, len(held), first.DataDevice, first.Reason)
	if len(held) > 1 {
		msg += fmt.Sprintf("; and %d more", len(held)-1)
	}
	return msg + ")"
}

// changed says whether the CephCluster's list differs from what Prism wants there.
func (d *deviceSets) changed() bool {
	return d.include && !equality.Semantic.DeepEqual(d.existing, d.merged)
}

// addTo puts the list into Prism's apply configuration.
func (d *deviceSets) addTo(apply *unstructured.Unstructured) {
	if d.include {
		_ = unstructured.SetNestedSlice(apply.Object, d.merged, "spec", "storage", "storageClassDeviceSets")
	}
}

// summary is the part of the RookConfigured message about OSDs on caches.
func (d *deviceSets) summary() string {
	if d.wanted == 0 && len(d.notes) == 0 {
		return ""
	}
	msg := fmt.Sprintf("%d OSDs on caches as device sets", d.wanted)
	if len(d.notes) > 0 {
		msg += "; " + summarise(d.notes)
	}
	return msg
}

func sortedKeys(m map[string]ledgerSet) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
