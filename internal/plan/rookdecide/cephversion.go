package rookdecide

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// partitionDBBrokenFromMajor is the first Ceph major release whose ceph-volume loses a GPT
// partition given as block.db to `ceph-volume lvm prepare`, the command Rook runs for a
// storage.nodes device with a partition metadataDevice: it records no ceph.db_uuid or
// ceph.db_device tag on the OSD's block LV (a regression of its LvmBlueStore refactor, commit
// 7626c12e5fd4; ceph/ceph#69506, not merged on 2026-11-26; rook/rook#17901), so activation
// makes no block.db link and the OSD aborts opening BlueFS. Seen with Rook v1.20.2 and Ceph
// 20.2.4 in the e2e chain (docs/e2e-transcripts/2026-11-26-chain-first.md); Rook's own canary
// fails on 20.2.2. Ceph 19 wraps the partition in an LV of its own and is not affected.
// Decision 0035. When a fixed release is known, it bounds this range.
const partitionDBBrokenFromMajor = 20

// lostPartitionDB says, from the Ceph version Rook reports in the CephCluster's status
// (status.version.version, "20.2.4-0"), why a partition DB slot handed to Rook would leave an
// OSD that cannot start; "" when the version is not affected or not reported yet.
func lostPartitionDB(cluster *unstructured.Unstructured) string {
	version, _, _ := unstructured.NestedString(cluster.Object, "status", "version", "version")
	major, ok := cephMajor(version)
	if !ok || major < partitionDBBrokenFromMajor {
		return ""
	}
	return fmt.Sprintf("Rook reports Ceph %s, whose ceph-volume loses a partition given as block.db "+
		"(no ceph.db_uuid tag: the OSD starts without its DB and aborts; ceph/ceph#69506, rook/rook#17901): "+
		"no new OSD entry is written, existing entries are kept", version)
}

// cephMajor is the major number of a Ceph version as Rook reports it ("20.2.4-0", "19.2.3").
func cephMajor(version string) (int, bool) {
	head, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	n, err := strconv.Atoi(head)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
