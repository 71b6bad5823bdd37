package envtest

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// status.partitions alone decides whether a DB slot may go to a new data device (decision
// 0037): the API server refuses a report that lists one partition twice (a second, Empty
// entry would hide the first) or calls a slot Empty beside the signature it found.
func TestPartitionStatusIsUniqueAndConsistent(t *testing.T) {
	ctx := context.Background()
	const dev = "/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PHAL110100AA800BGN"
	part := func(n int32, content prismv1.DBSlotContent, found string) prismv1.PartitionStatus {
		return prismv1.PartitionStatus{Device: dev, Number: n, Label: "prism-db-00", State: prismv1.PartitionReady, DBContent: content, DBFound: found}
	}
	other := "/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PHAL110100AB800BGN"
	for _, tc := range []struct {
		name  string
		parts []prismv1.PartitionStatus
		err   string
	}{
		{"one slot twice, the second Empty", []prismv1.PartitionStatus{part(1, prismv1.DBSlotInUse, "ceph_bluestore"), part(1, prismv1.DBSlotEmpty, "")},
			"partitions[1]: partitions must be sorted by device then number, each once"},
		{"out of order", []prismv1.PartitionStatus{part(2, "", ""), part(1, "", "")}, "partitions[1]: partitions must be sorted"},
		{"Empty beside a signature", []prismv1.PartitionStatus{part(1, prismv1.DBSlotEmpty, "ceph_bluestore")},
			"a DB slot reported Empty lists no signature in dbFound"},
		{"a valid report", []prismv1.PartitionStatus{part(1, prismv1.DBSlotInUse, "ceph_bluestore"), part(2, prismv1.DBSlotEmpty, ""), part(3, "", ""),
			{Device: other, Number: 1, Label: "prism-db-00", State: prismv1.PartitionPending}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sn := &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: unique("partstatus")}}
			if err := env.Client.Create(ctx, sn); err != nil {
				t.Fatal(err)
			}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sn), sn); err != nil {
				t.Fatal(err)
			}
			sn.Status.Partitions = tc.parts
			err := env.Client.Status().Update(ctx, sn)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("a valid report refused: %v", err)
			case tc.err != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want 422 with %q", err, tc.err)
			}
		})
	}
}
