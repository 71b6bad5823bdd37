package envtest

import (
	"testing"

	"github.com/prism-storage/prism/internal/ioclass"
)

// TestDefaultCephOSDPolicyIsAccepted: the shipped default policy, with RocksDB's thread names
// (rocksdb:low0, a ':' in a ProcessName value), passes the CRD's validation on a real apiserver.
func TestDefaultCephOSDPolicyIsAccepted(t *testing.T) {
	obj := parse(t, string(ioclass.CephOSDYAML), nil)
	obj.SetName(unique("ceph-osd-default"))
	if err := create(obj); err != nil {
		t.Fatalf("the default policy is rejected: %v", err)
	}
}
