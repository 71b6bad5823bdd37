package rook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// SafeToDestroy is `ceph osd safe-to-destroy <ids> -f json`: each OSD asked about is in exactly
// one list, Safe or one of the reasons it is not.
type SafeToDestroy struct {
	Safe []int
	// Active: PGs are mapped to it (it is up and serving them).
	Active []int
	// MissingStats: it reported no PG statistics (it is down) and not every PG is active+clean.
	MissingStats []int
	// StoredPGs: it last reported holding PG data and not every PG is active+clean.
	StoredPGs []int
}

// ParseSafeToDestroy reads `ceph osd safe-to-destroy <ids> -f json`. Ceph prints nothing in
// JSON when it cannot decide at all (PGs in an unknown state), which is an error here.
func ParseSafeToDestroy(raw []byte) (SafeToDestroy, error) {
	var doc struct {
		Safe         *[]int `json:"safe_to_destroy"`
		Active       []int  `json:"active"`
		MissingStats []int  `json:"missing_stats"`
		StoredPGs    []int  `json:"stored_pgs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return SafeToDestroy{}, fmt.Errorf("ceph osd safe-to-destroy: %w", err)
	}
	if doc.Safe == nil {
		return SafeToDestroy{}, errors.New("ceph osd safe-to-destroy: no safe_to_destroy list")
	}
	s := SafeToDestroy{Safe: *doc.Safe, Active: doc.Active, MissingStats: doc.MissingStats, StoredPGs: doc.StoredPGs}
	seen := map[int]bool{}
	for _, id := range s.Asked() {
		if id < 0 || seen[id] {
			return SafeToDestroy{}, fmt.Errorf("ceph osd safe-to-destroy: osd.%d is negative or in two lists", id)
		}
		seen[id] = true
	}
	return s, nil
}

// Asked are every OSD id the answer is about, sorted.
func (s SafeToDestroy) Asked() []int {
	all := slices.Concat(s.Safe, s.Active, s.MissingStats, s.StoredPGs)
	sort.Ints(all)
	return all
}

// Why is "" when Ceph says osd.id is safe to destroy, else why not; an OSD the answer does not
// name is not known to be safe.
func (s SafeToDestroy) Why(id int) string {
	switch {
	case slices.Contains(s.Safe, id):
		return ""
	case slices.Contains(s.Active, id):
		return fmt.Sprintf("osd.%d not safe to destroy: PGs are still mapped to it (it is up)", id)
	case slices.Contains(s.MissingStats, id):
		return fmt.Sprintf("osd.%d not safe to destroy: it reports no PG statistics and not every PG is active+clean (missing_stats)", id)
	case slices.Contains(s.StoredPGs, id):
		return fmt.Sprintf("osd.%d not safe to destroy: it last reported storing PG data and not every PG is active+clean (stored_pgs)", id)
	}
	return fmt.Sprintf("osd.%d: Ceph's safe-to-destroy answer does not name it", id)
}

// noOSDUnderHost: the safe-to-destroy answer is the probe's empty list, written when
// `ceph osd ls-tree <the node's CRUSH host>` exited 0 and named no OSD (a missing bucket
// exits ENOENT): the bucket exists, empty, and no OSD was asked about.
func noOSDUnderHost(raw []byte) bool {
	var ids []int
	return json.Unmarshal(raw, &ids) == nil && ids != nil && len(ids) == 0
}
