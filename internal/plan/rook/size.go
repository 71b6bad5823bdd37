package rook

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/prism-storage/prism/internal/bytesize"
)

// Object size limits. A custom resource is stored in etcd as JSON, whole, in one request;
// etcd refuses a request over its --max-request-bytes, 1.5 MiB unless raised, and the API
// server refuses a request body over 3 MiB whatever etcd allows. Every OSD of a node has its
// own entry with its own DB slot (about 120 bytes each), so a CephCluster of a few hundred
// nodes reaches the limit: the apply is then refused on every reconcile, and nothing says why.
const (
	// DefaultMaxCephClusterBytes is etcd's default --max-request-bytes.
	DefaultMaxCephClusterBytes = 1536 << 10
	// apiServerMaxBytes is the API server's own limit on a request body.
	apiServerMaxBytes = 3 << 20
	// statusHeadroom is kept free for what Rook and others write after Prism's apply (the
	// status Rook keeps grows with the cluster's health checks and device classes).
	statusHeadroom = 64 << 10
)

// ReasonCephClusterTooLarge: the CephCluster with Prism's entries would exceed the object
// size the cluster's etcd stores, so Prism does not apply it.
const ReasonCephClusterTooLarge = "CephClusterTooLarge"

// storedSize is the size of the CephCluster as the API server would store it with nodes as
// its storage.nodes: the object as read (status and managed fields included) with the entries
// replaced.
func storedSize(cluster *unstructured.Unstructured, nodes []any) (int, error) {
	c := cluster.DeepCopy()
	if err := unstructured.SetNestedSlice(c.Object, nodes, "spec", "storage", "nodes"); err != nil {
		return 0, err
	}
	b, err := json.Marshal(c.Object)
	return len(b), err
}

// SizeLimit is the largest CephCluster Prism applies, from the limit the operator was told
// (0: etcd's default), never above what the API server accepts.
func SizeLimit(configured int64) int64 {
	limit := int64(DefaultMaxCephClusterBytes)
	if configured > 0 {
		limit = configured
	}
	return min(limit, apiServerMaxBytes) - statusHeadroom
}

// tooLarge is why the CephCluster with nodes would be too large to store ("" when it fits).
func tooLarge(cluster *unstructured.Unstructured, nodes []any, entries []RookNode, configured int64) (string, error) {
	size, err := storedSize(cluster, nodes)
	if err != nil {
		return "", fmt.Errorf("CephCluster %s: measuring its size: %w", cluster.GetName(), err)
	}
	limit := SizeLimit(configured)
	if int64(size) <= limit {
		return "", nil
	}
	osds := 0
	for _, n := range entries {
		osds += len(n.Devices)
	}
	return fmt.Sprintf("CephCluster %s/%s would be %s with the entries of %d nodes (%d OSDs); Prism applies at most %s (etcd stores an object of at most --max-request-bytes, %s by default, less %s for Rook's status): nothing is applied; split the nodes across policies and CephClusters, or raise etcd's limit and the operator's --cephcluster-max-bytes together",
		cluster.GetNamespace(), cluster.GetName(), bytesize.IEC(int64(size)), len(nodeNamesOf(entries)), osds,
		bytesize.IEC(limit), bytesize.IEC(DefaultMaxCephClusterBytes), bytesize.IEC(statusHeadroom)), nil
}
