package cephdaemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Counters are one logger's integer counters from `perf dump <logger>` (bluefs:
// db_used_bytes, bytes_written_wal, ...). Averages and histograms (objects) are left out.
type Counters map[string]uint64

// ParsePerfDump reads the reply of `perf dump <logger>`: {"<logger>": {"name": n, ...}}.
// A counter that is not a non-negative integer is an error naming it; a non-negative fraction is
// a gauge in seconds, left out like the averages.
func ParsePerfDump(data []byte, logger string) (Counters, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("perf dump %s: %w", logger, err)
	}
	raw, ok := top[logger]
	if !ok {
		return nil, fmt.Errorf("perf dump %s: no %q section in the reply", logger, logger)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("perf dump %s: section %q: %w", logger, logger, err)
	}
	out := Counters{}
	for name, v := range fields {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] == '{' || v[0] == '[' {
			continue
		}
		n, err := strconv.ParseUint(string(v), 10, 64)
		if f, ferr := strconv.ParseFloat(string(v), 64); err != nil && ferr == nil && f >= 0 && bytes.ContainsAny(v, ".eE") {
			continue // a gauge in seconds (Ceph 20.2's bluefs alloc_db_max_lat), not a counter
		}
		if err != nil {
			return nil, fmt.Errorf("perf dump %s: %s = %s: not a non-negative integer", logger, name, v)
		}
		out[name] = n
	}
	return out, nil
}

// Get returns a counter and whether the daemon reported it.
func (c Counters) Get(name string) (uint64, bool) {
	v, ok := c[name]
	return v, ok
}

// GetStore returns one of BlueStore's counters by its Ceph 20.2 name ("allocated",
// "write_big_bytes"), or by Ceph 16.2's, which carried the logger's prefix ("bluestore_allocated").
func (c Counters) GetStore(name string) (uint64, bool) {
	if v, ok := c[name]; ok {
		return v, true
	}
	return c.Get("bluestore_" + name)
}
