package classificationpolicy

import (
	"context"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestStorageNodeMapsToThePolicyItsPlanNames(t *testing.T) {
	named := node("a", prismv1.CacheWriteBack, "", nil, "")
	noCache := node("b", prismv1.CacheWriteBack, "", nil, "")
	noCache.Spec.Plan.Cache = nil
	for _, tc := range []struct {
		obj  *prismv1.StorageNode
		want string
	}{
		{&named, "ceph-osd"},
		{&noCache, ""},
		{&prismv1.StorageNode{}, ""},
	} {
		reqs := policyOfObject(context.Background(), tc.obj)
		if (tc.want == "" && len(reqs) != 0) || (tc.want != "" && (len(reqs) != 1 || reqs[0].Name != tc.want)) {
			t.Errorf("%s: %v, want %q", tc.obj.Name, reqs, tc.want)
		}
	}
	if reqs := policyOfObject(context.Background(), &prismv1.ClassificationPolicy{}); reqs != nil {
		t.Errorf("a policy mapped to %v", reqs)
	}
}
