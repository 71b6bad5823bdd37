package defaults

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
// [sector, bytes, "rwbs", "comm", tgid], to keep long traces small.
type Bio struct {
	Sector uint64
	Bytes  uint64
	RWBS   string
	Comm   string
	TGID   int
}

// Dir is the bio's direction.
func (b Bio) Dir() Direction { return DirOf(b.RWBS) }

// MarshalJSON writes [sector, bytes, "rwbs", "comm", tgid].
func (b Bio) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{b.Sector, b.Bytes, b.RWBS, b.Comm, b.TGID})
}

// UnmarshalJSON reads [sector, bytes, "rwbs", "comm", tgid] and checks each
// field as ParseLine does.
func (b *Bio) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || len(raw) != 5 {
		return fmt.Errorf("bio %s: want [sector, bytes, \"rwbs\", \"comm\", tgid]", clip(data))
	}
	var v Bio
	for i, dst := range []any{&v.Sector, &v.Bytes, &v.RWBS, &v.Comm, &v.TGID} {
		if err := json.Unmarshal(raw[i], dst); err != nil {
			return fmt.Errorf("bio %s: field %d: %v", clip(data), i+1, err)
		}
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
// its start (see Aggregate for which records belong to it).
func Bios(recs []Record, dev Device) []Bio {
	var out []Bio
	for _, r := range recs {
		if dev.In(r) {
			out = append(out, BioOf(r, dev))
		}
	}
	return out
}

// BioOf is a record of dev as a bio of it (sector relative to its start).
func BioOf(r Record, dev Device) Bio {
	return Bio{Sector: r.Sector - dev.Start, Bytes: r.Bytes, RWBS: r.RWBS, Comm: r.Comm, TGID: r.TGID}
}

// LostEvents reads the two places tracefs reports dropped events: the trace
// file's "# entries-in-buffer/entries-written: IN/WRITTEN" header (WRITTEN -
// IN were dropped) and trace_pipe's "CPU:N [LOST COUNT EVENTS]". ok is false
// for any other line.
func LostEvents(line string) (lost uint64, ok bool, err error) { return lostEvents(line) }
