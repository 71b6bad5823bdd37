package rook

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Reasons of the RookConfigured condition.
const (
	ReasonApplied              = "Applied"
	ReasonDryRun               = "DryRun"
	ReasonPlanRefused          = "PlanRefused"
	ReasonCephClusterNotFound  = "CephClusterNotFound"
	ReasonCephClusterAllNodes  = "CephClusterUsesAllNodes"
	ReasonWaitingForPartitions = "WaitingForPartitions"
	ReasonNothingToConfigure   = "NothingToConfigure"
	// ReasonReplacingOSDs: OSDs whose DB moved to a new fast device are handed to Rook one at
	// a time, each once Ceph says its old OSD may go (decision 0046).
	ReasonReplacingOSDs = "ReplacingOSDs"
	// ReasonNewOSDsHeld: new drives of nodes that have OSD entries are not written until Ceph's
	// answers say no OSD is destroyed under the node's CRUSH host (decision 0061).
	ReasonNewOSDsHeld = "NewOSDsHeld"
	// ReasonWaitingForCacheCores: some capacity devices behind a cache have no Ready core yet.
	ReasonWaitingForCacheCores = "WaitingForCacheCores"
	// ReasonCephLosesPartitionDB: the cluster's Ceph would prepare OSDs that cannot start from
	// entries with a partition DB slot (PartitionDBWithheld), so the nodes with such an entry for a
	// new OSD are not written.
	ReasonCephLosesPartitionDB = "CephLosesPartitionDB"
)

// HealthRequeue is how soon to look again while replacements wait for Ceph's answers, which
// no watch event reports.
const HealthRequeue = time.Minute

// Input is everything the decision reads, all of it observed before.
type Input struct {
	// Policy is the policy's name; Manager the field manager of its CephCluster applies.
	Policy, Manager string
	// DryRun and PlanRefused stop the decision before the CephCluster is read.
	DryRun, PlanRefused bool
	// DeviceClass is the OSDs' device class (spec.osd.deviceClass, defaulted).
	DeviceClass string
	// SetMinAllocSize: spec.osd.minAllocSize asks Prism to set bluestore_min_alloc_size.
	SetMinAllocSize bool
	// ClusterRef is "namespace/name" of spec.cephCluster, for messages.
	ClusterRef string
	// Cluster is the CephCluster as read; nil when it does not exist.
	Cluster *unstructured.Unstructured
	// Nodes are the policy's nodes with a plan, sorted by name.
	Nodes []Node
	// Released maps the nodes this reconcile let go to why; Selections are the policy's
	// selections (a node without a plan carries why in its message). Both only explain drops.
	Released   map[string]string
	Selections []prismv1.NodeSelection
	// Unobserved maps the policy's nodes with no inventory to decide on (no StorageNode, or
	// its agent has not published an inventory) to why: a node managed before keeps its
	// entries and volumes untouched, as a failed observation never withdraws anything.
	Unobserved map[string]string
	// Ledger are the policy's local volumes (by their device-set label); Volumes are volumes
	// looked up by name outside the ledger (nil: looked up, absent). A volume Decide needs
	// and finds in neither is asked for in Decision.Lookup.
	Ledger  map[string]LedgerSet
	Volumes map[string]*corev1.PersistentVolume
	// Now is the clock for replacement pacing.
	Now time.Time
	// Answers are Ceph's answers per node, as the last probe read them (decision 0046);
	// a node without answers holds its re-created OSDs.
	Answers map[string]CephAnswers
	// IgnoreHealthChecks are the policy's spec.osd.ignoreHealthChecks.
	IgnoreHealthChecks []string
	// MaxCephClusterBytes is the largest CephCluster the cluster's etcd stores (0: etcd's
	// default, DefaultMaxCephClusterBytes).
	MaxCephClusterBytes int64
}

// Node is one node with a plan, as observed.
type Node struct {
	Name string
	Plan prismv1.NodePlan
	// Ready: the node's agent reports Provisioned for exactly this plan (the StorageNode's
	// spec.plan equals Plan, and its status reports the current generation).
	Ready bool
	// Status is the StorageNode's status (devices, caches).
	Status prismv1.StorageNodeStatus
	// Hostname is the Node's kubernetes.io/hostname label ("": the node name); read only for
	// ready nodes whose OSDs sit on caches.
	Hostname string
}

// Outcome is the RookConfigured condition.
type Outcome struct {
	Reason, Message string
	OK              bool
	// RequeueAfter asks to look again for state no watch reports; 0: no need.
	RequeueAfter time.Duration
}

// Decision is everything to apply, in this order: ApplyVolumes, then Object when Changed,
// then DeleteVolumes.
type Decision struct {
	Outcome Outcome
	// Lookup names volumes to read before deciding again (Input.Volumes); when set, nothing
	// else in the decision is meant to be applied.
	Lookup []string
	// Ready and Waiting are the nodes whose partitions (and DB volumes) are Ready, and the
	// others.
	Ready, Waiting []string
	// Unverified are the waiting nodes whose agent reports them provisioned but whose DB
	// volumes are not Ready where the plan puts them (SlotVolumes), with why: their entries
	// would name devices nobody has verified.
	Unverified map[string]string
	// Unobserved are the waiting nodes managed before whose entries are kept because there is
	// no inventory to decide on (Input.Unobserved), with why.
	Unobserved map[string]string
	// Withheld are ready nodes whose entries are not written because one of them would have
	// the cluster's Ceph, which loses partition DBs, prepare a new OSD from a partition
	// (Outcome says why); entries they already have are kept.
	Withheld []string
	// Entries are the storage.nodes entries of the ready nodes, after gating. Of the nodes the
	// policy managed before and writes no entry for now, Drop lose their entries and Kept
	// keep theirs untouched (re-provisioning, or OSDs still on raw devices under a new cache).
	Entries    []RookNode
	Drop, Kept []string
	// Nodes is the CephCluster's storage.nodes after the apply.
	Nodes []any
	// Managed is the managed-nodes annotation; Release the release annotation ("": none).
	Managed, Release string
	// Config is the cephConfig Prism sets (nil: none).
	Config map[string]any
	// Gate is what replacement pacing decided.
	Gate GateResult
	// Sets are the device sets and volumes (nil when the decision stopped early: dry run, a
	// refused plan, no CephCluster, useAllNodes; then there is nothing to apply).
	Sets *DeviceSets
	// Changed: the CephCluster differs from what Prism wants; Object is the apply configuration.
	Changed bool
	Object  *unstructured.Unstructured
	// Event is the message of the OSDEntriesApplied Event, when Changed.
	Event string
	// ApplyVolumes are created or fixed before the CephCluster apply, DeleteVolumes deleted
	// after it.
	ApplyVolumes  []*corev1.PersistentVolume
	DeleteVolumes []corev1.PersistentVolume
}

// Decide decides what Prism applies to the CephCluster for one policy. The error is a merge
// conflict (an entry Prism must write belongs to someone else) naming the field.
func Decide(in Input) (Decision, error) {
	switch {
	case in.DryRun:
		return Decision{Outcome: Outcome{Reason: ReasonDryRun, Message: "dry run: the CephCluster is not changed"}}, nil
	case in.PlanRefused:
		return Decision{Outcome: Outcome{Reason: ReasonPlanRefused, Message: "nothing applied while a node's plan is refused"}}, nil
	case in.Cluster == nil:
		return Decision{Outcome: Outcome{Reason: ReasonCephClusterNotFound, Message: fmt.Sprintf("CephCluster %s does not exist", in.ClusterRef)}}, nil
	}
	cluster := in.Cluster
	if all, _, _ := unstructured.NestedBool(cluster.Object, "spec", "storage", "useAllNodes"); all {
		return Decision{Outcome: Outcome{Reason: ReasonCephClusterAllNodes, Message: "spec.storage.useAllNodes is true, so Rook ignores per-node entries: set it to false"}}, nil
	}

	d := Decision{}
	ready := map[string]prismv1.NodePlan{}
	volumes := map[string]map[string]string{}
	for _, n := range in.Nodes {
		if !n.Ready {
			d.Waiting = append(d.Waiting, n.Name)
			continue
		}
		lv, err := SlotVolumes(n.Plan, n.Status)
		if err != nil {
			if d.Unverified == nil {
				d.Unverified = map[string]string{}
			}
			d.Waiting, d.Unverified[n.Name] = append(d.Waiting, n.Name), err.Error()
			continue
		}
		ready[n.Name] = n.Plan
		d.Ready = append(d.Ready, n.Name)
		if lv != nil {
			volumes[n.Name] = lv
		}
	}
	sort.Strings(d.Waiting)
	existing, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	d.Gate = GateReplacements(GateInput{Entries: RookNodesOnVolumes(ready, volumes, in.DeviceClass), Existing: existing,
		Answers: in.Answers, Kernel: kernelNames(in.Nodes), Ignore: in.IgnoreHealthChecks,
		LastChanged: healthChanged(cluster), Last: lastRelease(cluster, in.Policy), Now: in.Now})
	d.Entries = d.Gate.Entries
	lost := PartitionDBWithheld(cluster)
	var withheld []string
	if lost != "" {
		d.Entries, d.Withheld, withheld = withholdPartitionDBs(d.Entries, existing, volumes)
		// A re-created OSD whose entry is withheld has not been handed to Rook.
		if r := d.Gate.Released; r != nil && slices.Contains(d.Withheld, r.Node) {
			d.Gate.Released = nil
		}
	}

	// A node whose plan is being re-provisioned keeps the entry it has: dropping it would
	// flap Rook's view of running OSDs.
	key, annotations := ManagedNodesAnnotation(in.Policy), cluster.GetAnnotations()
	previous := splitNodes(annotations[key])
	raw := stayingInNodes(previous, ready, existing)
	// A node managed before whose entry is written again is neither (its entry is replaced).
	applied := nodeNamesOf(d.Entries)
	d.Kept = []string{}
	for _, n := range previous {
		switch {
		case slices.Contains(d.Waiting, n) || slices.Contains(raw, n) || slices.Contains(d.Withheld, n):
			d.Kept = append(d.Kept, n)
		case in.Unobserved[n] != "" && !slices.Contains(applied, n):
			if d.Unobserved == nil {
				d.Unobserved = map[string]string{}
			}
			d.Kept, d.Waiting, d.Unobserved[n] = append(d.Kept, n), append(d.Waiting, n), in.Unobserved[n]
		case !slices.Contains(applied, n):
			d.Drop = append(d.Drop, n)
		}
	}
	sort.Strings(d.Waiting)
	var err error
	if d.Nodes, err = MergeRookNodes(existing, d.Drop, d.Entries); err != nil {
		return Decision{}, fmt.Errorf("CephCluster %s: %w", cluster.GetName(), err)
	}
	config, configNote := cephConfig(in, ready)
	d.Config = config
	d.Managed = joinNodes(append(applied, d.Kept...))
	sets, lookup, err := decideDeviceSets(in, ready, d.Waiting, raw)
	if err != nil || len(lookup) > 0 {
		return Decision{Lookup: lookup}, err
	}
	d.Sets = sets
	d.ApplyVolumes, d.DeleteVolumes = sets.apply, sets.obsolete

	releaseKey := ReleaseAnnotation(in.Policy)
	d.Release = annotations[releaseKey]
	if d.Gate.Released != nil {
		d.Release = d.Gate.Released.String()
	}
	d.Changed = !(equality.Semantic.DeepEqual(existing, d.Nodes) && annotations[key] == d.Managed && configApplied(cluster, config) &&
		!sets.changed() && annotations[releaseKey] == d.Release)
	if d.Changed {
		why, err := tooLarge(cluster, d.Nodes, d.Entries, in.MaxCephClusterBytes)
		if err != nil || why != "" {
			// Nothing is applied: etcd would refuse the object on every reconcile.
			return Decision{Outcome: Outcome{Reason: ReasonCephClusterTooLarge, Message: why}, Ready: d.Ready, Waiting: d.Waiting}, err
		}
		d.Object = applyObject(cluster, key, d.Managed, d.Nodes, config)
		if d.Release != "" {
			// Re-sent on every apply: an annotation Prism's field manager stops sending is removed.
			d.Object.SetAnnotations(map[string]string{key: d.Managed, releaseKey: d.Release})
		}
		sets.addTo(d.Object)
	}
	d.Outcome, d.Event = outcome(in, d, configNote)
	if len(d.Withheld) > 0 {
		msg, requeue := fmt.Sprintf("%s; withheld: %s", lost, summarise(withheld)), d.Outcome.RequeueAfter
		if len(d.Entries) > 0 || len(d.Waiting) > 0 {
			msg += "; " + d.Outcome.Message
		}
		d.Outcome = Outcome{Reason: ReasonCephLosesPartitionDB, Message: msg}
		if len(d.Entries) > 0 {
			d.Outcome.RequeueAfter = requeue // for replacements held in the entries written
		}
	}
	return d, nil
}

// withholdPartitionDBs keeps from entries, for a Ceph that loses partition DBs, the nodes none
// of whose devices would have Rook prepare a new OSD from a partition: a device whose
// metadataDevice is neither one of the node's logical volumes (volumes: partition → volume)
// nor what the CephCluster's entry for that device already has (an OSD prepared from the
// partition before keeps its entry). The others are withheld, with the first such device.
func withholdPartitionDBs(entries []RookNode, existing []any, volumes map[string]map[string]string) (written []RookNode, withheld, why []string) {
	current := ExistingMetadataDevices(existing)
	for _, n := range entries {
		onVolume := make(map[string]bool, len(volumes[n.Name]))
		for _, v := range volumes[n.Name] {
			onVolume[v] = true
		}
		newOSD := -1
		for i, dev := range n.Devices {
			meta := dev.Config.MetadataDevice
			if meta != "" && !onVolume[meta] && current[n.Name][dev.Name] != meta {
				newOSD = i
				break
			}
		}
		if newOSD < 0 {
			written = append(written, n)
			continue
		}
		dev := n.Devices[newOSD]
		withheld = append(withheld, n.Name)
		why = append(why, fmt.Sprintf("%s (a new OSD on %s with its DB on partition %s)", n.Name, dev.Name, dev.Config.MetadataDevice))
	}
	return written, withheld, why
}

// outcome is the RookConfigured condition and the Event message of a decision.
func outcome(in Input, d Decision, configNote string) (Outcome, string) {
	sets := d.Sets
	msg := fmt.Sprintf("%d nodes' OSD entries in CephCluster %s/%s", len(d.Entries), in.Cluster.GetNamespace(), in.Cluster.GetName())
	var withdrawn string
	if w := withdrawals(d.Drop, in); len(w) > 0 {
		withdrawn = "withdrew " + summarise(w)
	}
	event := "applied " + msg
	if withdrawn != "" {
		event += "; " + withdrawn
	}
	for _, note := range []string{configNote, sets.summary(), withdrawn} {
		if note != "" {
			msg += "; " + note
		}
	}
	if len(sets.waiting) > 0 {
		msg += "; " + summarise(sets.waiting)
	}
	if d.Gate.Released != nil {
		msg += fmt.Sprintf("; released the re-created OSD on %s %s to Rook", d.Gate.Released.Node, d.Gate.Released.Device)
	}
	switch {
	case len(d.Gate.HeldNew) > 0:
		msg = fmt.Sprintf("%s; %d new drives not written yet, first: %s", msg, len(d.Gate.HeldNew), d.Gate.HeldNew[0])
		if len(d.Gate.Held) > 0 {
			msg += fmt.Sprintf("; %d OSDs to re-create one at a time, first: %s", len(d.Gate.Held), d.Gate.Held[0])
		}
		return Outcome{Reason: ReasonNewOSDsHeld, RequeueAfter: HealthRequeue, Message: msg}, event
	case len(d.Gate.Held) > 0:
		return Outcome{Reason: ReasonReplacingOSDs, RequeueAfter: HealthRequeue,
			Message: fmt.Sprintf("%s; %d OSDs to re-create one at a time, first: %s", msg, len(d.Gate.Held), d.Gate.Held[0])}, event
	case len(d.Waiting) > 0:
		return Outcome{Reason: ReasonWaitingForPartitions, Message: msg + waitingMessage(d)}, event
	case len(sets.waiting) > 0:
		return Outcome{Reason: ReasonWaitingForCacheCores, Message: msg}, event
	case len(d.Entries) == 0 && sets.wanted == 0:
		return Outcome{Reason: ReasonNothingToConfigure, Message: "no node has a plan"}, event
	}
	return Outcome{Reason: ReasonApplied, Message: msg, OK: true}, event
}

// waitingMessage says which nodes wait for their agents, why the entries of those whose agent
// reports them provisioned are not written, and why those of nodes without an inventory stay.
func waitingMessage(d Decision) string {
	var partitions, volumes, unobserved []string
	for _, n := range d.Waiting {
		if why, ok := d.Unverified[n]; ok {
			volumes = append(volumes, n+": "+why)
		} else if why, ok := d.Unobserved[n]; ok {
			unobserved = append(unobserved, n+": "+why)
		} else {
			partitions = append(partitions, n)
		}
	}
	msg := ""
	if len(partitions) > 0 {
		msg += "; waiting for the agents to create the DB partitions on " + strings.Join(partitions, ", ")
	}
	if len(volumes) > 0 {
		msg += "; not written until the agent reports each DB volume Ready where the plan puts it: " + summarise(volumes)
	}
	if len(unobserved) > 0 {
		msg += "; entries kept as they are until there is an inventory to decide on: " + summarise(unobserved)
	}
	return msg
}

// withdrawals names each node whose storage.nodes entry this decision removes, and why:
// released, no longer selected, or without a plan.
func withdrawals(drop []string, in Input) []string {
	why := map[string]string{}
	for node, reason := range in.Released {
		why[node] = "released: " + reason
	}
	for _, sel := range in.Selections {
		if _, ok := why[sel.Node]; ok {
			continue
		}
		switch {
		case sel.Message != "":
			why[sel.Node] = "no plan: " + sel.Message
		default:
			why[sel.Node] = "no plan"
		}
	}
	out := make([]string, 0, len(drop))
	for _, n := range drop {
		reason, ok := why[n]
		if !ok {
			reason = "no longer selected by the policy"
		}
		out = append(out, fmt.Sprintf("the entry of node %s (%s)", n, reason))
	}
	return out
}

// cephConfig is the Rook cephConfig Prism sets: bluestore_min_alloc_size for its OSDs' device
// class, matching the ready nodes' selected capacity devices' internal write unit. A device
// whose latest inventory record is partial does not count: a read that failed (its model, so
// the drive database's internal write unit) changes nothing. When no device's record is
// complete, the value the CephCluster has stays.
func cephConfig(in Input, ready map[string]prismv1.NodePlan) (map[string]any, string) {
	if !in.SetMinAllocSize || len(ready) == 0 {
		return nil, ""
	}
	var devices, partial []prismv1.Device
	for _, n := range in.Nodes {
		if _, ok := ready[n.Name]; !ok {
			continue
		}
		for _, sel := range in.Selections {
			if sel.Node != n.Name {
				continue
			}
			for _, d := range n.Status.Devices {
				for _, cd := range sel.Capacity {
					if cd.StablePath != d.StablePath {
						continue
					}
					if _, ok := d.PartialRecord(); ok {
						partial = append(partial, d)
					} else {
						devices = append(devices, d)
					}
				}
			}
		}
	}
	section := CephConfigSection(in.DeviceClass)
	var skipped string
	if len(partial) > 0 {
		skipped = fmt.Sprintf(" (%d devices whose inventory record is partial not counted, first %s)", len(partial), partial[0].Name)
	}
	if len(devices) == 0 && len(partial) > 0 && in.Cluster != nil {
		if v, ok, _ := unstructured.NestedString(in.Cluster.Object, "spec", "cephConfig", section, "bluestore_min_alloc_size"); ok && v != "" {
			return map[string]any{section: map[string]any{"bluestore_min_alloc_size": v}},
				"bluestore_min_alloc_size " + v + " kept as the CephCluster has it" + skipped
		}
	}
	iu, err := MinAllocSize(devices)
	if err != nil {
		return nil, "bluestore_min_alloc_size left at Ceph's default: " + err.Error() + skipped
	}
	return map[string]any{section: map[string]any{"bluestore_min_alloc_size": strconv.FormatInt(iu, 10)}},
		fmt.Sprintf("bluestore_min_alloc_size %d for device class %s", iu, in.DeviceClass) + skipped
}

// stayingInNodes are the nodes that now run a cache but still have the storage.nodes entry
// this policy gave them before: OSDs may run on their raw capacity devices, so the entry
// stays (Rook stops updating OSDs of nodes that leave the list) and the node gets no device
// set (a second OSD on the same disk) until an admin removes the entry.
func stayingInNodes(previous []string, ready map[string]prismv1.NodePlan, existing []any) []string {
	var raw []string
	for _, n := range previous {
		p, ok := ready[n]
		if !ok || !p.OnClaims() {
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

// summarise joins items, at most five of them, for a condition message.
func summarise(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:5], "; ") + fmt.Sprintf("; and %d more", len(items)-5)
}

func nodeNamesOf(entries []RookNode) []string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	return names
}

func joinNodes(names []string) string {
	sort.Strings(names)
	return strings.Join(names, ",")
}

func splitNodes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// kernelNames maps node → device stable path → kernel name, from each node's inventory.
func kernelNames(nodes []Node) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, n := range nodes {
		m := map[string]string{}
		for _, d := range n.Status.Devices {
			if d.StablePath != "" {
				m[d.StablePath] = d.Name
			}
		}
		out[n.Name] = m
	}
	return out
}
