package rook

import (
	"fmt"
	"time"
)

// newDriveAllows is "" when a new drive of a node that already has OSD entries may be written
// to the CephCluster, else why it waits (decision 0061): Ceph's answers for the node are fresh
// and their destroyed question says no OSD is destroyed under the node's CRUSH host. Rook v1.21
// and later prepare a new drive of a node as any id destroyed there, with the DB `ceph-volume
// lvm list <id>` finds and not the drive's own slot (decision 0056 (d)). Only that question
// counts: a node whose other questions failed (a CRUSH host without OSDs fails safe-to-destroy)
// still answered it whole, and a missing or unparsable answer holds. destroyed: the hold names
// destroyed ids, which only the admin's purge ends.
func newDriveAllows(a CephAnswers, found bool, node string, now time.Time) (why string, destroyed bool) {
	switch age := now.Sub(a.At); {
	case !found:
		return "no answers from Ceph for " + node + " yet", false
	case a.At.IsZero() || age > AnswersMaxAge:
		return fmt.Sprintf("Ceph's answers for %s are from %s, older than %s", node, a.At.UTC().Format(time.RFC3339), AnswersMaxAge), false
	case a.Destroyed == nil:
		why := a.Err
		if why == "" {
			why = "the probe has no destroyed answer"
		}
		return fmt.Sprintf("Ceph could not say whether an OSD is destroyed under %s's CRUSH host: %s", node, why), false
	}
	ids, err := ParseDestroyed(a.Destroyed)
	if err != nil {
		return err.Error(), false
	}
	why = destroyedHold(ids, node, holdNewDrive)
	return why, why != ""
}
