package blktrace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Record is one block_bio_queue event: a bio as its submitter queued it,
// before the block layer splits or merges it, which is what Open CAS's
// classifier sees at an exported object.
type Record struct {
	// PID is the submitting task's own id, the thread id (the line's
	// TASK-PID column; 0 for the idle task or a line without the column):
	// what Open CAS's pid condition compares (current->pid).
	PID int
	// TGID is the submitting task's process (thread group) id when the trace
	// recorded it (tracefs option record-tgid), else 0.
	TGID int
	// Time is the event's timestamp in nanoseconds of the trace clock (the
	// line's SECONDS.MICROSECONDS column; tracefs prints microseconds), valid
	// when Timed. A counter clock (trace_clock counter or x86-tsc), which
	// prints a bare count, gives no time.
	Time  uint64
	Timed bool
	// Comm is the submitting task's name (the event's comm field, at most 15
	// characters), what process_name matches.
	Comm string
	// RWBS is the kernel's operation string: an optional F (preflush), the
	// operation (W write, R read, D discard, F flush, N other), then F (FUA),
	// A (readahead), S (sync), M (metadata).
	RWBS string
	// Major and Minor are the whole disk's device number: a bio sent to a
	// partition is reported on its disk, at the remapped sector.
	Major uint32
	Minor uint32
	// Sector is the first 512-byte sector on the disk.
	Sector uint64
	// Bytes is nr_sector x 512.
	Bytes uint64
}

// Direction is what the operation does with data.
type Direction string

// Directions of RWBS.
const (
	Write   Direction = "write"
	Read    Direction = "read"
	Discard Direction = "discard"
	Flush   Direction = "flush"
	Other   Direction = "other"
)

// Dir is the record's direction from its RWBS (see blk_fill_rwbs).
func (r Record) Dir() Direction { return DirOf(r.RWBS) }

// DirOf reads the operation letter of an RWBS string: the first letter, or
// the second when the first is the preflush flag.
func DirOf(rwbs string) Direction {
	op := byte(0)
	if len(rwbs) > 0 {
		op = rwbs[0]
	}
	if op == 'F' && len(rwbs) > 1 && strings.IndexByte("WRDFN", rwbs[1]) >= 0 {
		op = rwbs[1]
	}
	switch op {
	case 'W':
		return Write
	case 'R':
		return Read
	case 'D':
		return Discard
	case 'F':
		return Flush
	}
	return Other
}

// Trace is a parsed tracefs buffer.
type Trace struct {
	Records []Record
	// Lost counts events the ring buffer dropped: "[LOST N EVENTS]" lines of
	// trace_pipe plus written minus in-buffer from the trace file's header.
	Lost uint64
}

const (
	eventMarker = ": block_bio_queue: "
	// maxComm is TASK_COMM_LEN - 1.
	maxComm = 15
	// maxRWBS is the event's rwbs[10] minus its terminating NUL.
	maxRWBS    = 9
	sectorSize = 512
)

// ParseTrace reads the text of a tracefs trace or trace_pipe file; lines of
// other events are skipped. An error names the line and the field.
func ParseTrace(r io.Reader) (Trace, error) {
	var t Trace
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if lost, ok, err := lostEvents(line); err != nil {
			return t, fmt.Errorf("line %d: %w", n, err)
		} else if ok {
			t.Lost += lost
			continue
		}
		rec, ok, err := ParseLine(line)
		if err != nil {
			return t, fmt.Errorf("line %d: %w", n, err)
		}
		if ok {
			t.Records = append(t.Records, rec)
		}
	}
	return t, sc.Err()
}

// lostEvents reads the two places tracefs reports dropped events:
// "# entries-in-buffer/entries-written: 168/170   #P:2" and
// "CPU:1 [LOST 12 EVENTS]".
func lostEvents(line string) (uint64, bool, error) {
	if rest, ok := strings.CutPrefix(line, "# entries-in-buffer/entries-written: "); ok {
		pair, _, _ := strings.Cut(rest, " ")
		in, written, ok := strings.Cut(pair, "/")
		a, err1 := strconv.ParseUint(in, 10, 64)
		b, err2 := strconv.ParseUint(written, 10, 64)
		if !ok || err1 != nil || err2 != nil || a > b {
			return 0, false, fmt.Errorf("entries-in-buffer/entries-written: %q: want IN/WRITTEN with IN <= WRITTEN", pair)
		}
		return b - a, true, nil
	}
	if i := strings.Index(line, "[LOST "); i >= 0 && strings.HasPrefix(line, "CPU:") {
		num, _, ok := strings.Cut(line[i+len("[LOST "):], " EVENTS]")
		n, err := strconv.ParseUint(num, 10, 64)
		if !ok || err != nil {
			return 0, false, fmt.Errorf("lost events: %q: want CPU:N [LOST COUNT EVENTS]", line)
		}
		return n, true, nil
	}
	return 0, false, nil
}

// ParseLine parses one line of tracefs output. ok is false for comments,
// blank lines and other events. The line starts with the task, its pid (the
// thread's id), with record-tgid its "(TGID)", the CPU, flags and timestamp
// ("comm-PID (TGID) [CPU] FLAGS SECS.USECS: "); the event's text is
// the kernel's print fmt "%d,%d %s %llu + %u [%s]" (dev, rwbs, sector,
// nr_sector, comm).
func ParseLine(line string) (rec Record, ok bool, err error) {
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return rec, false, nil
	}
	prefix, payload, found := strings.Cut(line, eventMarker)
	if !found {
		return rec, false, nil
	}
	tgid, err := parseTGID(prefix)
	if err != nil {
		return rec, false, err
	}
	pid := parsePID(prefix)
	ns, timed := parseTimestamp(prefix)
	fields := strings.SplitN(payload, " ", 6)
	if len(fields) != 6 {
		return rec, false, fmt.Errorf("block_bio_queue: %q: want DEV RWBS SECTOR + NR [COMM]", payload)
	}
	dev, rwbs, sector, plus, nr, comm := fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
	maj, min, found := strings.Cut(dev, ",")
	major, err1 := strconv.ParseUint(maj, 10, 32)
	minor, err2 := strconv.ParseUint(min, 10, 32)
	if !found || err1 != nil || err2 != nil {
		return rec, false, fmt.Errorf("block_bio_queue: dev %q: want MAJOR,MINOR", dev)
	}
	if rwbs == "" || len(rwbs) > maxRWBS || strings.Trim(rwbs, "FWRDNEASM") != "" {
		return rec, false, fmt.Errorf("block_bio_queue: rwbs %q: want 1 to %d of the letters FWRDNEASM", rwbs, maxRWBS)
	}
	sec, err := strconv.ParseUint(sector, 10, 64)
	if err != nil {
		return rec, false, fmt.Errorf("block_bio_queue: sector %q: want an unsigned integer", sector)
	}
	n, err := strconv.ParseUint(nr, 10, 32)
	if plus != "+" || err != nil {
		return rec, false, fmt.Errorf("block_bio_queue: nr_sector %q %q: want + and an unsigned integer", plus, nr)
	}
	name, found := strings.CutPrefix(strings.TrimRight(comm, " \r"), "[")
	name, closed := strings.CutSuffix(name, "]")
	if !found || !closed || len(name) > maxComm {
		return rec, false, fmt.Errorf("block_bio_queue: comm %q: want [NAME] with at most %d characters", comm, maxComm)
	}
	return Record{PID: pid, TGID: tgid, Time: ns, Timed: timed, Comm: name, RWBS: rwbs, Major: uint32(major), Minor: uint32(minor), Sector: sec, Bytes: n * sectorSize}, true, nil
}

// parseTGID reads the "(  1234)" column that record-tgid adds before the
// CPU column "[001]". A task name may hold parentheses ("(udev-worker)"), so
// only a last '(...)' followed by the CPU column counts. No such column, or
// the "-------" of an unrecorded TGID, is 0.
func parseTGID(prefix string) (int, error) {
	i := strings.LastIndexByte(prefix, '(')
	if i < 0 {
		return 0, nil
	}
	field, after, closed := strings.Cut(prefix[i+1:], ")")
	if !closed || !strings.HasPrefix(strings.TrimLeft(after, " "), "[") {
		return 0, nil
	}
	field = strings.TrimSpace(field)
	if strings.Trim(field, "-") == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(field, 10, 31)
	if err != nil {
		return 0, fmt.Errorf("tgid %q: want a process id", field)
	}
	return int(n), nil
}

// parsePID reads the PID of the "comm-PID" column: the digits after the last
// '-' before the "(TGID)" column, if any, and the "[CPU]" column (a task name
// may hold '-', '(' and '['; the columns after it hold none but the CPU's
// '['). A line without that shape has 0, as the idle task does.
func parsePID(prefix string) int {
	ts := strings.LastIndexByte(prefix, ' ')
	if ts < 0 {
		return 0
	}
	cpu := strings.LastIndexByte(prefix[:ts], '[')
	if cpu < 0 {
		return 0
	}
	task := strings.TrimRight(prefix[:cpu], " ")
	if strings.HasSuffix(task, ")") {
		if i := strings.LastIndexByte(task, '('); i >= 0 {
			task = strings.TrimRight(task[:i], " ")
		}
	}
	dash := strings.LastIndexByte(task, '-')
	if dash < 0 {
		return 0
	}
	n, err := strconv.ParseUint(task[dash+1:], 10, 31)
	if err != nil {
		return 0
	}
	return int(n)
}

// parseTimestamp reads the timestamp that ends the prefix, "SECONDS.FRACTION"
// (tracefs prints six fraction digits for its nanosecond clocks; up to nine
// are read), as nanoseconds. A bare count (a counter clock), or anything else,
// is no time.
func parseTimestamp(prefix string) (uint64, bool) {
	field := prefix[strings.LastIndexByte(prefix, ' ')+1:]
	secs, frac, ok := strings.Cut(field, ".")
	if !ok || secs == "" || frac == "" || len(frac) > 9 || strings.Trim(secs, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	s, err := strconv.ParseUint(secs, 10, 64)
	f, _ := strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	if err != nil || s > math.MaxUint64/nsPerSecond || s*nsPerSecond > math.MaxUint64-f {
		return 0, false // beyond 2^64 ns (584 years of uptime)
	}
	return s*nsPerSecond + f, true
}

const nsPerSecond uint64 = 1e9
