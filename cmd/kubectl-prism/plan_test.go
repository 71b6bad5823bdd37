package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

const repo = "../.."

// inventoryFiles writes `prism-agent inventory -o json` documents for the fixture nodes.
func inventoryFiles(t *testing.T) []string {
	t.Helper()
	nodes, err := fixturehost.LoadAll(filepath.Join(repo, fixturehost.NodesDir))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, n := range nodes {
		root := filepath.Join(t.TempDir(), n.Name)
		if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
			t.Fatal(err)
		}
		rep, err := inventory.Take(context.Background(), inventory.Options{Host: sysfs.Host{Root: root}, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")}})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		doc := inventorydoc.New(n.Name, root, time.Now(), rep.Devices, rep.Warnings)
		doc.Labels = n.Labels // what the sample policy's nodeSelector matches
		if err := doc.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), n.Name+".json")
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func planArgs(files []string, output string) []string {
	args := []string{"--policy", filepath.Join(repo, "config/samples/hybridstoragepolicy.yaml"), "-o", output}
	for _, f := range files {
		args = append(args, "--inventory", f)
	}
	return args
}

func TestPlanOfflineJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runPlan(planArgs(inventoryFiles(t), "json"), &out); err != nil {
		t.Fatal(err)
	}
	var result offlinePlan
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		t.Fatal(err)
	}
	if len(result.Problems) != 0 {
		t.Fatalf("the sample policy must plan the fixture nodes: %v", result.Problems)
	}
	// Every slot of the Rook section points at a planned partition of a fast device.
	planned := map[string]bool{}
	for _, n := range result.Nodes {
		if n.Plan == nil {
			continue
		}
		for _, f := range n.Plan.FastDevices {
			for _, s := range f.Slots {
				if s.DataDevice != "" {
					planned[s.DataDevice+" "+prismv1.PartitionPath(f.StablePath, s.Partition.Number)] = true
				}
			}
		}
	}
	osds := 0
	for _, n := range result.RookStorageNodes {
		for _, d := range n.Devices {
			osds++
			if !planned[d.Name+" "+d.Config.MetadataDevice] {
				t.Errorf("Rook device %s -> %s is not in the plan", d.Name, d.Config.MetadataDevice)
			}
		}
	}
	if osds != len(planned) || osds == 0 {
		t.Fatalf("%d Rook OSD devices for %d planned slots", osds, len(planned))
	}
}

// TestPlanOfflineCephadmSpecsAreValid checks the cephadm output with Ceph's own spec parser
// (python3-ceph-common's ceph.deployment.service_spec), and that the parser does reject a
// broken spec, so the check can fail.
func TestPlanOfflineCephadmSpecsAreValid(t *testing.T) {
	python := "/usr/bin/python3"
	check := exec.Command(python, "-c", "import ceph.deployment.drive_group, yaml")
	if err := check.Run(); err != nil {
		if os.Geteuid() != 0 {
			t.Skip("needs Debian's python3-ceph-common (ceph.deployment) and python3-yaml; run as root to install them")
		}
		install := exec.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", "python3-ceph-common", "python3-yaml")
		install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := install.CombinedOutput(); err != nil {
			t.Fatalf("installing python3-ceph-common: %v\n%s", err, out)
		}
	}
	var out bytes.Buffer
	if err := runPlan(planArgs(inventoryFiles(t), "cephadm"), &out); err != nil {
		t.Fatal(err)
	}
	const validate = `
import sys, yaml
from ceph.deployment.service_spec import ServiceSpec
n = 0
for doc in yaml.safe_load_all(sys.stdin):
    if doc:
        ServiceSpec.from_json(doc).validate()
        n += 1
print(n)
`
	run := func(input string) (string, error) {
		cmd := exec.Command(python, "-c", validate)
		cmd.Stdin = strings.NewReader(input)
		b, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}
	got, err := run(out.String())
	if err != nil {
		t.Fatalf("Ceph rejected the cephadm specs: %v\n%s\n%s", err, got, out.String())
	}
	if got != "4" { // one spec per fast device with data devices: a 1, b 2, homelab 1
		t.Fatalf("Ceph parsed %s specs:\n%s", got, out.String())
	}
	broken := strings.Replace(out.String(), "objectstore: bluestore", "objectstore: papyrus", 1)
	if _, err := run(broken); err == nil {
		t.Fatal("the validator accepted an unknown objectstore: the check cannot fail")
	}
}

func TestPlanOfflineRejectsBadInput(t *testing.T) {
	files := inventoryFiles(t)
	bad := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: prism.storage.io/v1alpha1\nkind: HybridStoragePolicy\nspec:\n  mode: Apply\n  dbSizing: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runPlan([]string{"--policy", bad, "--inventory", files[0]}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.dbSizing"`) {
		t.Fatalf("a misspelt field must be named: %v", err)
	}
	notInventory := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(notInventory, []byte(`{"kind":"Inventory","devices":[],"extra":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runPlan([]string{"--policy", filepath.Join(repo, "config/samples/hybridstoragepolicy.yaml"), "--inventory", notInventory}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Fatalf("an unknown inventory field must be named: %v", err)
	}
}

// TestPlanOfflineWithCache: a policy with a write-back cache naming Prism's ceph-osd
// ClassificationPolicy gets, on every node with a cache partition, the compiled classes and a
// cache id per fast device; a policy naming a ClassificationPolicy that is not given is a
// problem naming the field, as in the operator.
func TestPlanOfflineWithCache(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repo, "config/samples/hybridstoragepolicy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	withCache := func(name string) string {
		f := filepath.Join(t.TempDir(), "policy.yaml")
		doc := strings.Replace(string(data), "    mode: None\n", "    mode: WriteBack\n    classificationPolicyName: "+name+"\n", 1)
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	files := inventoryFiles(t)
	run := func(policy string) offlinePlan {
		args := planArgs(files, "json")
		args[1] = policy
		var out bytes.Buffer
		if err := runPlan(args, &out); err != nil {
			t.Fatal(err)
		}
		var result offlinePlan
		if err := json.Unmarshal(out.Bytes(), &result); err != nil {
			t.Fatal(err)
		}
		return result
	}
	result := run(withCache("ceph-osd"))
	if len(result.Problems) != 0 {
		t.Fatalf("problems: %v", result.Problems)
	}
	cached := 0
	for _, n := range result.Nodes {
		if n.Plan == nil || !plan.HasCachePartition(*n.Plan) {
			continue
		}
		cached++
		c := n.Plan.Cache
		if c == nil || c.Mode != "WriteBack" || !strings.HasPrefix(c.IOClassCSV, "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,") {
			t.Errorf("node %s: cache plan %+v", n.Node, c)
		}
		for _, f := range n.Plan.FastDevices {
			if f.Cache != nil && f.CacheID == 0 {
				t.Errorf("node %s: %s has a cache partition and no cache id", n.Node, f.StablePath)
			}
		}
	}
	if cached == 0 {
		t.Fatal("no fixture node got a cache partition")
	}
	// What the operator would give Rook for the cached nodes: their OSDs wait for their cores,
	// which no agent has reported offline; no storage.nodes entry for them.
	for _, n := range result.Nodes {
		if n.Plan == nil || !n.Plan.OnClaims() {
			continue
		}
		if n.ClaimOSDs == nil || len(n.ClaimOSDs.Held) == 0 {
			t.Errorf("node %s: claim OSDs %+v, want the cached ones waiting", n.Node, n.ClaimOSDs)
			continue
		}
		for _, h := range n.ClaimOSDs.Held {
			if !strings.Contains(h.Reason, "waiting for its cache") {
				t.Errorf("node %s: %s held for %q", n.Node, h.DataDevice, h.Reason)
			}
		}
		for _, r := range result.RookStorageNodes {
			if r.Name == n.Node {
				t.Errorf("node %s runs a cache but has a storage.nodes entry", n.Node)
			}
		}
	}
	// The Rook section previews where the cached OSDs go once the agents report their cores
	// (which it assumes): one device set per cached OSD, on two local volumes (data on the
	// exported object, metadata on the DB slot).
	sets, _, _ := unstructured.NestedSlice(result.Rook.Apply, "spec", "storage", "storageClassDeviceSets")
	if r := result.Rook.RookConfigured; r.Reason != "Applied" || !strings.Contains(r.Message, fmt.Sprintf("%d OSDs on caches as device sets", len(sets))) || len(sets) == 0 {
		t.Errorf("rookConfigured %+v with %d device sets", r, len(sets))
	}
	if len(result.Rook.LocalVolumes) != 2*len(sets) {
		t.Errorf("%d local volumes for %d device sets", len(result.Rook.LocalVolumes), len(sets))
	}
	for _, v := range result.Rook.LocalVolumes {
		if p := v.Spec.Local.Path; !strings.HasPrefix(p, "/dev/cas") && !strings.Contains(p, "-part") {
			t.Errorf("volume %s on %s, neither an exported object nor a DB slot", v.Name, p)
		}
	}
	missing := run(withCache("not-given"))
	if len(missing.Problems) != 1 || !strings.Contains(missing.Problems[0], `spec.cache.classificationPolicyName: ClassificationPolicy "not-given" not found`) {
		t.Errorf("problems with a missing ClassificationPolicy: %v", missing.Problems)
	}
}

// TestPlanOfflineRefusesWhatTheAPIServerRefuses: the plugin validates with the CRD's schema
// and CEL rules, naming the field as the API server does (test/envtest's parity test holds
// every suite case to the same verdict).
func TestPlanOfflineRefusesWhatTheAPIServerRefuses(t *testing.T) {
	files := inventoryFiles(t)
	data, err := os.ReadFile(filepath.Join(repo, "config/samples/hybridstoragepolicy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"mode: Apply", "mode: apply", `spec.mode: Unsupported value: "apply"`},
		{"size: 60Gi", "size: 1Gi", "spec.db.size: Invalid value: \"1Gi\": size must be between 2Gi and 64Ti: 1Gi"},
		{`size: "1T:"`, `size: "-1T:"`, "spec.capacityDevices.size: Invalid value"},
		{"prism.storage.io/role: storage", "prism.storage.io/role: fast disks", "spec.nodeSelector.matchLabels.prism.storage.io/role"},
		{"name: qlc-behind-optane\n", "", "metadata.name: Required value"},
		{"    name: rook-ceph", "    name: Rook Ceph", "spec.cephCluster.name: Invalid value"},
	} {
		f := filepath.Join(t.TempDir(), "policy.yaml")
		doc := strings.Replace(string(data), tc.from, tc.to, 1)
		if doc == string(data) {
			t.Fatalf("%q is not in the sample", tc.from)
		}
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		err := runPlan([]string{"--policy", f, "--inventory", files[0]}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: %v, want %q", tc.from, tc.to, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "not checked") {
			t.Errorf("the message carries the API server's note on unchecked rules: %v", err)
		}
	}
}

// TestPlanOfflineHonoursTheNodeSelector: only nodes whose labels (from the inventory or
// --node-labels) match spec.nodeSelector are planned, as the operator plans them.
func TestPlanOfflineHonoursTheNodeSelector(t *testing.T) {
	files := inventoryFiles(t)
	nodes := func(extra ...string) []string {
		var out bytes.Buffer
		if err := runPlan(append(planArgs(files, "json"), extra...), &out); err != nil {
			t.Fatal(err)
		}
		var result offlinePlan
		if err := json.Unmarshal(out.Bytes(), &result); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range result.Nodes {
			names = append(names, n.Node)
		}
		return names
	}
	all := nodes()
	if len(all) < 2 {
		t.Fatalf("the sample selects %v; the test needs two labelled fixture nodes", all)
	}
	fewer := nodes("--node-labels", all[0]+":prism.storage.io/role=compute")
	if len(fewer) != len(all)-1 || slices.Contains(fewer, all[0]) {
		t.Errorf("relabelled %s away from the selector: planned %v", all[0], fewer)
	}
	if err := runPlan(append(planArgs(files, "json"), "--node-labels", "no-colon"), &bytes.Buffer{}); err == nil {
		t.Error("a malformed --node-labels must be refused")
	}
}

// TestPlanOfflineRook checks that -o rook prints the operator's decision (rook.Decide):
// the storage.nodes entries are the plan's Rook entries, beside the entries of a given
// CephCluster, which stay verbatim.
func TestPlanOfflineRook(t *testing.T) {
	files := inventoryFiles(t)
	var planned bytes.Buffer
	if err := runPlan(planArgs(files, "json"), &planned); err != nil {
		t.Fatal(err)
	}
	var result offlinePlan
	if err := json.Unmarshal(planned.Bytes(), &result); err != nil {
		t.Fatal(err)
	}
	cluster := filepath.Join(t.TempDir(), "cephcluster.yaml")
	manifest := "apiVersion: ceph.rook.io/v1\nkind: CephCluster\nmetadata: {name: rook-ceph, namespace: rook-ceph}\n" +
		"spec:\n  storage:\n    useAllNodes: false\n    nodes:\n    - name: admins-node\n      devices: [{name: sdz}]\n"
	if err := os.WriteFile(cluster, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		extra []string
		first string // the first entry's name: the admin's, when given
	}{
		{"an empty CephCluster", nil, ""},
		{"a CephCluster with the admin's entry", []string{"--cephcluster", cluster}, "admins-node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runPlan(append(planArgs(files, "rook"), tc.extra...), &out); err != nil {
				t.Fatal(err)
			}
			var got rookPreview
			if err := yaml.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if got.RookConfigured.Reason != "Applied" || len(got.Assumes) == 0 {
				t.Fatalf("rookConfigured %+v, assumes %v", got.RookConfigured, got.Assumes)
			}
			nodes, _, _ := unstructured.NestedSlice(got.Apply, "spec", "storage", "nodes")
			var names []string
			for _, n := range nodes {
				names = append(names, n.(map[string]any)["name"].(string))
			}
			var want []string
			if tc.first != "" {
				want = append(want, tc.first)
			}
			for _, n := range result.RookStorageNodes {
				want = append(want, n.Name)
			}
			if !slices.Equal(names, want) || len(result.RookStorageNodes) == 0 {
				t.Errorf("storage.nodes %v, want %v", names, want)
			}
		})
	}
}

// TestPlanOfflineDefaultOutputCarriesTheRookDecision: the default output holds the
// operator's Rook decision (decide.Policy's), the same one -o rook prints alone, and its
// storage.nodes are the plan's Rook entries.
func TestPlanOfflineDefaultOutputCarriesTheRookDecision(t *testing.T) {
	files := inventoryFiles(t)
	var out, rookOut bytes.Buffer
	if err := runPlan(planArgs(files, "json"), &out); err != nil {
		t.Fatal(err)
	}
	if err := runPlan(planArgs(files, "rook"), &rookOut); err != nil {
		t.Fatal(err)
	}
	var result offlinePlan
	if err := json.Unmarshal(out.Bytes(), &result); err != nil {
		t.Fatal(err)
	}
	var alone rookPreview
	if err := yaml.Unmarshal(rookOut.Bytes(), &alone); err != nil {
		t.Fatal(err)
	}
	if result.Rook.RookConfigured.Reason != "Applied" || !reflect.DeepEqual(result.Rook.RookConfigured, alone.RookConfigured) {
		t.Fatalf("default output rook %+v, -o rook %+v", result.Rook.RookConfigured, alone.RookConfigured)
	}
	nodes, _, _ := unstructured.NestedSlice(result.Rook.Apply, "spec", "storage", "nodes")
	var got, want []string
	for _, n := range nodes {
		got = append(got, n.(map[string]any)["name"].(string))
	}
	for _, n := range result.RookStorageNodes {
		want = append(want, n.Name)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("apply's storage.nodes %v, plan's Rook entries %v", got, want)
	}
}
