package main

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan"
	"github.com/prism-storage/prism/internal/plan/rookdecide"
)

// rookPreview is what `kubectl prism plan -o rook` prints: the operator's Rook decision
// (rookdecide.Decide, the function the operator calls) for the offline plan.
type rookPreview struct {
	// Assumes says what the preview takes for granted that only a cluster can tell.
	Assumes []string `json:"assumes"`
	// RookConfigured is the condition the policy would report.
	RookConfigured struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"rookConfigured"`
	// Apply is Prism's server-side apply configuration of the CephCluster (absent when the
	// CephCluster would not change).
	Apply map[string]any `json:"apply,omitempty"`
	// LocalVolumes are the volumes created for OSDs on caches before the apply.
	LocalVolumes []*corev1.PersistentVolume `json:"localVolumes,omitempty"`
}

// previewRook decides, as the operator would, what the policy applies to its CephCluster:
// the cluster read from clusterFile, or an empty one of the policy's spec.cephCluster. Every
// planned node is taken as provisioned (offline no agent reports its partitions) and no cache
// core as Ready (so OSDs on caches wait, as nodes[].claimOSDs.held says).
func previewRook(policy *prismv1.HybridStoragePolicy, result plan.ClusterPlan, nodes []plan.NodeInventory, class, clusterFile string) (rookPreview, error) {
	ref := policy.Spec.CephCluster
	cluster := &unstructured.Unstructured{Object: map[string]any{}}
	assumes := []string{
		"every planned node's agent reports its DB partitions Ready (offline nothing reports readiness)",
		"no cache core is Ready yet and no local volume exists",
	}
	if clusterFile != "" {
		data, err := os.ReadFile(clusterFile)
		if err != nil {
			return rookPreview{}, err
		}
		if err := yaml.Unmarshal(data, &cluster.Object); err != nil {
			return rookPreview{}, fmt.Errorf("%s: %w", clusterFile, err)
		}
		if cluster.GetKind() != rookdecide.CephClusterGVK.Kind {
			return rookPreview{}, fmt.Errorf("%s: kind is %q, want CephCluster", clusterFile, cluster.GetKind())
		}
	} else {
		cluster.SetGroupVersionKind(rookdecide.CephClusterGVK)
		cluster.SetNamespace(ref.Namespace)
		cluster.SetName(ref.Name)
		assumes = append(assumes, "the CephCluster has no storage.nodes entries yet (give it with --cephcluster FILE)")
	}
	devices := map[string][]prismv1.Device{}
	for _, n := range nodes {
		devices[n.Node] = n.Devices
	}
	in := rookdecide.Input{
		Policy: policy.Name, Manager: "prism-operator/" + policy.Name,
		DryRun: policy.Spec.Mode == prismv1.ModeDryRun, PlanRefused: len(result.Problems) > 0,
		DeviceClass: class, SetMinAllocSize: policy.Spec.OSD.MinAllocSize != prismv1.MinAllocSizeDefault,
		ClusterRef: ref.Namespace + "/" + ref.Name, Cluster: cluster,
		Volumes: map[string]*corev1.PersistentVolume{}, Now: time.Now(),
	}
	for _, n := range result.Nodes {
		in.Selections = append(in.Selections, n.Selection)
		if n.Plan != nil {
			in.Nodes = append(in.Nodes, rookdecide.Node{Name: n.Node, Plan: *n.Plan, Ready: true, Status: prismv1.StorageNodeStatus{Devices: devices[n.Node]}})
		}
	}
	d, err := rookdecide.Decide(in)
	if err == nil && len(d.Lookup) > 0 {
		for _, name := range d.Lookup {
			in.Volumes[name] = nil // offline no volume exists
		}
		d, err = rookdecide.Decide(in)
	}
	if err != nil {
		return rookPreview{}, err
	}
	out := rookPreview{Assumes: assumes, LocalVolumes: d.ApplyVolumes}
	out.RookConfigured.Reason, out.RookConfigured.Message = d.Outcome.Reason, d.Outcome.Message
	if d.Changed {
		out.Apply = d.Object.Object
	}
	return out, nil
}
