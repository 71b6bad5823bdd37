package envtest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/apivalidation"
)

// transition is one update of an object created from base (after first, when set).
type transition struct {
	name   string
	base   string
	first  func(map[string]any) // applied on create
	change func(map[string]any) // the update
	want   []string             // nil: accepted; else the field path and why
}

// TestChangesThatCannotBeCarriedOutAreRefused: the cache line size while caches run, the slot
// size of a provisioned fast device, and the target CephCluster are fixed by transition rules
// (self == oldSelf); the explicit way through (cache mode None first, a new policy) is
// accepted. apivalidation's ValidateUpdate gives the same verdicts.
func TestChangesThatCannotBeCarriedOutAreRefused(t *testing.T) {
	v, err := apivalidation.New()
	if err != nil {
		t.Fatal(err)
	}
	writeBack := func(line int) func(map[string]any) {
		return edits("spec.cache", obj("mode", "WriteBack", "lineSizeKiB", line))
	}
	nodeCache := func(line int) func(map[string]any) {
		return edits("spec.plan.cache", obj("mode", "WriteBack", "lineSizeKiB", line))
	}
	cases := []transition{
		{"another CephCluster", validPolicy, nil, edits("spec.cephCluster.name", "other"), []string{"spec.cephCluster", "cephCluster cannot change"}},
		{"another CephCluster namespace", validPolicy, nil, edits("spec.cephCluster.namespace", "ceph"), []string{"spec.cephCluster", "cephCluster cannot change"}},
		{"same CephCluster, other mode", validPolicy, nil, edits("spec.mode", "Apply"), nil},
		{"line size while the cache runs", validPolicy, writeBack(4), edits("spec.cache.lineSizeKiB", 64), []string{"spec.cache.lineSizeKiB", "lineSizeKiB is fixed at 4 while caches run: set mode None first"}},
		{"line size with the cache stopped", validPolicy, writeBack(4), edits("spec.cache", obj("mode", "None", "lineSizeKiB", 64)), nil},
		{"line size of a stopped cache when it starts", validPolicy, edits("spec.cache", obj("mode", "None", "lineSizeKiB", 4)), writeBack(64), nil},
		{"slot size of a provisioned fast device", validPlan, nil, func(m map[string]any) {
			fd := fastDevice(m)
			fd["slotSizeBytes"] = 8589934592
			for i, s := range fd["slots"].([]any) {
				p := s.(map[string]any)["partition"].(map[string]any)
				p["sizeBytes"], p["startBytes"] = 8589934592, 1048576+i*8589934592
			}
		}, []string{"spec.plan.fastDevices", "fastDevices[0].slotSizeBytes cannot change once the device has slots"}},
		{"a new fast device with another slot size", validPlan, nil, func(m map[string]any) {
			plan := spec(m)["plan"].(map[string]any)
			plan["fastDevices"] = append(plan["fastDevices"].([]any), obj("stablePath", "/dev/disk/by-id/nvme-FAST2", "slotSizeBytes", 8589934592))
		}, nil},
		{"node cache line size", validPlan, nodeCache(4), edits("spec.plan.cache.lineSizeKiB", 16), []string{"spec.plan.cache.lineSizeKiB", "lineSizeKiB is fixed at 4 while the caches run"}},
		{"node cache dropped", validPlan, nodeCache(4), func(m map[string]any) { delete(spec(m)["plan"].(map[string]any), "cache") }, nil},
		{"node cache started with another line size", validPlan, nil, nodeCache(16), nil},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := parse(t, tc.base, tc.first)
			o.SetName(unique("change"))
			if err := create(o); err != nil {
				t.Fatal(err)
			}
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(o.GroupVersionKind())
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
				t.Fatal(err)
			}
			old := jsonCopy(t, cur.Object)
			tc.change(cur.Object)
			offline := v.ValidateUpdate(jsonCopy(t, cur.Object), old)
			err := env.Client.Update(ctx, cur)
			if (err == nil) != (len(offline) == 0) {
				t.Errorf("verdicts differ: API server %v, offline %v", err, offline)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

// jsonCopy copies an object as the API server would decode it (whole numbers as int64).
func jsonCopy(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	data, err := (&unstructured.Unstructured{Object: m}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	out, err := apivalidation.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
