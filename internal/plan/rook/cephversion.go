package rook

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
// slot cannot start. false for a version that cannot be read.
func LosesPartitionDB(version string) bool {
	major, ok := cephMajor(version)
	return ok && major >= partitionDBBrokenFromMajor
}

// PartitionDBWithheld says why a partition DB slot handed to Rook for a new OSD could leave an
// OSD that cannot start, so that Prism writes no such entry (the rule the e2e suite asserts
// against); "" when no Ceph the cluster runs or is about to run is affected. The Ceph
// is read from both places the CephCluster names it: the version Rook detected
// (status.version.version) and the tag of the image it is to run (spec.cephVersion.image),
// which Rook detects and then orchestrates OSDs from, right away, from the entries it finds
// then. So an affected version in either withholds, and so does neither being readable: an
// entry written before Rook reports an affected version would be prepared before Prism could
// take it back (decision 0035). A DB slot on a logical volume is never affected (decision
// 0036).
func PartitionDBWithheld(cluster *unstructured.Unstructured) string {
	const consequence = "no entry that would prepare a new OSD from a partition is written (DB slots on logical volumes are), " +
		"existing entries are kept"
	reported, _, _ := unstructured.NestedString(cluster.Object, "status", "version", "version")
	image, _, _ := unstructured.NestedString(cluster.Object, "spec", "cephVersion", "image")
	tagged, tagOK := imageCephVersion(image)
	switch {
	case LosesPartitionDB(reported):
		return fmt.Sprintf("Rook reports Ceph %s, whose ceph-volume loses a partition given as block.db "+
			"(no ceph.db_uuid tag: the OSD starts without its DB and aborts; ceph/ceph#69506, rook/rook#17901): %s", reported, consequence)
	case tagOK && LosesPartitionDB(tagged):
		return fmt.Sprintf("spec.cephVersion.image %q is Ceph %s, whose ceph-volume loses a partition given as block.db "+
			"(no ceph.db_uuid tag: the OSD starts without its DB and aborts; ceph/ceph#69506, rook/rook#17901): %s", image, tagged, consequence)
	case !tagOK && !readable(reported):
		return fmt.Sprintf("the Ceph version is not known yet (Rook reports none in status.version.version, and spec.cephVersion.image %q "+
			"has no version tag), and Ceph 20 and later lose a partition given as block.db (ceph/ceph#69506): %s", image, consequence)
	}
	return ""
}

// firstTaggedCephMajor is the smallest major an image tag may give for a Ceph version: Ceph's
// numbering reached 10 (Jewel) long before BlueStore; a smaller one is another project's
// version, such as Rook's own image tag (v1.20.2), which some clusters use as their Ceph image.
const firstTaggedCephMajor = 10

// imageCephVersion is the version in a Ceph image reference's tag ("quay.io/ceph/ceph:v19.2.3"
// gives "19.2.3", "ceph:v20" gives "20"); false when the tag names no Ceph version ("latest",
// a digest only, no tag, "v1.20.2-ceph-20.2.4").
func imageCephVersion(image string) (string, bool) {
	ref, _, _ := strings.Cut(strings.TrimSpace(image), "@")
	name := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	if !ok || !validTag(tag) {
		return "", false
	}
	version := strings.TrimPrefix(tag, "v")
	major, ok := cephMajor(version)
	return version, ok && major >= firstTaggedCephMajor
}

// readable says whether version begins with a Ceph major number.
func readable(version string) bool {
	_, ok := cephMajor(version)
	return ok
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

// validTag says whether tag is an image tag as the OCI distribution grammar has it
// ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}): a reference whose "tag" holds anything else (a space
// before a digest, a stray colon) names no version.
func validTag(tag string) bool {
	if tag == "" || len(tag) > 128 || tag[0] == '.' || tag[0] == '-' {
		return false
	}
	for _, c := range tag {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
