package rook

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

var now = time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)

const (
	policy = "fast"
	gib    = int64(1) << 30
)

// slotPlan is a node plan with one 60 GiB DB slot per data device on fast device fast.
func slotPlan(fast string, data ...string) prismv1.NodePlan {
	f := prismv1.FastDevicePlan{StablePath: "/dev/disk/by-id/" + fast, SlotSizeBytes: 60 * gib}
	for i, d := range data {
		f.Slots = append(f.Slots, prismv1.DBSlot{Index: int32(i), DataDevice: "/dev/disk/by-id/" + d, Partition: prismv1.PlannedPartition{Number: int32(i + 1)}})
	}
	return prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{f}}
}

// entry is a storage.nodes entry as Prism writes it for slotPlan(fast, data...).
func entry(node, fast string, data ...string) map[string]any {
	var devices []any
	for i, d := range data {
		devices = append(devices, map[string]any{"name": "/dev/disk/by-id/" + d,
			"config": map[string]any{"metadataDevice": prismv1.PartitionPath("/dev/disk/by-id/"+fast, int32(i+1))}})
	}
	return map[string]any{"name": node, "devices": devices, "config": map[string]any{"deviceClass": "qlc", "databaseSizeMB": "61440"}}
}

// cluster is a CephCluster with spec.storage.nodes, annotations and Ceph's health.
func cluster(nodes []any, annotations map[string]string, health string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"storage": map[string]any{"nodes": nodes},
		"cephVersion": map[string]any{"image": "quay.io/ceph/ceph:v19.2.3"}}}}
	u.SetGroupVersionKind(CephClusterGVK)
	u.SetNamespace("rook-ceph")
	u.SetName("ceph")
	u.SetAnnotations(annotations)
	if health != "" {
		_ = unstructured.SetNestedField(u.Object, map[string]any{"health": health, "lastChanged": now.Add(-time.Hour).Format(time.RFC3339)}, "status", "ceph")
	}
	return u
}

// withCeph is c with the Ceph version Rook reports in its status.
func withCeph(c *unstructured.Unstructured, version string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(c.Object, version, "status", "version", "version")
	return c
}

// onVolumes is n with the status its agent reports for slotPlan's slots: partitions 1, 2, …
// of its fast device Ready, with the volumes given (nil: none).
func withVolumes(n Node, volumes ...*prismv1.DBVolumeStatus) Node {
	fast := n.Plan.FastDevices[0].StablePath
	for i, v := range volumes {
		num := int32(i + 1)
		n.Status.Partitions = append(n.Status.Partitions, prismv1.PartitionStatus{Device: fast, Number: num, Path: prismv1.PartitionPath(fast, num),
			State: prismv1.PartitionReady, Volume: v})
	}
	return n
}

// volumeAt is a DB volume in state at path.
func volumeAt(state prismv1.DBVolumeState, path string) *prismv1.DBVolumeStatus {
	return &prismv1.DBVolumeStatus{Path: path, State: state}
}

// readyVolume is slot index's volume on fast, Ready where the plan puts it.
func readyVolume(fast string, index int32) *prismv1.DBVolumeStatus {
	return volumeAt(prismv1.DBVolumeReady, prismv1.DBVolumePath("/dev/disk/by-id/"+fast, index))
}

// inUse is a slot whose partition an OSD already has as its DB.
var inUse = volumeAt(prismv1.DBVolumePartitionInUse, "")

// written lists the devices of entries as "node device metadataDevice databaseSizeMB", with
// the size Rook applies (the device's, else its node's); device names lose /dev/disk/by-id/.
func written(entries []RookNode) []string {
	var out []string
	for _, e := range entries {
		for _, d := range e.Devices {
			size := d.Config.DatabaseSizeMB
			if size == "" {
				size = e.Config["databaseSizeMB"]
			}
			out = append(out, strings.TrimSpace(strings.Join([]string{e.Name, strings.TrimPrefix(d.Name, "/dev/disk/by-id/"), d.Config.MetadataDevice, size}, " ")))
		}
	}
	return out
}

// answered is in with node a's Ceph answers from a state recorded on Ceph 16 (testdata/ceph16),
// read a minute ago. In "purged", the OSD that was on a's drive is gone and no OSD of the node
// is down; in "inactive", PGs are inactive.
func answered(in Input, state string) Input {
	in.Answers = map[string]CephAnswers{"a": cephAnswersOf("ceph16", state, now.Add(-time.Minute))}
	return in
}

func input(c *unstructured.Unstructured, nodes ...Node) Input {
	return Input{Policy: policy, Manager: "prism-operator/" + policy, DeviceClass: "qlc", ClusterRef: "rook-ceph/ceph",
		Cluster: c, Nodes: nodes, Now: now}
}

func names(entries []RookNode) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func nodeNames(nodes []any) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.(map[string]any)["name"].(string))
	}
	return out
}

// Paths of slotPlan("nvme-A", …)'s slots.
var (
	partA1, partA2 = prismv1.PartitionPath("/dev/disk/by-id/nvme-A", 1), prismv1.PartitionPath("/dev/disk/by-id/nvme-A", 2)
	lvA0, lvA1     = prismv1.DBVolumePath("/dev/disk/by-id/nvme-A", 0), prismv1.DBVolumePath("/dev/disk/by-id/nvme-A", 1)
)

func TestDecide(t *testing.T) {
	key := ManagedNodesAnnotation(policy)
	a := Node{Name: "a", Plan: slotPlan("nvme-A", "q1", "q2"), Ready: true}
	b := Node{Name: "b", Plan: slotPlan("nvme-B", "q1"), Ready: false}
	admins := map[string]any{"name": "admins-node", "devices": []any{map[string]any{"name": "sdz"}}}

	type want struct {
		reason        string
		message       []string // substrings
		ok, changed   bool
		entries, drop []string
		kept          []string
		nodes         []string // names in the CephCluster's storage.nodes after the apply
		managed       string
		release       string // prefix; "" none
		requeue       time.Duration
		devices       []string // written(entries); nil: not checked
	}
	tests := []struct {
		name string
		in   Input
		want want
	}{
		{"dry run: nothing read, nothing applied",
			func() Input { in := input(nil, a); in.DryRun = true; return in }(),
			want{reason: ReasonDryRun, message: []string{"dry run"}}},
		{"a refused plan applies nothing",
			func() Input { in := input(cluster(nil, nil, ""), a); in.PlanRefused = true; return in }(),
			want{reason: ReasonPlanRefused, message: []string{"refused"}}},
		{"no CephCluster",
			input(nil, a),
			want{reason: ReasonCephClusterNotFound, message: []string{"CephCluster rook-ceph/ceph does not exist"}}},
		{"useAllNodes makes per-node entries moot",
			input(func() *unstructured.Unstructured {
				c := cluster(nil, nil, "")
				_ = unstructured.SetNestedField(c.Object, true, "spec", "storage", "useAllNodes")
				return c
			}(), a),
			want{reason: ReasonCephClusterAllNodes, message: []string{"useAllNodes is true"}}},
		{"a ready node's entry is added beside the admin's",
			input(cluster([]any{admins}, nil, ""), a),
			want{reason: ReasonApplied, ok: true, changed: true, message: []string{"1 nodes' OSD entries in CephCluster rook-ceph/ceph"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"admins-node", "a"}, managed: "a"}},
		{"nothing to do when the CephCluster already has it",
			input(cluster([]any{admins, entry("a", "nvme-A", "q1", "q2")}, map[string]string{key: "a"}, ""), a),
			want{reason: ReasonApplied, ok: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"admins-node", "a"}, managed: "a"}},
		{"a waiting node keeps the entry it has",
			input(cluster([]any{entry("a", "nvme-A", "q1", "q2"), entry("b", "nvme-B", "q1")}, map[string]string{key: "a,b"}, ""), a, b),
			want{reason: ReasonWaitingForPartitions, changed: true, message: []string{"waiting for the agents to create the DB partitions on b"},
				entries: []string{"a"}, kept: []string{"b"}, nodes: []string{"b", "a"}, managed: "a,b"}},
		{"a node the policy let go loses its entry, and the status says why",
			func() Input {
				in := input(cluster([]any{entry("a", "nvme-A", "q1", "q2"), entry("c", "nvme-C", "q1"), admins}, map[string]string{key: "a,c"}, ""), a)
				in.Released = map[string]string{"c": "no Node matching spec.nodeSelector has this name any more"}
				return in
			}(),
			want{reason: ReasonApplied, ok: true, changed: true, message: []string{"withdrew the entry of node c (released: no Node matching"},
				entries: []string{"a"}, drop: []string{"c"}, kept: []string{}, nodes: []string{"admins-node", "a"}, managed: "a"}},
		{"a node without a plan any more loses its entry",
			func() Input {
				in := input(cluster([]any{entry("c", "nvme-C", "q1")}, map[string]string{key: "c"}, ""))
				in.Selections = []prismv1.NodeSelection{{Node: "c", Message: "no fast device"}}
				return in
			}(),
			want{reason: ReasonNothingToConfigure, changed: true, message: []string{"no node has a plan"},
				drop: []string{"c"}, kept: []string{}, managed: ""}},
		{"a moved DB waits while Ceph's PGs are inactive",
			answered(input(cluster([]any{entry("a", "nvme-OLD", "q1", "q2")}, map[string]string{key: "a"}, "HEALTH_WARN"), a), "inactive"),
			want{reason: ReasonReplacingOSDs, message: []string{"2 OSDs to re-create one at a time, first: a /dev/disk/by-id/q1"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", requeue: HealthRequeue}},
		{"a moved DB is released one OSD at a time when Ceph says the drive's OSD can go",
			answered(input(cluster([]any{entry("a", "nvme-OLD", "q1", "q2")}, map[string]string{key: "a"}, "HEALTH_WARN"), a), "purged"),
			want{reason: ReasonReplacingOSDs, changed: true, message: []string{"released the re-created OSD on a /dev/disk/by-id/q1 to Rook", "1 OSDs to re-create"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", release: "a /dev/disk/by-id/q1 ", requeue: HealthRequeue}},
		{"Ceph 20: a moved DB on a new partition is not released",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-OLD", "q1", "q2")}, map[string]string{key: "a"}, "HEALTH_WARN"), "20.2.4-0"), a), "purged"),
			want{reason: ReasonCephLosesPartitionDB, message: []string{"withheld: a (a new OSD on /dev/disk/by-id/q1 with its DB on partition /dev/disk/by-id/nvme-A-part1)"},
				kept: []string{"a"}, nodes: []string{"a"}, managed: "a"}},
		{"Ceph 20: a moved DB on a new volume is released",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-OLD", "q1", "q2")}, map[string]string{key: "a"}, "HEALTH_WARN"), "20.2.4-0"),
				withVolumes(a, readyVolume("nvme-A", 0), readyVolume("nvme-A", 1))), "purged"),
			want{reason: ReasonReplacingOSDs, changed: true, message: []string{"released the re-created OSD on a /dev/disk/by-id/q1 to Rook"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", release: "a /dev/disk/by-id/q1 ", requeue: HealthRequeue,
				devices: []string{"a q1 " + lvA0, "a q2 " + prismv1.PartitionPath("/dev/disk/by-id/nvme-OLD", 2) + " 61440"}}},
		// Ceph 20's ceph-volume loses a partition block.db (decision 0035): seen in the e2e chain
		// with Ceph 20.2.4, osd.0 aborting in expand-bluefs.
		{"Ceph 20 loses partition DBs: no new entry, the status says why",
			input(withCeph(cluster([]any{admins}, nil, ""), "20.2.4-0"), a),
			want{reason: ReasonCephLosesPartitionDB, message: []string{"Rook reports Ceph 20.2.4-0", "ceph/ceph#69506", "withheld: a"},
				kept: []string{}, nodes: []string{"admins-node"}}},
		{"Ceph 20: a new OSD on a partition withholds its node, whose entry written before is kept, not withdrawn",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{key: "a"}, ""), "20.2.4-0"), a), "purged"),
			want{reason: ReasonCephLosesPartitionDB, message: []string{"existing entries are kept",
				"withheld: a (a new OSD on /dev/disk/by-id/q2 with its DB on partition /dev/disk/by-id/nvme-A-part2)"},
				kept: []string{"a"}, nodes: []string{"a"}, managed: "a"}},
		{"Ceph 20: an entry already in the CephCluster as planned is written unchanged",
			input(withCeph(cluster([]any{entry("a", "nvme-A", "q1", "q2")}, map[string]string{key: "a"}, ""), "20.2.4-0"), a),
			want{reason: ReasonApplied, ok: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + partA2 + " 61440"}}},
		// Decision 0061: a new drive of a node with entries waits for Ceph to say that no OSD is
		// destroyed under the node's CRUSH host; its other entries are written as they are.
		{"a new drive of a node with entries: not written before Ceph's answers",
			input(withCeph(cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{key: "a"}, ""), "19.2.3-0"), a),
			want{reason: ReasonNewOSDsHeld, requeue: HealthRequeue, message: []string{"1 new drives not written yet, first: a /dev/disk/by-id/q2: a new drive; waiting: no answers from Ceph for a yet"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", devices: []string{"a q1 " + partA1 + " 61440"}}},
		{"a new drive of a node with osd.0 destroyed (Ceph 16): not written, the message names the purge",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{key: "a"}, ""), "19.2.3-0"), a), "destroyed"),
			want{reason: ReasonNewOSDsHeld, requeue: HealthRequeue, message: []string{"a /dev/disk/by-id/q2: a new drive; waiting: Ceph has osd.0 destroyed under a's CRUSH host",
				"purge it (ceph osd purge 0 --yes-i-really-mean-it; docs/runbooks/replace-data-disk.md step 2)"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", devices: []string{"a q1 " + partA1 + " 61440"}}},
		{"a new drive of a node with none destroyed (Ceph 16, purged): written",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{key: "a"}, ""), "19.2.3-0"), a), "purged"),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + partA2 + " 61440"}}},
		{"Ceph 19 wraps the partition in an LV of its own: entries are written",
			input(withCeph(cluster(nil, nil, ""), "19.2.3-0"), a),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a"}},
		// Decision 0036: DB slots reach Rook as the agent's logical volumes, which Ceph 20 keeps.
		{"Ceph 20 with every volume Ready: the entries name the volumes, without databaseSizeMB",
			input(withCeph(cluster(nil, nil, ""), "20.2.4-0"), withVolumes(a, readyVolume("nvme-A", 0), readyVolume("nvme-A", 1))),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + lvA0, "a q2 " + lvA1}}},
		{"Ceph 19 with every volume Ready: the same",
			input(withCeph(cluster(nil, nil, ""), "19.2.3-0"), withVolumes(a, readyVolume("nvme-A", 0), readyVolume("nvme-A", 1))),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + lvA0, "a q2 " + lvA1}}},
		{"Ceph 20, a node on volumes and one on partitions: the first is written, the second withheld",
			input(withCeph(cluster(nil, nil, ""), "20.2.4-0"), withVolumes(a, readyVolume("nvme-A", 0), readyVolume("nvme-A", 1)),
				Node{Name: "c", Plan: slotPlan("nvme-C", "q1"), Ready: true}),
			want{reason: ReasonCephLosesPartitionDB, changed: true, message: []string{"Rook reports Ceph 20.2.4-0",
				"withheld: c (a new OSD on /dev/disk/by-id/q1 with its DB on partition /dev/disk/by-id/nvme-C-part1)", "1 nodes' OSD entries"},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", devices: []string{"a q1 " + lvA0, "a q2 " + lvA1}}},
		{"Ceph 20, one node: an OSD on its partition already in the CephCluster stays, a new one goes on its volume",
			answered(input(withCeph(cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{key: "a"}, ""), "20.2.4-0"), withVolumes(a, inUse, readyVolume("nvme-A", 1))), "purged"),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + lvA1}}},
		{"Ceph 20: partitions in use, already in the CephCluster, are written unchanged",
			input(withCeph(cluster([]any{entry("a", "nvme-A", "q1", "q2")}, map[string]string{key: "a"}, ""), "20.2.4-0"), withVolumes(a, inUse, inUse)),
			want{reason: ReasonApplied, ok: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + partA2 + " 61440"}}},
		{"Ceph 20: a partition in use that the CephCluster does not name is a new entry from a partition: withheld",
			input(withCeph(cluster(nil, nil, ""), "20.2.4-0"), withVolumes(a, readyVolume("nvme-A", 0), inUse)),
			want{reason: ReasonCephLosesPartitionDB, message: []string{"withheld: a (a new OSD on /dev/disk/by-id/q2 with its DB on partition /dev/disk/by-id/nvme-A-part2)"},
				kept: []string{}}},
		{"Ceph 19: a partition in use keeps naming the partition",
			input(withCeph(cluster(nil, nil, ""), "19.2.3-0"), withVolumes(a, inUse, readyVolume("nvme-A", 1))),
			want{reason: ReasonApplied, ok: true, changed: true, entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a",
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + lvA1}}},
		// The agent makes a volume only on a partition proven empty, so no OSD has its DB there;
		// still, a changed metadataDevice for a device already in the CephCluster goes through
		// replacement pacing, as any DB move does.
		{"an entry naming a slot's partition whose volume is now Ready: the change waits for Ceph's health",
			input(withCeph(cluster([]any{entry("a", "nvme-A", "q1", "q2")}, map[string]string{key: "a"}, "HEALTH_WARN"), "19.2.3-0"),
				withVolumes(a, readyVolume("nvme-A", 0), inUse)),
			// Changed: the size moves from the node to each device, which Rook applies alike.
			want{reason: ReasonReplacingOSDs, changed: true, message: []string{"1 OSDs to re-create one at a time, first: a /dev/disk/by-id/q1: DB moves from " + partA1 + " to " + lvA0},
				entries: []string{"a"}, kept: []string{}, nodes: []string{"a"}, managed: "a", requeue: HealthRequeue,
				devices: []string{"a q1 " + partA1 + " 61440", "a q2 " + partA2 + " 61440"}}},
		{"a Ready volume at another path: the node waits and keeps the entry it has",
			input(withCeph(cluster([]any{entry("a", "nvme-A", "q1", "q2")}, map[string]string{key: "a"}, ""), "19.2.3-0"),
				withVolumes(a, volumeAt(prismv1.DBVolumeReady, "/dev/vg/other"), readyVolume("nvme-A", 1))),
			want{reason: ReasonWaitingForPartitions, message: []string{"not written until the agent reports each DB volume Ready where the plan puts it",
				`a: DB volumes not verified: /dev/disk/by-id/nvme-A-part1: volume Ready at "/dev/vg/other", not at "` + lvA0 + `"`},
				kept: []string{"a"}, nodes: []string{"a"}, managed: "a"}},
		{"Pending and Refused volumes on a node reported ready: nothing written, on Ceph 20 nothing withheld either",
			input(withCeph(cluster(nil, nil, ""), "20.2.4-0"), withVolumes(a, volumeAt(prismv1.DBVolumePending, lvA0), volumeAt(prismv1.DBVolumeRefused, lvA1)), b),
			want{reason: ReasonWaitingForPartitions, message: []string{"waiting for the agents to create the DB partitions on b;",
				"a: DB volumes not verified: /dev/disk/by-id/nvme-A-part1: volume Pending; /dev/disk/by-id/nvme-A-part2: volume Refused"},
				kept: []string{}, managed: ""}},
		{"a Failed volume",
			input(cluster(nil, nil, ""), withVolumes(a, nil, volumeAt(prismv1.DBVolumeFailed, lvA1))),
			want{reason: ReasonWaitingForPartitions, message: []string{"/dev/disk/by-id/nvme-A-part2: volume Failed"}, kept: []string{}, managed: ""}},
		{"Ceph 20 with no node ready: waiting, nothing withheld",
			input(withCeph(cluster(nil, nil, ""), "20.2.4-0"), b),
			want{reason: ReasonWaitingForPartitions, message: []string{"waiting for the agents"}, kept: []string{}, managed: ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.want
			if d.Outcome.Reason != w.reason || d.Outcome.OK != w.ok || d.Outcome.RequeueAfter != w.requeue {
				t.Errorf("outcome %+v, want reason %s ok %v requeue %v", d.Outcome, w.reason, w.ok, w.requeue)
			}
			if len(w.drop) == 0 && strings.Contains(d.Outcome.Message, "withdrew") {
				t.Errorf("message %q withdraws an entry, but none is dropped", d.Outcome.Message)
			}
			for _, m := range w.message {
				if !strings.Contains(d.Outcome.Message, m) {
					t.Errorf("message %q lacks %q", d.Outcome.Message, m)
				}
			}
			if d.Changed != w.changed || (d.Object != nil) != w.changed {
				t.Errorf("changed %v (object %v), want %v", d.Changed, d.Object != nil, w.changed)
			}
			if d.Sets == nil {
				if w.entries != nil || w.managed != "" {
					t.Errorf("nothing decided, want entries %v", w.entries)
				}
				return
			}
			check := func(what string, got, want []string) {
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", what, got, want)
				}
			}
			check("entries", names(d.Entries), w.entries)
			check("drop", d.Drop, w.drop)
			check("kept", d.Kept, w.kept)
			check("storage.nodes", nodeNames(d.Nodes), w.nodes)
			if w.devices != nil {
				check("written devices", written(d.Entries), w.devices)
			}
			if tc.in.Cluster != nil && PartitionDBWithheld(tc.in.Cluster) != "" {
				// What is written on such a Ceph never hands Rook a new OSD from a partition.
				existing, _, _ := unstructured.NestedSlice(tc.in.Cluster.Object, "spec", "storage", "nodes")
				had := ExistingMetadataDevices(existing)
				for _, e := range d.Entries {
					for _, dev := range e.Devices {
						if meta := dev.Config.MetadataDevice; !strings.HasPrefix(meta, "/dev/prism-db-") && had[e.Name][dev.Name] != meta {
							t.Errorf("%s %s: a new OSD from partition %s", e.Name, dev.Name, meta)
						}
					}
				}
			}
			if d.Managed != w.managed {
				t.Errorf("managed %q, want %q", d.Managed, w.managed)
			}
			if !strings.HasPrefix(d.Release, w.release) || (w.release == "") != (d.Release == "") {
				t.Errorf("release %q, want %q…", d.Release, w.release)
			}
			if d.Changed {
				if got := d.Object.GetAnnotations()[ManagedNodesAnnotation(policy)]; got != w.managed {
					t.Errorf("applied annotation %q, want %q", got, w.managed)
				}
				if !strings.HasPrefix(d.Event, "applied ") {
					t.Errorf("event %q", d.Event)
				}
			}
		})
	}
}

func TestDecideEntryDatabaseSize(t *testing.T) {
	d, err := Decide(input(cluster(nil, nil, ""), Node{Name: "a", Plan: slotPlan("nvme-A", "q1"), Ready: true}))
	if err != nil {
		t.Fatal(err)
	}
	// The slot's size in the plan (bytes) is the entry's databaseSizeMB.
	nodes, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "storage", "nodes")
	if size := nodes[0].(map[string]any)["config"].(map[string]any)["databaseSizeMB"]; size != "61440" {
		t.Errorf("databaseSizeMB %v, want 61440 (60 GiB)", size)
	}
}

func TestDecideMergeConflictNamesTheField(t *testing.T) {
	_, err := Decide(input(cluster([]any{"not an entry"}, nil, ""), Node{Name: "a", Plan: slotPlan("nvme-A", "q1"), Ready: true}))
	if err == nil || !strings.Contains(err.Error(), "spec.storage.nodes[0]") || !strings.Contains(err.Error(), "CephCluster ceph") {
		t.Errorf("err = %v, want one naming spec.storage.nodes[0] of CephCluster ceph", err)
	}
}

// cachedNode is a ready node whose fast device runs a cache with q1 as its core (Ready when
// coreReady), so its OSD goes through a device set and two local volumes.
func cachedNode(coreReady bool) Node {
	p := slotPlan("nvme-C", "q1")
	p.FastDevices[0].Cache = &prismv1.PlannedPartition{Number: 2}
	p.FastDevices[0].CacheID = 1
	core := prismv1.CacheCoreStatus{Device: "/dev/disk/by-id/q1", CoreID: 1, ExportedObject: "/dev/cas1-1", State: prismv1.CoreReady}
	if !coreReady {
		core.State = prismv1.CorePending
	}
	st := prismv1.StorageNodeStatus{
		Devices: []prismv1.Device{{StablePath: "/dev/disk/by-id/q1", SizeBytes: 8 << 40}},
		Caches:  []prismv1.CacheStatus{{FastDevice: "/dev/disk/by-id/nvme-C", Cores: []prismv1.CacheCoreStatus{core}}},
	}
	return Node{Name: "c", Plan: p, Ready: true, Status: st, Hostname: "c.example"}
}

func TestDecideDeviceSets(t *testing.T) {
	in := input(cluster(nil, nil, ""), cachedNode(true))
	in.Volumes = map[string]*corev1.PersistentVolume{}
	first, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	// Neither volume is in the ledger: the controller reads them by name first.
	if len(first.Lookup) != 2 || first.Sets != nil {
		t.Fatalf("lookup %v, sets %v: want the two volumes asked for and nothing decided", first.Lookup, first.Sets)
	}
	for _, name := range first.Lookup {
		in.Volumes[name] = nil // looked up: absent
	}
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Lookup) != 0 || len(d.ApplyVolumes) != 2 || !d.Changed || d.Outcome.Reason != ReasonApplied {
		t.Fatalf("lookup %v, %d volumes to apply, changed %v, outcome %+v", d.Lookup, len(d.ApplyVolumes), d.Changed, d.Outcome)
	}
	sets, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "storage", "storageClassDeviceSets")
	if len(sets) != 1 || len(d.Entries) != 0 || !strings.Contains(d.Outcome.Message, "1 OSDs on caches as device sets") {
		t.Errorf("device sets %v, entries %v, message %q: want one set and no storage.nodes entry", sets, d.Entries, d.Outcome.Message)
	}
	for _, v := range d.ApplyVolumes {
		if v.Labels[LabelDeviceSet] == "" {
			t.Errorf("volume %s has no device-set label", v.Name)
		}
	}

	// A core that is not Ready yet holds its OSD back.
	held := input(cluster(nil, nil, ""), cachedNode(false))
	d, err = Decide(held)
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome.Reason != ReasonWaitingForCacheCores || !strings.Contains(d.Outcome.Message, "c: 1 capacity devices wait for their cache cores") || len(d.ApplyVolumes) != 0 {
		t.Errorf("outcome %+v, %d volumes: want WaitingForCacheCores and none", d.Outcome, len(d.ApplyVolumes))
	}

	// Deleting the policy: unclaimed volumes go, the CephCluster loses the policy's entries.
	ledger := Ledger(func() []corev1.PersistentVolume {
		var out []corev1.PersistentVolume
		d, _ := Decide(in)
		for _, v := range d.ApplyVolumes {
			out = append(out, *v)
		}
		return out
	}())
	rm, err := DecideRemoval(policy, in.Manager, cluster([]any{entry("a", "nvme-A", "q1")}, map[string]string{ManagedNodesAnnotation(policy): "a"}, ""), ledger)
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, _ := unstructured.NestedSlice(rm.Object.Object, "spec", "storage", "nodes")
	if len(rm.DeleteVolumes) != 2 || len(nodes) != 0 {
		t.Errorf("removal deletes %d volumes and leaves %v: want 2 and no entry", len(rm.DeleteVolumes), nodes)
	}
}

func TestLostPartitionDB(t *testing.T) {
	for _, tc := range []struct {
		version string
		lost    bool
	}{
		{"20.2.4-0", true}, {"20.2.2", true}, {"21.0.0-123", true},
		{"19.2.3-0", false}, {"18.2.7", false},
		{"", false}, {"v20.2.4", false}, {"abc", false}, {"0.1", false}, {" 20.1.0 ", true},
	} {
		c := withCeph(cluster(nil, nil, ""), tc.version)
		if got := PartitionDBWithheld(c) != ""; got != tc.lost {
			t.Errorf("%q: lost %v, want %v", tc.version, got, tc.lost)
		}
		if got := LosesPartitionDB(tc.version); got != tc.lost {
			t.Errorf("LosesPartitionDB(%q) = %v, want %v", tc.version, got, tc.lost)
		}
	}
}

// The image's tag is the Ceph Rook is about to run: it withholds before Rook reports a version,
// and while Rook still reports the old one during an upgrade. Neither readable withholds too.
func TestLostPartitionDBFromTheImage(t *testing.T) {
	for _, tc := range []struct {
		image, reported string
		lost            string // a part of the message; "" for none
	}{
		{"quay.io/ceph/ceph:v19.2.3", "", ""},
		{"quay.io/ceph/ceph:v20.2.4", "", `spec.cephVersion.image "quay.io/ceph/ceph:v20.2.4" is Ceph 20.2.4`},
		{"quay.io/ceph/ceph:v20.2.4", "19.2.3-0", `is Ceph 20.2.4`},
		{"quay.io/ceph/ceph:v19.2.3", "20.2.4-0", "Rook reports Ceph 20.2.4-0"},
		{"registry.local:5000/ceph/ceph:v20", "", "is Ceph 20"},
		{"quay.io/ceph/ceph:v19.2.3-20250717", "", ""},
		{"quay.io/ceph/ceph:v20.2.4@sha256:0123", "", "is Ceph 20.2.4"},
		{"quay.io/ceph/ceph@sha256:0123", "19.2.3-0", ""},
		{"quay.io/ceph/ceph:latest-squid", "19.2.3-0", ""},
		{"quay.io/ceph/ceph:latest-squid", "", "the Ceph version is not known yet"},
		{"registry.local:5000/ceph", "", "the Ceph version is not known yet"},
		{"", "", "the Ceph version is not known yet"},
		{"prism.local/e2e/rook-ceph:v1.20.2-ceph-20.2.4", "", "the Ceph version is not known yet"},
		{"prism.local/e2e/rook-ceph:v1.20.2-ceph-20.2.4", "20.2.4-0", "Rook reports Ceph 20.2.4-0"},
		{"quay.io/ceph/ceph:v9.2.1", "", "the Ceph version is not known yet"},
		{"", "v20.2.4", "the Ceph version is not known yet"},
		{"", "18.2.7", ""},
	} {
		c := withCeph(cluster(nil, nil, ""), tc.reported)
		_ = unstructured.SetNestedField(c.Object, tc.image, "spec", "cephVersion", "image")
		got := PartitionDBWithheld(c)
		if (got == "") != (tc.lost == "") || !strings.Contains(got, tc.lost) {
			t.Errorf("image %q, reported %q: %q, want %q", tc.image, tc.reported, got, tc.lost)
		}
	}
}

// The CephCluster status Rook v1.20.2's real operator wrote with Ceph 20.2.4 (the e2e chain's
// first run): Decide reads the version where Rook puts it, and withholds the entry.
func TestRecordedRookStatusWithholdsPartitionDB(t *testing.T) {
	raw, err := os.ReadFile("testdata/rook-v1.20.2-ceph-20.2.4-status.json")
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]any
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatal(err)
	}
	c := cluster(nil, nil, "")
	c.Object["status"] = status
	d, err := Decide(input(c, Node{Name: "prism-guest", Plan: slotPlan("nvme-FAST", "qlc"), Ready: true}))
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome.Reason != ReasonCephLosesPartitionDB || !strings.Contains(d.Outcome.Message, "Ceph 20.2.4-0") {
		t.Errorf("outcome %+v, want %s naming Ceph 20.2.4-0", d.Outcome, ReasonCephLosesPartitionDB)
	}
	if len(d.Entries) != 0 || d.Changed {
		t.Errorf("entries %v, changed %v: want none written", names(d.Entries), d.Changed)
	}
}

// cephMajor reads what Rook writes into a status anyone can edit: it never panics, and a
// version it accepts has a positive major that the version starts with.
func FuzzCephMajor(f *testing.F) {
	for _, s := range []string{"20.2.4-0", "19.2.3", "", "v20", " 21.0.0 ", "0.1", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, version string) {
		n, ok := cephMajor(version)
		if !ok {
			return
		}
		head, _, _ := strings.Cut(strings.TrimSpace(version), ".")
		if n <= 0 || strconv.Itoa(n) != strings.TrimLeft(head, "+0") {
			t.Errorf("cephMajor(%q) = %d", version, n)
		}
	})
}

// A cached OSD's capacity device whose latest inventory record is partial (its size read as
// 0) keeps its device set in the CephCluster and its two local volumes, unclaimed or not;
// before, it was held as "not in the node's inventory", its set was removed from the
// CephCluster and its unclaimed volumes were deleted.
func TestDecideKeepsTheDeviceSetOfADeviceWithAPartialRecord(t *testing.T) {
	in := input(cluster(nil, nil, ""), cachedNode(true))
	in.Volumes = map[string]*corev1.PersistentVolume{}
	for _, name := range func() []string { d, _ := Decide(in); return d.Lookup }() {
		in.Volumes[name] = nil
	}
	first, err := Decide(in)
	if err != nil || len(first.ApplyVolumes) != 2 {
		t.Fatalf("first decision: %v, %d volumes", err, len(first.ApplyVolumes))
	}
	var made []corev1.PersistentVolume
	for _, v := range first.ApplyVolumes {
		made = append(made, *v)
	}
	applied := first.Object.DeepCopy()
	applied.SetAnnotations(map[string]string{ManagedNodesAnnotation(policy): first.Managed})

	n := cachedNode(true)
	n.Status.Devices[0].SizeBytes = 0
	n.Status.Devices[0].Eligibility.Reasons = []prismv1.EligibilityReason{
		{Filter: prismv1.FilterReadable, Message: "could not read the device completely, so it cannot be proven empty: sys/block/sdc/size: input/output error"},
		{Filter: prismv1.FilterMinimumSize, Message: "0 bytes is below the 5 GB ceph-volume minimum"}}
	again := input(applied, n)
	again.Ledger = Ledger(made)
	d, err := Decide(again)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.DeleteVolumes) != 0 {
		t.Errorf("deletes %d volumes of a device whose size could not be read", len(d.DeleteVolumes))
	}
	before, _, _ := unstructured.NestedSlice(applied.Object, "spec", "storage", "storageClassDeviceSets")
	if d.Changed {
		after, _, _ := unstructured.NestedSlice(d.Object.Object, "spec", "storage", "storageClassDeviceSets")
		if !reflect.DeepEqual(before, after) {
			t.Errorf("device sets changed from %v to %v", before, after)
		}
	}
	if !strings.Contains(d.Outcome.Message, "/dev/disk/by-id/q1") || !strings.Contains(d.Outcome.Message, "size") || !strings.Contains(d.Outcome.Message, "partial") {
		t.Errorf("outcome %+v: want it to say q1's set stays because its record is partial", d.Outcome)
	}
}

// bluestore_min_alloc_size comes from the devices whose records are complete: a capacity
// device whose latest record is partial (its model unread, so the drive database no longer
// gives its internal write unit) neither changes nor withdraws it; when every device's record
// is partial, the value the CephCluster has stays. Before, the decision left it at Ceph's
// default, and the next apply removed it from the CephCluster's cephConfig.
func TestDecideMinAllocSizeIgnoresPartialRecords(t *testing.T) {
	device := func(name string, iu int64) prismv1.Device {
		return prismv1.Device{Name: name, StablePath: "/dev/disk/by-id/" + name, InternalWriteUnitBytes: iu}
	}
	unread := func(d prismv1.Device) prismv1.Device {
		d.InternalWriteUnitBytes, d.Model = 0, ""
		d.Eligibility.Reasons = []prismv1.EligibilityReason{{Filter: prismv1.FilterReadable, Message: "sys/block/" + d.Name + "/device/model: input/output error"}}
		return d
	}
	decide := func(c *unstructured.Unstructured, devices ...prismv1.Device) Decision {
		t.Helper()
		a := Node{Name: "a", Plan: slotPlan("nvme-A", "q1", "q2"), Ready: true, Status: prismv1.StorageNodeStatus{Devices: devices}}
		in := input(c, a)
		in.SetMinAllocSize = true
		in.Selections = []prismv1.NodeSelection{{Node: "a", Capacity: []prismv1.SelectedDevice{{StablePath: "/dev/disk/by-id/q1"}, {StablePath: "/dev/disk/by-id/q2"}}}}
		d, err := Decide(in)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := decide(cluster(nil, nil, ""), device("q1", 65536), device("q2", 65536))
	want := map[string]any{"osd": map[string]any{"bluestore_min_alloc_size": "65536"}}
	if !reflect.DeepEqual(first.Config, want) || !first.Changed {
		t.Fatalf("config %v, changed %v: want %v", first.Config, first.Changed, want)
	}
	applied := first.Object.DeepCopy()
	applied.SetAnnotations(map[string]string{ManagedNodesAnnotation(policy): first.Managed})
	for _, tc := range []struct {
		name    string
		devices []prismv1.Device
	}{
		{"one record partial", []prismv1.Device{device("q1", 65536), unread(device("q2", 65536))}},
		{"every record partial", []prismv1.Device{unread(device("q1", 65536)), unread(device("q2", 65536))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(applied.DeepCopy(), tc.devices...)
			if !reflect.DeepEqual(d.Config, want) || d.Changed {
				t.Errorf("config %v, changed %v (%+v): want %v kept", d.Config, d.Changed, d.Outcome, want)
			}
			if strings.Contains(d.Outcome.Message, "left at Ceph's default") {
				t.Errorf("outcome %q", d.Outcome.Message)
			}
		})
	}
}

// imageCephVersion reads admins' image references: it never panics, and a version it reads
// is read back the same from a plain reference with that tag.
func FuzzImageCephVersion(f *testing.F) {
	for _, s := range []string{"quay.io/ceph/ceph:v19.2.3", "ceph:v20", "registry:5000/ceph@sha256:00", "", ":", "/:v", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		v, ok := imageCephVersion(image)
		if !ok {
			return
		}
		if !readable(v) {
			t.Fatalf("%q: version %q is not readable", image, v)
		}
		if again, ok := imageCephVersion("quay.io/ceph/ceph:v" + v); !ok || again != v {
			t.Fatalf("%q: version %q reads back as %q, %v", image, v, again, ok)
		}
	})
}
