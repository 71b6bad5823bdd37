package rook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Sizes as internal/plan counts them.
const (
	MiB = prismv1.MiB
	GiB = 1024 * MiB
)

// fieldManager is a policy's field manager (controllers/hybridstoragepolicy).
const fieldManager = "prism-operator/policy-7"

// managedFields as the API server recorded them in the envtest (test/envtest/rookpvc_test.go).
const (
	prismOwnsBoth  = `{"f:metadata":{"f:annotations":{"f:nodes.prism.storage.io/policy-7":{}}},"f:spec":{"f:storage":{"f:nodes":{},"f:storageClassDeviceSets":{}}}}`
	prismOwnsNodes = `{"f:metadata":{"f:annotations":{"f:nodes.prism.storage.io/policy-7":{}}},"f:spec":{"f:storage":{"f:nodes":{}}}}`
)

func withManagedFields(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetManagedFields(entries)
	return u
}

func TestOwnsField(t *testing.T) {
	path := []string{"spec", "storage", "storageClassDeviceSets"}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"Prism applied the list", withManagedFields(entry(fieldManager, metav1.ManagedFieldsOperationApply, prismOwnsBoth)), true},
		{"Prism applied only nodes", withManagedFields(entry(fieldManager, metav1.ManagedFieldsOperationApply, prismOwnsNodes)), false},
		{"the admin owns the list", withManagedFields(entry("admin", metav1.ManagedFieldsOperationUpdate, prismOwnsBoth), entry(fieldManager, metav1.ManagedFieldsOperationApply, prismOwnsNodes)), false},
		{"an update under Prism's name is not Prism's apply", withManagedFields(entry(fieldManager, metav1.ManagedFieldsOperationUpdate, prismOwnsBoth)), false},
		{"unreadable fields", withManagedFields(entry(fieldManager, metav1.ManagedFieldsOperationApply, `{`)), false},
		{"no managed fields", withManagedFields(), false},
	}
	for _, tc := range cases {
		if got := OwnsField(tc.obj, fieldManager, path...); got != tc.want {
			t.Errorf("%s: OwnsField = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStayingInNodes(t *testing.T) {
	cached := prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: "/dev/disk/by-id/f", Cache: &prismv1.PlannedPartition{Number: 2}}}}
	plain := prismv1.NodePlan{FastDevices: []prismv1.FastDevicePlan{{StablePath: "/dev/disk/by-id/f"}}}
	existing := []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{"name": "admins"}}
	ready := map[string]prismv1.NodePlan{"a": cached, "b": plain, "c": cached}
	// a: now cached with its entry still there -> stays; b: no cache; c: no entry any more;
	// d: not ready (waiting is handled separately).
	got := stayingInNodes([]string{"a", "b", "c", "d"}, ready, existing)
	if strings.Join(got, ",") != "a" {
		t.Errorf("stayingInNodes = %v, want [a]", got)
	}
}

func TestHeldMessage(t *testing.T) {
	held := []HeldDevice{{DataDevice: "/dev/disk/by-id/q1", Reason: "core is Pending"}, {DataDevice: "/dev/disk/by-id/q2", Reason: "x"}}
	if got := heldMessage("node-a", held); got != "node-a: 2 capacity devices wait for their cache cores (/dev/disk/by-id/q1: core is Pending; and 1 more)" {
		t.Errorf("heldMessage = %q", got)
	}
	if got := heldMessage("node-a", held[:1]); got != "node-a: 1 capacity devices wait for their cache cores (/dev/disk/by-id/q1: core is Pending)" {
		t.Errorf("heldMessage = %q", got)
	}
}

// cephAnswersOf are the answers the probe would have read in a recorded state (testdata/<dir>/<state>).
// The Ceph 16 states were recorded before the destroyed question (decision 0058): their answer
// to it is the probe's own, recorded on Ceph 16 by test/ceph TestCephProbeClient, with the
// host's OSD destroyed in the destroyed state and none destroyed in the others.
func cephAnswersOf(dir, state string, at time.Time) CephAnswers {
	read := func(elem ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, elem...)...))
		if err != nil {
			panic(err)
		}
		return b
	}
	destroyed := read("probe", "ceph16", "destroyed.json")
	if state == "destroyed" {
		destroyed = read("probe", "ceph16", "destroyed-destroyed.json")
	}
	return CephAnswers{At: at, Health: read(dir, state, "health.json"), PGStat: read(dir, state, "pg-stat.json"),
		Devices: read(dir, state, "device-ls-by-host.json"), SafeToDestroy: read(dir, state, "safe-to-destroy.json"), Destroyed: destroyed}
}
