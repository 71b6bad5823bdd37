package rook

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Prism asks Ceph its safety answers (CephAnswers) through a probe pod that runs the Ceph CLI
// of the CephCluster's own image as a read-only Ceph client (decision 0047): this file is the
// client, probe_pod.go the pod, probe_answers.go what its output means.

// CephClientGVK is Rook's CephClient: a cephx user Rook creates, with its key in a Secret.
var CephClientGVK = schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephClient"}

const (
	// ProbeClient is the CephClient (and cephx user client.prism-probe) the probe runs as.
	ProbeClient = "prism-probe"
	// ProbeSecret is the Secret Rook writes for it: "rook-ceph-client-<name>" unless the
	// CephClient names another (rook v1.20.4 pkg/operator/ceph/client/controller.go).
	ProbeSecret = "rook-ceph-client-" + ProbeClient
	// probeSecretKey is the Secret's key holding the bare cephx key (Rook also writes it under
	// the client's name; "userKey" is the one CSI reads too).
	probeSecretKey = "userKey"
	// MonEndpointsConfigMap and monEndpointsKey are where Rook keeps the mons:
	// "a=10.0.0.1:6789,b=10.0.0.2:6789" (rook v1.20.4 pkg/operator/ceph/cluster/mon).
	MonEndpointsConfigMap = "rook-ceph-mon-endpoints"
	monEndpointsKey       = "data"
)

// ProbeCaps are the probe client's only capabilities: read the maps from the mons and ask the
// mgr read-only commands (pg stat, device ls-by-host, osd safe-to-destroy). They cannot change
// anything in the cluster nor read any object's data (no osd cap).
var ProbeCaps = map[string]string{"mon": "allow r", "mgr": "allow r"}

// ProbeCephClient is the CephClient Prism applies in the CephCluster's namespace, owned by the
// policy (several policies of one cluster each add their owner reference; the client goes with
// the last of them).
func ProbeCephClient(namespace string, owner metav1.OwnerReference) *unstructured.Unstructured {
	caps := map[string]any{}
	for k, v := range ProbeCaps {
		caps[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"caps": caps}}}
	u.SetGroupVersionKind(CephClientGVK)
	u.SetNamespace(namespace)
	u.SetName(ProbeClient)
	u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "prism"})
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	return u
}

// probeClientReadyPhase is the phase Rook's CephClient controller sets once the cephx user
// and its Secret exist (rook v1.20.4 pkg/operator/ceph/client/controller.go, updateStatus
// after createOrUpdateClient).
const probeClientReadyPhase = "Ready"

// ProbeClientReady says whether Rook has made the probe's key, read from the CephClient as
// the API server returned it: a probe started before mounts a Secret that does not exist and
// runs out its deadline in the kubelet's FailedMount retries (seen in the e2e, 2026-12-07:
// two probes lost, 4 min, before Rook's operator reached the new CephClient). why says what
// Rook's status shows; failed is true when Rook reports a failure an admin must see.
func ProbeClientReady(cc *unstructured.Unstructured) (ready bool, why string, failed bool) {
	phase, _, _ := unstructured.NestedString(cc.Object, "status", "phase")
	switch phase {
	case probeClientReadyPhase:
		return true, "", false
	case "":
		return false, "Rook has not reconciled CephClient " + cc.GetNamespace() + "/" + cc.GetName() + " yet: no key to ask Ceph with (Secret " + ProbeSecret + ")", false
	default:
		return false, "CephClient " + cc.GetNamespace() + "/" + cc.GetName() + " is " + phase + " in Rook's status, not " + probeClientReadyPhase + ": no key to ask Ceph with (Secret " + ProbeSecret + ")", phase == "Failure"
	}
}
