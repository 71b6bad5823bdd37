package main

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/decide"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// rookPreview is what `kubectl prism plan -o rook` prints: the Rook part of the operator's
// decision (decide.Policy, the function the operator calls) for the offline plan.
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

// offlineObservation is what the operator would observe, made from files: a Node and a
// StorageNode per inventory (labels from --node-labels or the inventory document), the
// CephCluster read from clusterFile or an empty one of the policy's spec.cephCluster. Offline
// no agent reports its partitions or caches, so the Rook decision takes every planned node as
// provisioned and its cache cores as Ready (the plan's nodes[].claimOSDs still say what waits
// today: every cached OSD). assumes says so.
func offlineObservation(policy *prismv1.HybridStoragePolicy, inventories []string, given map[string]map[string]string, clusterFile string) (decide.Observation, []string, error) {
	obs := decide.Observation{Policy: policy, Now: time.Now(), AssumeProvisioned: true, Volumes: map[string]*corev1.PersistentVolume{}}
	assumes := []string{
		"every planned node's agent reports its DB partitions Ready (offline nothing reports readiness)",
		"every DB slot's logical volume is made where the plan puts it (the agent's default, --db-volumes), so entries name the volume, not the partition",
		"every planned cache core is Ready, with core ids 1, 2, ... in slot order as an agent starting from nothing assigns them (so the local volumes' /dev/casX-Y paths may differ on a node whose agent assigned other ids)",
		"no local volume exists yet",
	}
	for _, f := range inventories {
		n, nodeLabels, err := readInventory(f)
		if err != nil {
			return obs, nil, err
		}
		if l, ok := given[n.Node]; ok {
			nodeLabels = l
		}
		sn := &prismv1.StorageNode{}
		sn.Name, sn.Generation, sn.Status.Devices = n.Node, 1, n.Devices
		obs.Nodes = append(obs.Nodes, decide.Node{Name: n.Node, Labels: nodeLabels})
		obs.StorageNodes = append(obs.StorageNodes, sn)
	}
	ref := policy.Spec.CephCluster
	cluster := &unstructured.Unstructured{Object: map[string]any{}}
	if clusterFile != "" {
		data, err := os.ReadFile(clusterFile)
		if err != nil {
			return obs, nil, err
		}
		if err := yaml.Unmarshal(data, &cluster.Object); err != nil {
			return obs, nil, fmt.Errorf("%s: %w", clusterFile, err)
		}
		if cluster.GetKind() != rook.CephClusterGVK.Kind {
			return obs, nil, fmt.Errorf("%s: kind is %q, want CephCluster", clusterFile, cluster.GetKind())
		}
	} else {
		cluster.SetGroupVersionKind(rook.CephClusterGVK)
		cluster.SetNamespace(ref.Namespace)
		cluster.SetName(ref.Name)
		assumes = append(assumes, "the CephCluster has no storage.nodes entries yet (give it with --cephcluster FILE)")
	}
	obs.Cluster = cluster
	return obs, assumes, nil
}

// previewOf is the Rook part of a decision, as the plugin prints it.
func previewOf(d decide.Decision, assumes []string) rookPreview {
	out := rookPreview{Assumes: assumes, LocalVolumes: d.Rook.ApplyVolumes}
	out.RookConfigured.Reason, out.RookConfigured.Message = d.Rook.Outcome.Reason, d.Rook.Outcome.Message
	if d.Rook.Changed {
		out.Apply = d.Rook.Object.Object
	}
	return out
}

// labelsOf are the labels the observation gives node.
func labelsOf(obs decide.Observation, node string) map[string]string {
	for _, n := range obs.Nodes {
		if n.Name == node {
			return n.Labels
		}
	}
	return nil
}
