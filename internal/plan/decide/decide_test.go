package decide

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

const gib = int64(1) << 30

var now = time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)

// storageNode is an agent's inventory of one fast and two capacity devices.
func storageNode(name string) *prismv1.StorageNode {
	dev := func(i int, tier prismv1.Tier, size int64) prismv1.Device {
		return prismv1.Device{Name: "nvme" + string(rune('0'+i)) + "n1", StablePath: "/dev/disk/by-id/nvme-" + name + "_" + string(rune('0'+i)),
			SizeBytes: size, Tier: tier, Eligibility: prismv1.Eligibility{Eligible: true}}
	}
	sn := &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}}
	sn.Status.Devices = []prismv1.Device{dev(0, prismv1.TierFast, 400*gib), dev(1, prismv1.TierCapacity, 8000*gib), dev(2, prismv1.TierCapacity, 8000*gib)}
	return sn
}

func policyOf(mode prismv1.PolicyMode, selector map[string]string) *prismv1.HybridStoragePolicy {
	p := &prismv1.HybridStoragePolicy{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}
	p.Spec.Mode = mode
	p.Spec.NodeSelector = prismv1.NodeSelector{MatchLabels: map[string]prismv1.LabelValue{}}
	for k, v := range selector {
		p.Spec.NodeSelector.MatchLabels[k] = prismv1.LabelValue(v)
	}
	p.Spec.DB = prismv1.DBSizing{Size: resource.NewQuantity(60*gib, resource.BinarySI)}
	p.Spec.CephCluster = prismv1.ObjectRef{Namespace: "rook-ceph", Name: "ceph"}
	return p
}

func cephCluster() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"storage": map[string]any{},
		"cephVersion": map[string]any{"image": "quay.io/ceph/ceph:v19.2.3"}}}}
	u.SetGroupVersionKind(rook.CephClusterGVK)
	u.SetNamespace("rook-ceph")
	u.SetName("ceph")
	return u
}

var storage = map[string]string{"role": "storage"}

func observation(p *prismv1.HybridStoragePolicy, sns ...*prismv1.StorageNode) Observation {
	obs := Observation{Policy: p, Cluster: cephCluster(), Now: now, StorageNodes: sns}
	for _, sn := range sns {
		obs.Nodes = append(obs.Nodes, Node{Name: sn.Name, Labels: storage})
	}
	return obs
}

// provisioned makes sn carry the policy's claim and plan, reported Ready by its agent.
func provisioned(t *testing.T, sn *prismv1.StorageNode, want prismv1.StorageNodeSpec) {
	t.Helper()
	sn.Spec = *want.DeepCopy()
	sn.Status.ObservedPlanGeneration = sn.Generation
	sn.Status.Conditions = []metav1.Condition{{Type: prismv1.ConditionProvisioned, Status: metav1.ConditionTrue, Reason: "Provisioned"}}
}

func claimNames(cs []Claim) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.StorageNode.Name)
	}
	return out
}

func TestPolicyClaimsPlansAndWaitsForPartitions(t *testing.T) {
	p := policyOf(prismv1.ModeApply, storage)
	obs := observation(p, storageNode("a"), storageNode("b"))
	obs.Nodes = append(obs.Nodes, Node{Name: "other", Labels: map[string]string{"role": "compute"}})
	d := Policy(obs)
	if !reflect.DeepEqual(d.Selected, []string{"a", "b"}) || !reflect.DeepEqual(d.Unselected, []string{"other"}) {
		t.Fatalf("selected %v, unselected %v", d.Selected, d.Unselected)
	}
	if got := claimNames(d.Claims); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("claims %v, want a and b", got)
	}
	for _, c := range d.Claims {
		if !c.New || c.Want.PolicyName != "fast" || c.Want.Plan == nil || len(c.Want.Plan.FastDevices[0].Slots) != 2 {
			t.Fatalf("claim of %s: %+v", c.StorageNode.Name, c)
		}
	}
	// A claim being written now: the agent has not seen it, so Rook waits for the partitions.
	if d.RookErr != nil || d.Rook.Outcome.Reason != rook.ReasonWaitingForPartitions || !reflect.DeepEqual(d.Rook.Waiting, []string{"a", "b"}) {
		t.Fatalf("rook: %v %+v", d.RookErr, d.Rook.Outcome)
	}

	// Next reconcile: both claimed, a provisioned, b not yet.
	provisioned(t, obs.StorageNodes[0], d.Claims[0].Want)
	obs.StorageNodes[1].Spec = *d.Claims[1].Want.DeepCopy()
	d2 := Policy(obs)
	if len(d2.Claims) != 0 || len(d2.Releases) != 0 {
		t.Fatalf("steady state claims %v releases %v", claimNames(d2.Claims), d2.Releases)
	}
	if !reflect.DeepEqual(d2.Rook.Ready, []string{"a"}) || !reflect.DeepEqual(d2.Rook.Waiting, []string{"b"}) || !d2.Rook.Changed {
		t.Fatalf("rook ready %v waiting %v changed %v", d2.Rook.Ready, d2.Rook.Waiting, d2.Rook.Changed)
	}
	// One slot size from the policy to Rook's entry: 60 GiB is databaseSizeMB 61440.
	raw, err := json.Marshal(d2.Rook.Object.Object)
	if err != nil || len(d2.Rook.Entries) != 1 || !strings.Contains(string(raw), `"databaseSizeMB":"61440"`) {
		t.Fatalf("apply %s, %v", raw, err)
	}
}

func TestPolicyPendingModeChangeIsNotReady(t *testing.T) {
	// The plan is the same but the claim changes (mode): the agent has not seen the new
	// generation, so the node waits, as it would after the patch bumps the generation.
	p := policyOf(prismv1.ModeApply, storage)
	sn := storageNode("a")
	obs := observation(p, sn)
	d := Policy(obs)
	provisioned(t, sn, d.Claims[0].Want)
	sn.Spec.Mode = prismv1.ModeDryRun // not what the policy wants
	d = Policy(obs)
	if len(d.Claims) != 1 || !reflect.DeepEqual(d.Rook.Waiting, []string{"a"}) {
		t.Fatalf("claims %v, waiting %v", claimNames(d.Claims), d.Rook.Waiting)
	}
	obs.AssumeProvisioned = true
	if d = Policy(obs); !reflect.DeepEqual(d.Rook.Ready, []string{"a"}) {
		t.Fatalf("offline: ready %v", d.Rook.Ready)
	}
}

// A preview takes the DB volumes an agent has not made yet as made, where the plan puts them;
// the operator does not, and the StorageNode's status is left as it was.
func TestPolicyAssumesPendingDBVolumesReady(t *testing.T) {
	p := policyOf(prismv1.ModeApply, storage)
	sn := storageNode("a")
	obs := observation(p, sn)
	provisioned(t, sn, Policy(obs).Claims[0].Want)
	var lvs []string
	for _, f := range sn.Spec.Plan.FastDevices {
		for _, s := range f.Slots {
			sn.Status.Partitions = append(sn.Status.Partitions, prismv1.PartitionStatus{Device: f.StablePath, Number: s.Partition.Number,
				State: prismv1.PartitionReady, Volume: &prismv1.DBVolumeStatus{Path: prismv1.DBVolumePath(f.StablePath, s.Index), State: prismv1.DBVolumePending}})
			if s.DataDevice != "" {
				lvs = append(lvs, prismv1.DBVolumePath(f.StablePath, s.Index))
			}
		}
	}
	if d := Policy(obs); !reflect.DeepEqual(d.Rook.Waiting, []string{"a"}) || d.Rook.Unverified["a"] == "" {
		t.Fatalf("operator: waiting %v, unverified %v; want a waiting for its volumes", d.Rook.Waiting, d.Rook.Unverified)
	}
	obs.AssumeProvisioned = true
	d := Policy(obs)
	if !reflect.DeepEqual(d.Rook.Ready, []string{"a"}) || len(d.Rook.Entries) != 1 {
		t.Fatalf("preview: ready %v, entries %v", d.Rook.Ready, d.Rook.Entries)
	}
	var got []string
	for _, dev := range d.Rook.Entries[0].Devices {
		got = append(got, dev.Config.MetadataDevice)
	}
	slices.Sort(got)
	slices.Sort(lvs)
	if len(lvs) == 0 || !reflect.DeepEqual(got, lvs) {
		t.Errorf("preview names %v, want the volumes %v", got, lvs)
	}
	if sn.Status.Partitions[0].Volume.State != prismv1.DBVolumePending {
		t.Errorf("the StorageNode's status was changed: %+v", sn.Status.Partitions[0].Volume)
	}
}

func TestPolicyReleases(t *testing.T) {
	claimedBy := func(name, policy string) *prismv1.StorageNode {
		sn := storageNode(name)
		sn.Spec.PolicyName = policy
		return sn
	}
	cases := []struct {
		name     string
		mode     prismv1.PolicyMode
		refuse   bool
		selected []string
		want     []string // node: reason
	}{
		{"matched nodes stay; an unmatched one goes", prismv1.ModeApply, false, []string{"a", "b"}, []string{"gone: " + ReleaseNotMatched}},
		{"a refused plan keeps every node", prismv1.ModeApply, true, []string{"a"}, nil},
		{"dry run lets every node go", prismv1.ModeDryRun, true, []string{"a", "b"},
			[]string{"a: " + ReleaseDryRun, "b: " + ReleaseDryRun, "gone: " + ReleaseDryRun}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := policyOf(tc.mode, storage)
			if tc.refuse {
				// A cache naming a ClassificationPolicy that does not exist refuses every plan.
				p.Spec.Cache = prismv1.CacheSpec{Mode: prismv1.CacheWriteBack, ClassificationPolicyName: "missing"}
			}
			obs := Observation{Policy: p, Now: now, StorageNodes: []*prismv1.StorageNode{
				claimedBy("a", "fast"), claimedBy("b", "fast"), claimedBy("gone", "fast"), claimedBy("theirs", "other")}}
			for _, n := range tc.selected {
				obs.Nodes = append(obs.Nodes, Node{Name: n, Labels: storage})
			}
			d := Policy(obs)
			if tc.refuse && len(d.Plan.Problems) == 0 {
				t.Fatal("the plan was not refused")
			}
			var got []string
			for _, r := range d.Releases {
				got = append(got, r.StorageNode.Name+": "+r.Reason)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("releases %q, want %q", got, tc.want)
			}
			if tc.mode == prismv1.ModeDryRun || tc.refuse {
				if len(d.Claims) != 0 {
					t.Errorf("claims %v in dry run or on a refused plan", claimNames(d.Claims))
				}
			}
		})
	}
}

func TestPolicyLeavesOtherPoliciesNodesAlone(t *testing.T) {
	p := policyOf(prismv1.ModeApply, storage)
	theirs := storageNode("theirs")
	theirs.Spec.PolicyName = "other"
	d := Policy(observation(p, theirs, storageNode("free")))
	if got := claimNames(d.Claims); !reflect.DeepEqual(got, []string{"free"}) {
		t.Fatalf("claims %v, want only free", got)
	}
	if sel := d.Plan.Nodes[1].Selection; sel.Node != "theirs" || !strings.Contains(sel.Message, "other") {
		t.Fatalf("selection of theirs: %+v", sel)
	}
}

func TestPolicyHostnameLabelReachesLocalVolumes(t *testing.T) {
	// A node whose kubernetes.io/hostname differs from its name (some clouds): the decision
	// reads it from the observed Node, as the operator once read it with a GET per node.
	if got := hostnameOf(Node{Name: "ip-10-0-0-1.ec2.internal", Labels: map[string]string{"kubernetes.io/hostname": "ip-10-0-0-1"}}); got != "ip-10-0-0-1" {
		t.Errorf("hostname %q", got)
	}
	if got := hostnameOf(Node{Name: "n1"}); got != "n1" {
		t.Errorf("hostname without the label %q", got)
	}
}

func TestPolicyInvalidSelectorDecidesNothing(t *testing.T) {
	p := policyOf(prismv1.ModeApply, nil)
	p.Spec.NodeSelector.MatchExpressions = []prismv1.NodeSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}
	sn := storageNode("a")
	sn.Spec.PolicyName = "fast"
	d := Policy(observation(p, sn))
	if !strings.Contains(d.InvalidSelector, "spec.nodeSelector.matchExpressions[0].values: Required value") {
		t.Fatalf("InvalidSelector %q", d.InvalidSelector)
	}
	if len(d.Claims)+len(d.Releases) != 0 || d.Rook.Outcome.Reason != "" {
		t.Fatalf("decided %v %v %+v on an invalid selector", d.Claims, d.Releases, d.Rook.Outcome)
	}
}

func TestNodeSelectorNamesTheField(t *testing.T) {
	cases := []struct {
		name string
		ls   metav1.LabelSelector
		want string
	}{
		{"In without values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpIn}}},
			"spec.nodeSelector.matchExpressions[0].values: Required value"},
		{"Exists with values", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: metav1.LabelSelectorOpExists}, {Key: "k", Operator: metav1.LabelSelectorOpExists, Values: []string{"v"}}}},
			"spec.nodeSelector.matchExpressions[1].values: Forbidden"},
		{"unknown operator", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}}},
			"spec.nodeSelector.matchExpressions[0].operator: Invalid value"},
		{"bad label value", metav1.LabelSelector{MatchLabels: map[string]string{"k": "not a value"}},
			"spec.nodeSelector.matchLabels: Invalid value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NodeSelector(&tc.ls)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if sel, err := NodeSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"prism.storage.io/role": "storage"}}); err != nil || sel.String() != "prism.storage.io/role=storage" {
		t.Fatalf("valid selector: %v %v", sel, err)
	}
}

// A node the policy manages that cannot be seen (its StorageNode deleted, or re-created and
// without an inventory yet) keeps its plan and its Rook entries: a failed observation never
// withdraws anything. Before, it got no plan, its claim lost the plan and its entries were
// withdrawn from the CephCluster. Taking the node out of the selector still withdraws them.
func TestPolicyKeepsTheEntriesOfANodeItCannotSee(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(obs *Observation)
		why     string // "": a real observation, a's entries go
		release bool
	}{
		{"StorageNode deleted", func(obs *Observation) { obs.StorageNodes = obs.StorageNodes[1:] }, "no StorageNode", false},
		{"StorageNode re-created, no inventory yet", func(obs *Observation) {
			obs.StorageNodes[0] = &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1}}
		}, "its agent has published no inventory yet", false},
		{"inventory lost from the status, plan kept", func(obs *Observation) {
			obs.StorageNodes[0].Status.Devices = nil
			obs.StorageNodes[0].Status.Conditions = []metav1.Condition{{Type: prismv1.ConditionInventoried, Status: metav1.ConditionFalse, Reason: "Failed"}}
		}, "its agent has published no inventory yet", false},
		{"node taken out of the selector", func(obs *Observation) { obs.Nodes[0].Labels = nil }, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, before := appliedTwoNodes(t)
			tc.change(&obs)
			d := Policy(obs)
			if d.RookErr != nil {
				t.Fatal(d.RookErr)
			}
			if got := len(d.Releases) > 0; got != tc.release {
				t.Errorf("releases %v", d.Releases)
			}
			if tc.why == "" {
				if !slices.Contains(d.Rook.Drop, "a") {
					t.Errorf("a real deselection kept a's entries: drop %v kept %v", d.Rook.Drop, d.Rook.Kept)
				}
				return
			}
			for _, c := range d.Claims {
				if c.StorageNode.Name == "a" && c.Want.Plan == nil && c.StorageNode.Spec.Plan != nil {
					t.Errorf("the claim of a node that cannot be seen drops its plan")
				}
			}
			if slices.Contains(d.Rook.Drop, "a") || !slices.Contains(d.Rook.Kept, "a") || d.Rook.Unobserved["a"] != tc.why {
				t.Fatalf("drop %v, kept %v, unobserved %v; want a kept because %s", d.Rook.Drop, d.Rook.Kept, d.Rook.Unobserved, tc.why)
			}
			if got, want := jsonOf(t, d.Rook.Nodes), jsonOf(t, before); got != want {
				t.Errorf("storage.nodes changed:\n%s\nwas\n%s", got, want)
			}
			if d.Rook.Outcome.OK || !strings.Contains(d.Rook.Outcome.Message, "a: "+tc.why) {
				t.Errorf("outcome %+v does not say why a's entries stay", d.Rook.Outcome)
			}
		})
	}
}

// appliedTwoNodes is nodes a and b claimed, provisioned and their entries applied: the
// observation with the CephCluster as Rook has it after the apply, and its storage.nodes.
func appliedTwoNodes(t *testing.T) (Observation, []any) {
	t.Helper()
	p := policyOf(prismv1.ModeApply, storage)
	obs := observation(p, storageNode("a"), storageNode("b"))
	d := Policy(obs)
	for i, c := range d.Claims {
		provisioned(t, obs.StorageNodes[i], c.Want)
	}
	d = Policy(obs)
	if !d.Rook.Changed || !reflect.DeepEqual(d.Rook.Ready, []string{"a", "b"}) {
		t.Fatalf("setup: ready %v, changed %v", d.Rook.Ready, d.Rook.Changed)
	}
	obs.Cluster = d.Rook.Object
	return obs, d.Rook.Nodes
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A planned device whose latest inventory record is partial changes nothing: the node's plan
// stays as claimed (no claim to write), its Rook entries stay, and the node's selection says
// which device and which read. Before, the device left the selection (its size read as 0
// failed MinimumSize; its model unread made it tier Other), the node was re-claimed with a
// plan without it and its entries were rewritten without it, or withdrawn.
func TestPolicyKeepsThePlanOfADeviceWithAPartialRecord(t *testing.T) {
	readFailed := func(d *prismv1.Device, attr string) {
		d.Eligibility = prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{{Filter: prismv1.FilterReadable,
			Message: "could not read the device completely, so it cannot be proven empty: sys/block/" + d.Name + "/" + attr + ": input/output error"}}}
	}
	for _, tc := range []struct {
		name  string
		index int // of the device in storageNode's inventory
		attr  string
		blank func(d *prismv1.Device)
	}{
		{"a capacity device's size", 1, "size", func(d *prismv1.Device) {
			d.SizeBytes = 0
			d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterMinimumSize, Message: "0 bytes is below the 5 GB ceph-volume minimum"})
		}},
		{"a capacity device's model", 2, "device/model", func(d *prismv1.Device) { d.Model, d.Tier = "", prismv1.TierOther }},
		{"the fast device's model", 0, "device/model", func(d *prismv1.Device) { d.Model, d.Tier = "", prismv1.TierOther }},
		{"the fast device's size", 0, "size", func(d *prismv1.Device) {
			d.SizeBytes = 0
			d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: prismv1.FilterMinimumSize, Message: "0 bytes is below the 5 GB ceph-volume minimum"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, nodes := appliedTwoNodes(t)
			before := jsonOf(t, nodes)

			dev := &obs.StorageNodes[0].Status.Devices[tc.index]
			readFailed(dev, tc.attr)
			tc.blank(dev)
			d := Policy(obs)
			if d.RookErr != nil || len(d.Plan.Problems) > 0 {
				t.Fatalf("rook error %v, problems %v", d.RookErr, d.Plan.Problems)
			}
			if len(d.Claims) != 0 {
				t.Errorf("claims %v: a's plan changed to %+v", claimNames(d.Claims), d.Claims[0].Want.Plan)
			}
			if got := jsonOf(t, d.Rook.Nodes); got != before || slices.Contains(d.Rook.Drop, "a") {
				t.Errorf("storage.nodes changed (drop %v):\n%s\nwas\n%s", d.Rook.Drop, got, before)
			}
			w := strings.Join(d.Plan.Nodes[0].Selection.Warnings, " | ")
			if !strings.Contains(w, dev.Name+" (") || !strings.Contains(w, tc.attr+": input/output error") {
				t.Errorf("a's warnings %q do not name %s and its failed read", w, dev.Name)
			}
		})
	}
}

// A planned QLC drive gone from the inventory (pulled, or its NVMe-oF path down) while its DB
// slot holds an OSD's DB: the node's plan keeps the drive in its slot and its Rook entry stays,
// so no new drive is prepared over that DB. Once the agent reads the slot Empty (zapped), the
// slot is freed. The slot's content comes from the StorageNode's status.
func TestPolicyKeepsTheSlotOfAGoneDriveUntilItsAgentReadsItEmpty(t *testing.T) {
	obs, nodes := appliedTwoNodes(t)
	before := jsonOf(t, nodes)
	sn := obs.StorageNodes[0]
	fast := sn.Spec.Plan.FastDevices[0]
	gone := sn.Status.Devices[2].StablePath
	for _, s := range fast.Slots {
		content, found := prismv1.DBSlotEmpty, ""
		if s.DataDevice == gone {
			content, found = prismv1.DBSlotInUse, "ceph_bluestore"
		}
		sn.Status.Partitions = append(sn.Status.Partitions, prismv1.PartitionStatus{Device: fast.StablePath, Number: s.Partition.Number,
			State: prismv1.PartitionReady, DBContent: content, DBFound: found})
	}
	sn.Status.Devices = sn.Status.Devices[:2]

	d := Policy(obs)
	if len(d.Claims) != 0 {
		t.Fatalf("a re-claimed with %+v: the gone drive's slot was freed", d.Claims[0].Want.Plan)
	}
	if got := jsonOf(t, d.Rook.Nodes); got != before {
		t.Errorf("storage.nodes changed:\n%s\nwas\n%s", got, before)
	}
	if w := strings.Join(d.Plan.Nodes[0].Selection.Warnings, " | "); !strings.Contains(w, "keeps "+gone) || !strings.Contains(w, "ceph_bluestore") {
		t.Errorf("a's warnings %q do not say the slot is kept for %s", w, gone)
	}

	// Zapped: the slot is read Empty, and the plan lets the drive go.
	for i := range sn.Status.Partitions {
		sn.Status.Partitions[i].DBContent, sn.Status.Partitions[i].DBFound = prismv1.DBSlotEmpty, ""
	}
	d = Policy(obs)
	if len(d.Claims) != 1 {
		t.Fatalf("claims %v, want a re-claimed without the gone drive", claimNames(d.Claims))
	}
	for _, s := range d.Claims[0].Want.Plan.FastDevices[0].Slots {
		if s.DataDevice == gone {
			t.Errorf("slot %d still names %s after it was read Empty", s.Index, gone)
		}
	}
}

// A node's planned fast device missing from its inventory while no plan can be made without it
// (after a reboot, a fabric or an HBA that comes up after the agent's first inventory; a fast
// device that died before its replacement is inserted): the node keeps its plan, its claim and
// its Rook entry, as a node that cannot be seen does, and says why. Before, the operator wrote
// the StorageNode's spec without a plan and dropped the entry: the drives coming back found the
// fast device holding partitions no plan claimed. Once a fast device is there again, a plan is
// made as before.
func TestPolicyKeepsThePlanOfANodeWhoseFastDeviceIsAbsent(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep func(devs []prismv1.Device) []prismv1.Device
	}{
		{"every planned drive absent", func(devs []prismv1.Device) []prismv1.Device {
			return []prismv1.Device{{Name: "nvme7n1", StablePath: "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_e2e-work", SizeBytes: 64 * gib, Tier: prismv1.TierOther}}
		}},
		{"the fast device absent", func(devs []prismv1.Device) []prismv1.Device { return devs[1:] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, nodes := appliedTwoNodes(t)
			before := jsonOf(t, nodes)
			sn := obs.StorageNodes[0]
			fast := sn.Spec.Plan.FastDevices[0].StablePath
			sn.Status.Devices = tc.keep(sn.Status.Devices)
			sn.Status.Conditions = append(sn.Status.Conditions, metav1.Condition{Type: prismv1.ConditionInventoried, Status: metav1.ConditionTrue, Reason: "Inventoried"})

			d := Policy(obs)
			if d.RookErr != nil {
				t.Fatal(d.RookErr)
			}
			if len(d.Claims) != 0 {
				t.Fatalf("claims %v: a's spec rewritten with plan %+v", claimNames(d.Claims), d.Claims[0].Want.Plan)
			}
			if got := jsonOf(t, d.Rook.Nodes); got != before || slices.Contains(d.Rook.Drop, "a") {
				t.Fatalf("storage.nodes changed (drop %v):\n%s\nwas\n%s", d.Rook.Drop, got, before)
			}
			if why := d.Rook.Unobserved["a"]; !strings.Contains(why, fast) {
				t.Errorf("a waits for %q, want the absent fast device %s named", why, fast)
			}
		})
	}

	// Another fast device of the policy's there (the dead one's replacement): a plan is made.
	obs, _ := appliedTwoNodes(t)
	sn := obs.StorageNodes[0]
	repl := sn.Status.Devices[0]
	repl.Name, repl.StablePath = "nvme8n1", "/dev/disk/by-id/nvme-a_new"
	sn.Status.Devices = append([]prismv1.Device{repl}, sn.Status.Devices[1:]...)
	d := Policy(obs)
	if _, kept := d.Rook.Unobserved["a"]; kept {
		t.Errorf("a left alone although a plan can be made on %s: %s", repl.StablePath, d.Rook.Unobserved["a"])
	}
	if len(d.Claims) != 1 || d.Claims[0].Want.Plan == nil || !slices.ContainsFunc(d.Claims[0].Want.Plan.FastDevices, func(f prismv1.FastDevicePlan) bool { return f.StablePath == repl.StablePath }) {
		t.Errorf("claims %+v: want a re-planned on %s", d.Claims, repl.StablePath)
	}
}
