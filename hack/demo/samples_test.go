package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
)

// TestSampleClassificationPolicyIsTheDefault: config/samples/classificationpolicy-ceph-osd.yaml,
// which the demo applies, is Prism's built-in ceph-osd policy (ioclass.DefaultCephOSD) object
// for object. When the default changes, copy internal/ioclass/defaults/ceph-osd.yaml from its
// apiVersion line down into the sample.
func TestSampleClassificationPolicyIsTheDefault(t *testing.T) {
	var sample prismv1.ClassificationPolicy
	readSample(t, "classificationpolicy-ceph-osd.yaml", &sample)
	if want := ioclass.DefaultCephOSD(); !reflect.DeepEqual(&sample, want) {
		t.Errorf("config/samples/classificationpolicy-ceph-osd.yaml differs from ioclass.DefaultCephOSD():\nsample %+v\nwant   %+v", sample, *want)
	}
}

// TestSampleWriteBackPolicyNamesTheSampleClasses: the write-back sample asks for a cache with
// the sample ClassificationPolicy, so applying the two samples gives every node a cache plan.
func TestSampleWriteBackPolicyNamesTheSampleClasses(t *testing.T) {
	var policy prismv1.HybridStoragePolicy
	readSample(t, "hybridstoragepolicy-writeback.yaml", &policy)
	c := policy.Spec.Cache
	if c.Mode != prismv1.CacheWriteBack || c.ClassificationPolicyName != ioclass.DefaultCephOSD().Name || policy.Spec.Mode != prismv1.ModeApply {
		t.Errorf("cache %+v, mode %s: want an applied WriteBack cache with ClassificationPolicy %s", c, policy.Spec.Mode, ioclass.DefaultCephOSD().Name)
	}
}

func readSample(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("config/samples/%s: %v", name, err)
	}
}
