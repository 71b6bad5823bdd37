package rook

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// HealthCheck is one check of `ceph health -f json`.
type HealthCheck struct {
	Code, Severity, Summary string
	// Muted: an admin muted it (`ceph health mute`); Ceph keeps reporting it.
	Muted bool
}

// CephHealthReport is `ceph health -f json`: the status and its checks, sorted by code.
type CephHealthReport struct {
	Status string
	Checks []HealthCheck
}

// ParseHealth reads `ceph health -f json` (and `ceph health detail -f json`, whose extra
// detail lines it ignores).
func ParseHealth(raw []byte) (CephHealthReport, error) {
	var doc struct {
		Status *string `json:"status"`
		Checks map[string]struct {
			Severity string `json:"severity"`
			Summary  struct {
				Message string `json:"message"`
			} `json:"summary"`
			Muted bool `json:"muted"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return CephHealthReport{}, fmt.Errorf("ceph health: %w", err)
	}
	if doc.Status == nil || *doc.Status == "" {
		return CephHealthReport{}, errors.New("ceph health: no status")
	}
	out := CephHealthReport{Status: *doc.Status}
	for code, c := range doc.Checks {
		if code == "" || c.Severity == "" {
			return CephHealthReport{}, fmt.Errorf("ceph health: checks[%q].severity is empty", code)
		}
		out.Checks = append(out.Checks, HealthCheck{Code: code, Severity: c.Severity, Summary: c.Summary.Message, Muted: c.Muted})
	}
	sort.Slice(out.Checks, func(i, j int) bool { return out.Checks[i].Code < out.Checks[j].Code })
	return out, nil
}
