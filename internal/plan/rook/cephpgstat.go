package rook

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// PGStates is `ceph pg stat -f json`: how many PGs are in each state ("active+clean", ...).
type PGStates struct {
	// Ready: the mgr has PG statistics (pg_ready); until then the counts mean nothing.
	Ready   bool
	Total   int
	ByState map[string]int
}

type pgSummary struct {
	ByState []struct {
		Name *string `json:"name"`
		Num  *int    `json:"num"`
	} `json:"num_pg_by_state"`
	NumPGs *int `json:"num_pgs"`
}

// ParsePGStat reads `ceph pg stat -f json`: the counts sit in pg_summary (Ceph 16), or at the
// top level next to pg_ready.
func ParsePGStat(raw []byte) (PGStates, error) {
	var doc struct {
		Ready   *bool      `json:"pg_ready"`
		Summary *pgSummary `json:"pg_summary"`
		pgSummary
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return PGStates{}, fmt.Errorf("ceph pg stat: %w", err)
	}
	if doc.Ready == nil {
		return PGStates{}, errors.New("ceph pg stat: no pg_ready")
	}
	s := doc.pgSummary
	if doc.Summary != nil {
		s = *doc.Summary
	}
	if s.NumPGs == nil {
		return PGStates{}, errors.New("ceph pg stat: no num_pgs")
	}
	out := PGStates{Ready: *doc.Ready, Total: *s.NumPGs, ByState: map[string]int{}}
	sum := 0
	for i, st := range s.ByState {
		if st.Name == nil || *st.Name == "" || st.Num == nil || *st.Num < 0 {
			return PGStates{}, fmt.Errorf("ceph pg stat: num_pg_by_state[%d] needs a name and a count", i)
		}
		out.ByState[*st.Name] += *st.Num
		sum += *st.Num
	}
	if sum != out.Total {
		return PGStates{}, fmt.Errorf("ceph pg stat: num_pg_by_state adds up to %d PGs, num_pgs is %d", sum, out.Total)
	}
	return out, nil
}

// Inactive is how many PGs are in a state without "active" (peering, down, incomplete,
// undersized+peered, unknown, ...), and those states, sorted.
func (p PGStates) Inactive() (int, []string) {
	n, states := 0, []string(nil)
	for st, k := range p.ByState {
		if k > 0 && !slices.Contains(strings.Split(st, "+"), "active") {
			n += k
			states = append(states, st)
		}
	}
	sort.Strings(states)
	return n, states
}

// Stale is how many PGs are stale, and those states, sorted: the mgr has not heard from the
// PG's primary, so "active" there is what it last knew. Recorded on Ceph 20.2.4: the only OSD
// of a pool destroyed, its PGs stale+active+clean, last acting that OSD.
func (p PGStates) Stale() (int, []string) {
	n, states := 0, []string(nil)
	for st, k := range p.ByState {
		if k > 0 && slices.Contains(strings.Split(st, "+"), "stale") {
			n += k
			states = append(states, st)
		}
	}
	sort.Strings(states)
	return n, states
}

// NotClean is how many PGs are in a state without both "active" and "clean" (degraded,
// undersized, remapped, backfilling, recovering, peering, ...; scrubbing is clean), and those
// states, sorted: what `ceph osd safe-to-destroy` counts when it names a down OSD.
func (p PGStates) NotClean() (int, []string) {
	n, states := 0, []string(nil)
	for st, k := range p.ByState {
		tokens := strings.Split(st, "+")
		if k > 0 && (!slices.Contains(tokens, "active") || !slices.Contains(tokens, "clean")) {
			n += k
			states = append(states, st)
		}
	}
	sort.Strings(states)
	return n, states
}
