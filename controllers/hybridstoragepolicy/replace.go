package hybridstoragepolicy

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/prism-storage/prism/internal/plan"
)

// releaseAnnotation records on the CephCluster the last re-created OSD a policy handed to
// Rook, so that pacing survives operator restarts.
func releaseAnnotation(policy string) string {
	return "replacing." + managedNodesAnnotation(policy)
}

// gateReplacements paces OSDs whose DB slot moved (plan.GateReplacements) on the health Rook
// reports in the CephCluster's status.
func gateReplacements(cluster *unstructured.Unstructured, policy string, entries []plan.RookNode, existing []any, now time.Time) plan.GateResult {
	health, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "health")
	h := plan.CephHealth{Health: health}
	// Rook writes lastChanged as RFC 3339 (pkg/operator/ceph/cluster/cephstatus.go formatTime).
	if changed, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "lastChanged"); changed != "" {
		if t, err := time.Parse(time.RFC3339, changed); err == nil {
			h.LastChanged = t
		}
	}
	var last *plan.Release
	if v := cluster.GetAnnotations()[releaseAnnotation(policy)]; v != "" {
		if r, err := plan.ParseRelease(v); err == nil {
			last = &r
		}
	}
	return plan.GateReplacements(entries, existing, h, last, now)
}
