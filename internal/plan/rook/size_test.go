package rook

import (
	"fmt"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/bytesize"
)

// largeCluster is an input of n ready nodes of 22 QLC drives each, their DB slots on logical
// volumes of one fast device, named as real NVMe drives' by-id links are (about 55 bytes).
func largeCluster(n int) Input {
	var nodes []Node
	for i := range n {
		fast := fmt.Sprintf("nvme-INTEL_SSDPF21Q016TB_PHAL%06d1P6AGN", i)
		var data []string
		for j := range 22 {
			data = append(data, fmt.Sprintf("nvme-INTEL_SSDPF2NV307TZ_PHAC%06d%02dP6AGN", i, j))
		}
		node := Node{Name: fmt.Sprintf("storage-rack%02d-node%03d.example.net", i/40, i%40), Plan: slotPlan(fast, data...), Ready: true}
		var volumes []*prismv1.DBVolumeStatus
		for j := range 22 {
			volumes = append(volumes, readyVolume(fast, int32(j)))
		}
		nodes = append(nodes, withVolumes(node, volumes...))
	}
	return input(cluster(nil, nil, "HEALTH_OK"), nodes...)
}

func TestACephClusterTooLargeForEtcdIsNotApplied(t *testing.T) {
	for _, tc := range []struct {
		nodes      int
		configured int64
		applied    bool
	}{
		{nodes: 100, applied: true},
		{nodes: 450, applied: true},
		{nodes: 600, applied: false},
		{nodes: 600, configured: 3 << 20, applied: true},
		// The API server's own 3 MiB limit caps whatever etcd is said to allow.
		{nodes: 1200, configured: 8 << 20, applied: false},
	} {
		t.Run(fmt.Sprintf("%d nodes, limit %d", tc.nodes, tc.configured), func(t *testing.T) {
			in := largeCluster(tc.nodes)
			in.MaxCephClusterBytes = tc.configured
			d, err := Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			size, err := storedSize(in.Cluster, d.Nodes)
			if tc.applied {
				if !d.Changed || d.Object == nil || d.Outcome.Reason != ReasonApplied {
					t.Fatalf("not applied: changed %v, outcome %+v", d.Changed, d.Outcome)
				}
				if err != nil || int64(size) > SizeLimit(tc.configured) {
					t.Fatalf("applied a CephCluster of %d bytes over the limit %d (%v)", size, SizeLimit(tc.configured), err)
				}
				return
			}
			if d.Changed || d.Object != nil || d.Outcome.Reason != ReasonCephClusterTooLarge || d.Outcome.OK {
				t.Fatalf("applied: changed %v, object %v, outcome %+v", d.Changed, d.Object != nil, d.Outcome)
			}
			for _, want := range []string{fmt.Sprintf("entries of %d nodes (%d OSDs)", tc.nodes, 22*tc.nodes), "rook-ceph/ceph", "--max-request-bytes", "nothing is applied"} {
				if !strings.Contains(d.Outcome.Message, want) {
					t.Errorf("message %q does not say %q", d.Outcome.Message, want)
				}
			}
		})
	}
}

// TestLargestCephCluster prints how many nodes of 22 OSDs one CephCluster holds, for
// docs/rook.md; it fails if that falls below what the docs promise.
func TestLargestCephCluster(t *testing.T) {
	for _, limit := range []int64{0, 3 << 20} {
		applied := func(n int) bool {
			in := largeCluster(n)
			in.MaxCephClusterBytes = limit
			d, err := Decide(in)
			if err != nil {
				t.Fatal(err)
			}
			return d.Outcome.Reason == ReasonApplied
		}
		// Start from the size of 100 nodes, then step to the largest n applied.
		in := largeCluster(100)
		d, err := Decide(in)
		if err != nil {
			t.Fatal(err)
		}
		size100, _ := storedSize(in.Cluster, d.Nodes)
		lo := int(SizeLimit(limit) * 100 / int64(size100))
		for !applied(lo) {
			lo--
		}
		for applied(lo + 1) {
			lo++
		}
		in = largeCluster(lo)
		in.MaxCephClusterBytes = limit
		if d, err = Decide(in); err != nil {
			t.Fatal(err)
		}
		size, _ := storedSize(in.Cluster, d.Nodes)
		t.Logf("limit %s: at most %d nodes of 22 OSDs (%d OSDs), %s per node", bytesize.IEC(SizeLimit(limit)), lo, 22*lo, bytesize.IEC(int64(size/lo)))
		if want := map[int64]int{0: 450, 3 << 20: 900}[limit]; lo < want {
			t.Errorf("limit %d: %d nodes fit, docs/rook.md promises %d", limit, lo, want)
		}
	}
}
