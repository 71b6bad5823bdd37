package blktrace

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Capture says how a trace summary was recorded by `prism-agent trace`:
// which device, when, for how long, and why the recording stopped. The
// committed OSD trace, recorded by test/ceph, has none.
type Capture struct {
	// Device is the path or MAJOR:MINOR given on the command line; Disk the
	// disk whose bios were traced (a partition's bios are queued to its disk);
	// StartSector and Sectors the traced range of that disk, bios whose start
	// sector lies in it (a whole disk: 0 and its size).
	Device      string `json:"device"`
	Disk        string `json:"disk"`
	Partition   bool   `json:"partition,omitempty"`
	StartSector uint64 `json:"startSector"`
	Sectors     uint64 `json:"sectors"`
	// Started is when tracing began (RFC 3339, UTC); Seconds how long it ran.
	Started string  `json:"started"`
	Seconds float64 `json:"seconds"`
	// StoppedBy is duration, max-events or interrupted.
	StoppedBy string `json:"stoppedBy"`
	// Events are the bios kept; Lost those the kernel's ring buffer dropped
	// (the trace is then incomplete).
	Events uint64 `json:"events"`
	Lost   uint64 `json:"lost"`
}

// Bio is one bio in the order it was queued: what a replay needs that a
// group cannot keep (order, rewrites). Sector is relative to the traced
// device (a partition's start subtracted). In JSON it is the array
// [sector, bytes, "rwbs", "comm", tgid, pid, µs], to keep long traces small;
// traces written before pid and µs (decision 0025) have the first five and
// still load, with PID 0 and no time.
type Bio struct {
	Sector uint64
	Bytes  uint64
	RWBS   string
	Comm   string
	TGID   int
	// PID is the submitting thread's id (what Open CAS's pid condition
	// compares); 0 when the trace did not record it.
	PID int
	// Micros is when the bio was queued, in microseconds after the trace's
	// first bio (the trace clock; tracefs prints microseconds), when Timed.
	Micros uint64
	Timed  bool
}

// Dir is the bio's direction.
func (b Bio) Dir() Direction { return DirOf(b.RWBS) }

// MarshalJSON writes [sector, bytes, "rwbs", "comm", tgid, pid, µs], µs null
// when the bio has no time.
func (b Bio) MarshalJSON() ([]byte, error) {
	var us any
	if b.Timed {
		us = b.Micros
	}
	return json.Marshal([]any{b.Sector, b.Bytes, b.RWBS, b.Comm, b.TGID, b.PID, us})
}

// UnmarshalJSON reads [sector, bytes, "rwbs", "comm", tgid, pid, µs] (µs a
// number or null) or the older [sector, bytes, "rwbs", "comm", tgid], and
// checks each field as ParseLine does.
func (b *Bio) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || (len(raw) != 5 && len(raw) != 7) {
		return fmt.Errorf("bio %s: want [sector, bytes, \"rwbs\", \"comm\", tgid, pid, µs] or [sector, bytes, \"rwbs\", \"comm\", tgid]", clip(data))
	}
	var v Bio
	var us *uint64
	fields := []any{&v.Sector, &v.Bytes, &v.RWBS, &v.Comm, &v.TGID, &v.PID, &us}
	for i := range raw {
		if err := json.Unmarshal(raw[i], fields[i]); err != nil {
			return fmt.Errorf("bio %s: field %d: %v", clip(data), i+1, err)
		}
	}
	if us != nil {
		v.Micros, v.Timed = *us, true
	}
	if err := v.check(); err != nil {
		return fmt.Errorf("bio %s: %w", clip(data), err)
	}
	*b = v
	return nil
}

func (b Bio) check() error {
	switch {
	case b.Bytes%sectorSize != 0 || b.Bytes/sectorSize > 1<<32-1:
		return fmt.Errorf("bytes %d: want a multiple of 512 of at most 2^32-1 sectors", b.Bytes)
	case b.RWBS == "" || len(b.RWBS) > maxRWBS || strings.Trim(b.RWBS, "FWRDNEASM") != "":
		return fmt.Errorf("rwbs %q: want 1 to %d of the letters FWRDNEASM", b.RWBS, maxRWBS)
	case len(b.Comm) > maxComm:
		return fmt.Errorf("comm %q: more than %d characters", b.Comm, maxComm)
	case b.TGID < 0 || b.TGID > 1<<31-1:
		return fmt.Errorf("tgid %d: want a process id or 0", b.TGID)
	case b.PID < 0 || b.PID > 1<<31-1:
		return fmt.Errorf("pid %d: want a thread id or 0", b.PID)
	}
	return nil
}

func clip(data []byte) string {
	if len(data) > 80 {
		return string(data[:80]) + "..."
	}
	return string(data)
}

// Bios are the records of one device in order, sectors made relative to
// its start (see Aggregate for which records belong to it), times to the
// first of them.
func Bios(recs []Record, dev Device) []Bio {
	var out []Bio
	var origin Origin
	for _, r := range recs {
		if dev.In(r) {
			out = append(out, BioOf(r, dev, &origin))
		}
	}
	return out
}

// Origin is a trace's first timed record's time, which bio times count from;
// the zero Origin is set by the first timed record BioOf sees.
type Origin struct {
	ns  uint64
	set bool
}

// BioOf is a record of dev as a bio of it (sector relative to its start,
// time relative to origin, which the first timed record sets). A record
// earlier than the origin (trace_pipe merges the CPUs' buffers by time, so it
// does not happen there) is at 0.
func BioOf(r Record, dev Device, origin *Origin) Bio {
	b := Bio{Sector: r.Sector - dev.Start, Bytes: r.Bytes, RWBS: r.RWBS, Comm: r.Comm, TGID: r.TGID, PID: r.PID}
	if r.Timed {
		if !origin.set {
			origin.ns, origin.set = r.Time, true
		}
		b.Timed = true
		if r.Time > origin.ns {
			b.Micros = (r.Time - origin.ns) / 1000
		}
	}
	return b
}

// LostEvents reads the two places tracefs reports dropped events: the trace
// file's "# entries-in-buffer/entries-written: IN/WRITTEN" header (WRITTEN -
// IN were dropped) and trace_pipe's "CPU:N [LOST COUNT EVENTS]". ok is false
// for any other line.
func LostEvents(line string) (lost uint64, ok bool, err error) { return lostEvents(line) }
