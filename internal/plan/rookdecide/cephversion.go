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

// LosesPartitionDB says whether a Ceph version as Rook reports it (status.version.version,
// "20.2.4-0") loses a partition given as block.db, so that an OSD prepared from a partition DB
// slot cannot start. false for a version that cannot be read (not reported yet). The rule the
// e2e suite asserts against.
func LosesPartitionDB(version string) bool {
	major, ok := cephMajor(version)
	return ok && major >= partitionDBBrokenFromMajor
}

// lostPartitionDB says, from the Ceph version Rook reports in the CephCluster's status, why a
// partition DB slot handed to Rook for a new OSD would leave an OSD that cannot start; "" when
// the version is not affected or not reported yet. A DB slot on a logical volume is not
// affected (decision 0036).
func lostPartitionDB(cluster *unstructured.Unstructured) string {
	version, _, _ := unstructured.NestedString(cluster.Object, "status", "version", "version")
	if !LosesPartitionDB(version) {
		return ""
	}
	return fmt.Sprintf("Rook reports Ceph %s, whose ceph-volume loses a partition given as block.db "+
		"(no ceph.db_uuid tag: the OSD starts without its DB and aborts; ceph/ceph#69506, rook/rook#17901): "+
		"no entry that would prepare a new OSD from a partition is written (DB slots on logical volumes are), "+
		"existing entries are kept", version)
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
