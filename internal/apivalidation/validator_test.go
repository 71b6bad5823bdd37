package apivalidation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const repo = "../.."

// TestManifestsInTheRepoAreAccepted: every policy manifest shipped or used by tests passes
// the API server's validation and the operator's checks.
func TestManifestsInTheRepoAreAccepted(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		"config/samples/hybridstoragepolicy.yaml", "config/samples/hybridstoragepolicy-writeback.yaml",
		"config/samples/classificationpolicy-ceph-osd.yaml", "internal/ioclass/defaults/ceph-osd.yaml",
		"test/support/ioclasstest/five-classes.yaml", "test/guest/testdata/policy.yaml",
	} {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			obj, err := Decode([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) == 0 {
				continue
			}
			if errs := v.Check(obj); len(errs) > 0 {
				t.Errorf("%s: %v", f, errs)
			}
		}
	}
}

// TestValidateNamesTheField is a small offline subset of test/envtest's parity test.
func TestValidateNamesTheField(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	const policy = `apiVersion: prism.storage.io/v1alpha1
kind: HybridStoragePolicy
metadata: {name: p}
spec:
  mode: DryRun
  nodeSelector: {matchExpressions: [{key: role, operator: In}]}
  cephCluster: {namespace: rook-ceph, name: rook-ceph}
  db: {size: 4294967296}
`
	for _, tc := range []struct{ from, to, want string }{
		{"", "", "spec.nodeSelector.matchExpressions[0].values: Invalid value"},
		{"mode: DryRun", "mode: dry", `spec.mode: Unsupported value: "dry"`},
		{"mode: DryRun", "mode: DryRun\n  fastDevice: {}", `spec.fastDevice: Forbidden: unknown field "spec.fastDevice"`},
		{"size: 4294967296", "size: 1024", "spec.db.size: Invalid value: 1024: size must be between 2Gi and 64Ti: 1024"},
		{"name: p", "name: P_1", "metadata.name: Invalid value"},
		{"mode: DryRun", "mode: DryRun\n  osd: {ignoreHealthChecks: [pool_no_redundancy]}", `spec.osd.ignoreHealthChecks[0]: Invalid value: "pool_no_redundancy": spec.osd.ignoreHealthChecks[0] in body should match '^[A-Z][A-Z0-9_]*$'`},
		{"mode: DryRun", "mode: DryRun\n  osd: {ignoreHealthChecks: [OSD_NEARFULL, OSD_NEARFULL]}", `spec.osd.ignoreHealthChecks[1]: Duplicate value: "OSD_NEARFULL"`},
		{"mode: DryRun", "mode: DryRun\n  osd: {ignoreHealthChecks: [POOL_NO_REDUNDANCY, PG_AVAILABILITY]}", `spec.osd.ignoreHealthChecks: Invalid value: PG_AVAILABILITY says data is unavailable, damaged or full: it always holds a re-created OSD back and cannot be ignored`},
	} {
		obj, err := Decode([]byte(strings.Replace(policy, tc.from, tc.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range v.Check(obj) {
			got = append(got, e.Error())
		}
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s -> %s: %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
	// With the selector fixed, the integer DB size is accepted (a quantity() call refused it).
	obj, _ := Decode([]byte(strings.Replace(strings.Replace(policy, "operator: In", "operator: Exists", 1),
		"mode: DryRun", "mode: DryRun\n  osd: {ignoreHealthChecks: [OSD_NEARFULL, POOL_NEARFULL]}", 1)))
	if errs := v.Check(obj); len(errs) > 0 {
		t.Errorf("valid policy refused: %v", errs)
	}
}
