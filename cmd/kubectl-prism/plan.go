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

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/inventory"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/plan"
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
	output := fs.String("o", "yaml", "yaml, json, or cephadm (OSD service specs)")
	classesFile := fs.String("classes", "", "the ClassificationPolicy manifest the policy's spec.cache.classificationPolicyName names (default: Prism's built-in ceph-osd policy when that is the name)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(inventories) == 0 || *policyFile == "" {
		return fmt.Errorf("need --inventory FILE (one or more) and --policy FILE")
	}
	policy, err := readPolicy(*policyFile)
	if err != nil {
		return err
	}
	var nodes []plan.NodeInventory
	for _, f := range inventories {
		n, err := readInventory(f)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
	}
	class := policy.Spec.OSD.DeviceClass
	if class == "" {
		class = "qlc"
	}
	result := plan.PlanCluster(nodes, &policy.Spec, class)
	classes, err := classesFor(policy, *classesFile)
	if err != nil {
		return err
	}
	result.WithCache(&policy.Spec, classes)
	switch *output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(result)
	case "yaml":
		return writeYAML(out, result)
	case "cephadm":
		for _, s := range plan.CephadmSpecs(result.Plans(), class) {
			fmt.Fprintln(out, "---")
			if err := writeYAML(out, s); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("-o %q: want yaml, json or cephadm", *output)
}

func writeYAML(out io.Writer, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// readPolicy decodes a policy strictly, so a misspelt field is an error, not ignored.
func readPolicy(path string) (*prismv1.HybridStoragePolicy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := &prismv1.HybridStoragePolicy{}
	if err := yaml.UnmarshalStrict(data, p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Kind != "HybridStoragePolicy" {
		return nil, fmt.Errorf("%s: kind is %q, want HybridStoragePolicy", path, p.Kind)
	}
	if _, err := plan.ParseSizeRange(p.Spec.CapacityDevices.Size); err != nil {
		return nil, fmt.Errorf("%s: spec.capacityDevices.size: %w", path, err)
	}
	if _, err := plan.ParseSizeRange(p.Spec.FastDevices.Size); err != nil {
		return nil, fmt.Errorf("%s: spec.fastDevices.size: %w", path, err)
	}
	return p, nil
}

func readInventory(path string) (plan.NodeInventory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return plan.NodeInventory{}, err
	}
	var doc inventory.Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return plan.NodeInventory{}, fmt.Errorf("%s: not a prism-agent inventory JSON document: %w", path, err)
	}
	if doc.Kind != "Inventory" {
		return plan.NodeInventory{}, fmt.Errorf("%s: kind is %q, want Inventory", path, doc.Kind)
	}
	node := doc.Node
	if node == "" {
		node = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return plan.NodeInventory{Node: node, Devices: doc.Devices}, nil
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
