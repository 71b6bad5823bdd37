package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/apivalidation"
	"github.com/prism-storage/prism/internal/inventorydoc"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/cephadm"
	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// stringList collects a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runPlan plans offline: inventories from `prism-agent inventory -o json`, a policy from a
// manifest, and prints the plan, the Rook storage section, or cephadm OSD specs.
func runPlan(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	var inventories stringList
	fs.Var(&inventories, "inventory", "a node's `prism-agent inventory -o json` output (repeat per node)")
	policyFile := fs.String("policy", "", "a HybridStoragePolicy manifest")
	output := fs.String("o", "yaml", "yaml, json, cephadm (OSD service specs), or rook (what the operator would apply to the CephCluster)")
	clusterFile := fs.String("cephcluster", "", "with -o rook: the CephCluster manifest (kubectl get -o yaml) to merge into (default: an empty one)")
	var nodeLabels stringList
	fs.Var(&nodeLabels, "node-labels", "NODE:key=value,key=value: a node's labels, matched against spec.nodeSelector (repeat per node; default: the inventory's labels)")
	classesFile := fs.String("classes", "", "the ClassificationPolicy manifest the policy's spec.cache.classificationPolicyName names (default: Prism's built-in ceph-osd policy when that is the name)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(inventories) == 0 || *policyFile == "" {
		return fmt.Errorf("need --inventory FILE (one or more) and --policy FILE")
	}
	policy, err := readPolicy(*policyFile)
	if err != nil {
		return err
	}
	given, err := parseNodeLabels(nodeLabels)
	if err != nil {
		return err
	}
	classes, err := classesFor(policy, *classesFile)
	if err != nil {
		return err
	}
	obs, assumes, err := offlineObservation(policy, inventories, given, *clusterFile)
	if err != nil {
		return err
	}
	// The operator's own decision (decide.Policy), on the inventories instead of the
	// StorageNodes: the same selector, planner and Rook decision.
	obs.Classes = classes
	d := decide.Policy(obs)
	if d.InvalidSelector != "" {
		return fmt.Errorf("%s: %s", *policyFile, d.InvalidSelector)
	}
	for _, name := range d.Unselected {
		fmt.Fprintf(os.Stderr, "node %s: not selected by spec.nodeSelector; its labels: %v (give them with --node-labels %s:key=value,...)\n", name, labelsOf(obs, name), name)
	}
	if d.RookErr == nil && len(d.Rook.Lookup) > 0 {
		for _, name := range d.Rook.Lookup {
			obs.Volumes[name] = nil // offline no volume exists
		}
		d = decide.Policy(obs)
	}
	if d.RookErr != nil {
		return d.RookErr
	}
	result := offlinePlanOf(d, obs, decide.DeviceClass(policy), assumes)
	switch *output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(result)
	case "yaml":
		return writeYAML(out, result)
	case "rook":
		return writeYAML(out, result.Rook)
	case "cephadm":
		for _, s := range cephadm.Specs(d.Plan.Plans(), decide.DeviceClass(policy)) {
			fmt.Fprintln(out, "---")
			if err := writeYAML(out, s); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("-o %q: want yaml, json, cephadm or rook", *output)
}

// offlinePlan is what the plugin prints: the planner's result (plan.ClusterPlan, each node with
// its claim OSDs), the storage.nodes entries internal/plan/rook makes of its plans, and the
// operator's Rook decision (what -o rook prints alone), device sets and local volumes of OSDs
// on caches included.
type offlinePlan struct {
	Nodes []offlineNode `json:"nodes"`
	// RookStorageNodes are the plans' entries for CephCluster spec.storage.nodes, every DB slot
	// named by its partition (rook.RookNodes); Rook.Apply has them as the operator writes them.
	RookStorageNodes []rook.RookNode `json:"rookStorageNodes"`
	Problems         []string        `json:"problems,omitempty"`
	CacheRefused     string          `json:"cacheRefused,omitempty"`
	Rook             rookPreview     `json:"rook"`
}

// offlineNode is a node of the plan as the plugin prints it.
type offlineNode struct {
	plan.NodeResult
	// ClaimOSDs are, for a node with a cache (OnClaims), its OSDs that Rook creates from
	// claims (rook.ClaimOSDsOf): those that can be created now, and those that wait (for their
	// cache core).
	ClaimOSDs *rook.ClaimOSDs `json:"claimOSDs,omitempty"`
}

// offlinePlanOf is what the plugin prints of a decision on obs.
func offlinePlanOf(d decide.Decision, obs decide.Observation, deviceClass string, assumes []string) offlinePlan {
	out := offlinePlan{Nodes: make([]offlineNode, len(d.Plan.Nodes)), RookStorageNodes: rook.RookNodes(d.Plan.Plans(), deviceClass),
		Problems: d.Plan.Problems, CacheRefused: d.Plan.CacheRefused, Rook: previewOf(d, assumes)}
	for i, n := range d.Plan.Nodes {
		out.Nodes[i].NodeResult = n
		if n.Plan == nil || !n.Plan.OnClaims() {
			continue
		}
		for _, sn := range obs.StorageNodes {
			if sn.Name == n.Node {
				osds := rook.ClaimOSDsOf(n.Node, *n.Plan, sn.Status)
				out.Nodes[i].ClaimOSDs = &osds
			}
		}
	}
	return out
}

func writeYAML(out io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// readPolicy reads a policy and validates it as the API server does (the generated CRD's
// schema and CEL rules, run in process) and then as the operator does: what kubectl apply
// refuses, the plugin refuses with the same field paths. The policy gets the API server's
// defaults.
func readPolicy(path string) (*prismv1.HybridStoragePolicy, error) {
	p := &prismv1.HybridStoragePolicy{}
	return p, readObject(path, "HybridStoragePolicy", p)
}

// readObject decodes one manifest of kind into out after apivalidation accepted it.
func readObject(path, kind string, out any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	obj, err := apivalidation.Decode(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if obj["kind"] != kind {
		return fmt.Errorf("%s: kind is %q, want %s", path, obj["kind"], kind)
	}
	v, err := apivalidation.New()
	if err != nil {
		return err
	}
	if errs := v.Check(obj); len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			if e.Detail != apivalidation.NotCheckedDetail {
				msgs = append(msgs, "  "+e.Error())
			}
		}
		return fmt.Errorf("%s: the API server would refuse this %s:\n%s", path, kind, strings.Join(msgs, "\n"))
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out)
}

// parseNodeLabels reads --node-labels NODE:key=value,key=value flags.
func parseNodeLabels(flags []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, f := range flags {
		node, list, ok := strings.Cut(f, ":")
		if !ok || node == "" {
			return nil, fmt.Errorf("--node-labels %q: want NODE:key=value,key=value", f)
		}
		set, err := labels.ConvertSelectorToLabelsMap(list)
		if err != nil {
			return nil, fmt.Errorf("--node-labels %q: %w", f, err)
		}
		out[node] = set
	}
	return out, nil
}

func readInventory(path string) (plan.NodeInventory, map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return plan.NodeInventory{}, nil, err
	}
	var doc inventorydoc.Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return plan.NodeInventory{}, nil, fmt.Errorf("%s: not a prism-agent inventory JSON document: %w", path, err)
	}
	if doc.Kind != "Inventory" {
		return plan.NodeInventory{}, nil, fmt.Errorf("%s: kind is %q, want Inventory", path, doc.Kind)
	}
	node := doc.Node
	if node == "" {
		node = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return plan.NodeInventory{Node: node, Devices: doc.Devices}, doc.Labels, nil
}

// classesFor reads the ClassificationPolicy a policy's cache names: from file, or Prism's
// built-in one when the policy names it. nil when the policy names none (or another one and no
// file is given: the plan then reports it missing, as the operator would).
func classesFor(policy *prismv1.HybridStoragePolicy, file string) (*prismv1.ClassificationPolicy, error) {
	if file != "" {
		return readClassification(file)
	}
	if def := ioclass.DefaultCephOSD(); policy.Spec.Cache.ClassificationPolicyName == def.Name {
		return def, nil
	}
	return nil, nil
}
