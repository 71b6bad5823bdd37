package rook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ParseDestroyed reads `ceph osd tree-from <host> destroyed -f json`: the ids of the OSDs
// destroyed under the host, sorted. Ceph lists the host bucket (a negative id) and each such
// OSD with its status; the probe keeps only the OSDs, each with its id and status (decision
// 0058). An OSD whose status is not "destroyed" is an error: the question asked for those alone.
func ParseDestroyed(raw []byte) ([]int, error) {
	var doc struct {
		Nodes *[]struct {
			ID     *int   `json:"id"`
			Status string `json:"status"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("ceph osd tree-from destroyed: %w", err)
	}
	if doc.Nodes == nil {
		return nil, errors.New("ceph osd tree-from destroyed: no nodes list")
	}
	ids := []int{}
	for i, n := range *doc.Nodes {
		switch {
		case n.ID == nil:
			return nil, fmt.Errorf("ceph osd tree-from destroyed: nodes[%d].id is missing", i)
		case *n.ID < 0:
			continue // a CRUSH bucket
		case n.Status != "destroyed":
			return nil, fmt.Errorf("ceph osd tree-from destroyed: nodes[%d].status of osd.%d is %q, not destroyed", i, *n.ID, n.Status)
		case slices.Contains(ids, *n.ID):
			return nil, fmt.Errorf("ceph osd tree-from destroyed: osd.%d is listed twice", *n.ID)
		}
		ids = append(ids, *n.ID)
	}
	slices.Sort(ids)
	return ids, nil
}

// destroyedHold is "" when no OSD is destroyed under the node's CRUSH host, else why the node's
// drives wait (what: holdRecreated or holdNewDrive). Rook v1.21 and later pair every destroyed
// id of a node with the next blank drive of its entries at each OSD prepare, with the DB
// `ceph-volume lvm list <id>` finds and not the entry's metadataDevice (decision 0056 (d)):
// releasing a re-created OSD's drive, or writing a new drive's entry, then prepares a destroyed
// id on it, with no DB on the fast device after a fast-device replacement. The runbooks purge,
// so Prism's own flow leaves no destroyed id; one left is the admin's to purge (decisions 0058,
// 0061).
func destroyedHold(ids []int, node string, what destroyedHoldOf) string {
	if len(ids) == 0 {
		return ""
	}
	names, purge := "", ""
	for i, id := range ids {
		if i > 0 {
			names += ", "
			purge += "; "
		}
		names += fmt.Sprintf("osd.%d", id)
		purge += fmt.Sprintf("ceph osd purge %d --yes-i-really-mean-it", id)
	}
	return fmt.Sprintf("Ceph has %s destroyed under %s's CRUSH host, and Rook v1.21 or later %s: once it is safe to destroy, purge it (%s; %s)",
		names, node, what.consequence, purge, what.runbook)
}

// destroyedHoldOf is what a destroyed id would do to the drives held, and where the runbook
// says to purge it.
type destroyedHoldOf struct{ consequence, runbook string }

var (
	holdRecreated = destroyedHoldOf{"gives a destroyed id to the next blank drive of the node with no DB on the new fast device",
		"docs/runbooks/replace-fast-device.md step 2"}
	holdNewDrive = destroyedHoldOf{"prepares a new drive of the node as a destroyed id, with the DB ceph-volume lvm list finds for that id and not the drive's slot",
		"docs/runbooks/replace-data-disk.md step 2"}
)
