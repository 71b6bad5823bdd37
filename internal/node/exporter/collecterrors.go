package exporter

import (
	"fmt"
	"sort"
	"strings"
)

// maxNamedFailures is how many failing devices CollectErrors names.
const maxNamedFailures = 8

// CollectFailure is one device whose wear counters one source could not read.
type CollectFailure struct {
	Device, Source, Message string
}

// trackFailures records the failures of one poll (device -> source -> message) and keeps
// those that were not failing at the previous poll for NewFailures. Called with e.mu held.
func (e *Exporter) trackFailures(now map[string]map[string]string) {
	for dev, bySource := range now {
		for src, msg := range bySource {
			if _, was := e.failing[dev][src]; !was {
				e.fresh = append(e.fresh, CollectFailure{Device: dev, Source: src, Message: msg})
			}
		}
	}
	e.failing = now
}

// NewFailures returns the failures that started since the last call, each once: the agent
// logs them when they start, not at every poll (prism_device_collect_errors_total counts them).
func (e *Exporter) NewFailures() []CollectFailure {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.fresh
	e.fresh = nil
	sort.Slice(out, func(i, j int) bool {
		return out[i].Device < out[j].Device || (out[i].Device == out[j].Device && out[i].Source < out[j].Source)
	})
	return out
}

// CollectErrors describes the last poll's failures for the StorageNode's status ("" when every
// source of every device was read, or before the first poll).
func (e *Exporter) CollectErrors() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.failing) == 0 {
		return ""
	}
	var parts []string
	for dev, bySource := range e.failing {
		var srcs []string
		for src := range bySource {
			srcs = append(srcs, src)
		}
		sort.Strings(srcs)
		parts = append(parts, dev+" ("+strings.Join(srcs, ", ")+")")
	}
	sort.Strings(parts)
	more := ""
	if len(parts) > maxNamedFailures { // a status message, not a listing of a 60-drive node
		more = fmt.Sprintf("; and %d more", len(parts)-maxNamedFailures)
		parts = parts[:maxNamedFailures]
	}
	return fmt.Sprintf("wear counters not read for %d of %d devices: %s%s", len(e.failing), len(e.devices), strings.Join(parts, "; "), more)
}
