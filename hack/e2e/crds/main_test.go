package main

import (
	"strings"
	"testing"
)

// The shape of Rook v1.20.2's deploy/examples/csi-operator.yaml: CRDs (no leading "---"),
// then the operator's objects, one of which mentions the group in a rule.
const stream = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cephconnections.csi.ceph.io
spec:
  group: csi.ceph.io
  names:
    kind: CephConnection
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clientprofiles.csi.ceph.io
spec:
  group: csi.ceph.io
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ceph-csi-cephconnection-viewer-role
rules:
- apiGroups:
  - csi.ceph.io
  resources: [cephconnections]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ceph-csi-controller-manager
`

func TestFilterKeepsTheGroupsCRDsOnly(t *testing.T) {
	var out strings.Builder
	n, err := filter(strings.NewReader(stream), &out, "csi.ceph.io")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("kept %d documents, want 2", n)
	}
	got := out.String()
	for _, want := range []string{"name: cephconnections.csi.ceph.io", "name: clientprofiles.csi.ceph.io", "    kind: CephConnection"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"widgets.example.com", "ClusterRole", "Deployment"} {
		if strings.Contains(got, not) {
			t.Errorf("output has %q:\n%s", not, got)
		}
	}
	if !strings.HasPrefix(got, "---\napiVersion: apiextensions.k8s.io/v1\n") || strings.Count(got, "---\n") != 2 {
		t.Errorf("want two documents, each after ---:\n%s", got)
	}
}

func TestFilterNothingKept(t *testing.T) {
	var out strings.Builder
	n, err := filter(strings.NewReader(stream), &out, "ceph.rook.io")
	if err != nil || n != 0 || out.Len() != 0 {
		t.Errorf("got %d, %v, %q; want 0, nil, empty", n, err, out.String())
	}
}
