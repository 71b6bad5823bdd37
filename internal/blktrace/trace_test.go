package blktrace

import (
	"strings"
	"testing"
)

// Lines as tracefs prints them on this kernel (6.18), with and without record-tgid.
const (
	lineTGID   = `       tp_osd_tp-51234   (  51200) [001] ..... 14253.121064: block_bio_queue: 7,1 WS 2048 + 8 [tp_osd_tp]`
	linePlain  = `              dd-8545    [000] ..... 13036.518822: block_bio_queue: 7,0 WS 206848 + 8192 [dd]`
	lineRocks  = `   rocksdb:high0-5123    (   5100) [000] ..... 99.000001: block_bio_queue: 7,1 W 4718592 + 8 [rocksdb:high0]`
	lineFlush  = `  bstore_kv_sync-5120    (   5100) [000] ..... 99.000002: block_bio_queue: 7,1 FWS 0 + 0 [bstore_kv_sync]`
	lineUdev   = `   (udev-worker)-777     [001] ..... 1.5: block_bio_queue: 259,3 RA 0 + 256 [(udev-worker)]`
	lineNoTGID = `          <idle>-0       (-------) [001] ..... 1.5: block_bio_queue: 7,1 R 8 + 8 [swapper/1]`
)

// Lines recorded on 6.18 from an instance with record-tgid tracing a loop device with a GPT
// partition at sector 2048 (internal/host/tracefs/testdata has the whole recordings): a
// direct write to the partition (remapped onto the disk), dd's oflag=sync write (FUA) and its
// preflush, blkdiscard's discard, a readahead with the need-resched flag, lines from before
// record-tgid was set.
const (
	realPartWrite = `              dd-1045    (   1045) [000] ..... 11588.547810: block_bio_queue: 7,0 WS 2088 + 8 [dd]`
	realFUA       = `              dd-1047    (   1047) [000] ..... 11588.552949: block_bio_queue: 7,0 WFS 2048 + 2048 [dd]`
	realPreflush  = `              dd-1047    (   1047) [000] ..... 11588.559472: block_bio_queue: 7,0 FWS 0 + 0 [dd]`
	realDiscard   = `      blkdiscard-1048    (   1048) [000] ..... 11588.583392: block_bio_queue: 7,0 DS 4096 + 128 [blkdiscard]`
	realResched   = `      blkdiscard-1048    (   1048) [000] .N... 11588.583092: block_bio_queue: 7,0 RA 2312 + 248 [blkdiscard]`
	realNoTGID    = `              dd-32038   (-------) [001] ..... 10708.087495: block_bio_queue: 7,0 WS 2072 + 8 [dd]`
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line string
		want Record
	}{
		{realPartWrite, Record{PID: 1045, Time: 11588547810000, Timed: true, TGID: 1045, Comm: "dd", RWBS: "WS", Major: 7, Sector: 2088, Bytes: 4096}},
		{realFUA, Record{PID: 1047, Time: 11588552949000, Timed: true, TGID: 1047, Comm: "dd", RWBS: "WFS", Major: 7, Sector: 2048, Bytes: 1 << 20}},
		{realPreflush, Record{PID: 1047, Time: 11588559472000, Timed: true, TGID: 1047, Comm: "dd", RWBS: "FWS", Major: 7}},
		{realDiscard, Record{PID: 1048, Time: 11588583392000, Timed: true, TGID: 1048, Comm: "blkdiscard", RWBS: "DS", Major: 7, Sector: 4096, Bytes: 64 << 10}},
		{realResched, Record{PID: 1048, Time: 11588583092000, Timed: true, TGID: 1048, Comm: "blkdiscard", RWBS: "RA", Major: 7, Sector: 2312, Bytes: 248 * 512}},
		{realNoTGID, Record{PID: 32038, Time: 10708087495000, Timed: true, Comm: "dd", RWBS: "WS", Major: 7, Sector: 2072, Bytes: 4096}},
		{lineTGID, Record{PID: 51234, Time: 14253121064000, Timed: true, TGID: 51200, Comm: "tp_osd_tp", RWBS: "WS", Major: 7, Minor: 1, Sector: 2048, Bytes: 4096}},
		{linePlain, Record{PID: 8545, Time: 13036518822000, Timed: true, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 206848, Bytes: 4 << 20}},
		{lineRocks, Record{PID: 5123, Time: 99000001000, Timed: true, TGID: 5100, Comm: "rocksdb:high0", RWBS: "W", Major: 7, Minor: 1, Sector: 4718592, Bytes: 4096}},
		{lineFlush, Record{PID: 5120, Time: 99000002000, Timed: true, TGID: 5100, Comm: "bstore_kv_sync", RWBS: "FWS", Major: 7, Minor: 1}},
		{lineUdev, Record{PID: 777, Time: 1500000000, Timed: true, Comm: "(udev-worker)", RWBS: "RA", Major: 259, Minor: 3, Bytes: 128 << 10}},
		{lineNoTGID, Record{Time: 1500000000, Timed: true, Comm: "swapper/1", RWBS: "R", Major: 7, Minor: 1, Sector: 8, Bytes: 4096}},
		// A comm with a space and the 15-character limit.
		{`x-1 [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 1 [a b]`, Record{PID: 1, Time: 1e9, Timed: true, Comm: "a b", RWBS: "W", Major: 7, Minor: 1, Bytes: 512}},
		{`x-1 [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 1 [bstore_kv_final]`, Record{PID: 1, Time: 1e9, Timed: true, Comm: "bstore_kv_final", RWBS: "W", Major: 7, Minor: 1, Bytes: 512}},
		{"x-1 [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 1 [dd]\r", Record{PID: 1, Time: 1e9, Timed: true, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 512}},
		// The task's own id is the thread's: a task name with '-', '(' and '[' ends before the
		// last '-' ahead of the (TGID) and [CPU] columns.
		{`kworker/u8:2-events_unbound-1234 (   1200) [001] ..... 5.000001: block_bio_queue: 7,1 W 0 + 8 [kworker/u8:2]`,
			Record{PID: 1234, TGID: 1200, Time: 5000001000, Timed: true, Comm: "kworker/u8:2", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		{`a[b(c)-12 [000] ..... 2.5: block_bio_queue: 7,1 W 0 + 8 [a[b(c)]`, Record{PID: 12, Time: 2500000000, Timed: true, Comm: "a[b(c)", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		// Timestamps: irq-info off (no flags column), nine fraction digits, a counter clock's
		// bare count (no time), a pid column that is no number (none).
		{`dd-7 (      7) [000] 3.25: block_bio_queue: 7,1 W 0 + 8 [dd]`, Record{PID: 7, TGID: 7, Time: 3250000000, Timed: true, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		{`dd-7 [000] ..... 18446744073.709551615: block_bio_queue: 7,1 W 0 + 8 [dd]`, Record{PID: 7, Time: 18446744073709551615, Timed: true, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		{`dd-7 [000] ..... 18446744074.0: block_bio_queue: 7,1 W 0 + 8 [dd]`, Record{PID: 7, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		{`dd-7 [000] ..... 123456789012: block_bio_queue: 7,1 W 0 + 8 [dd]`, Record{PID: 7, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
		{`dd-x7 [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 8 [dd]`, Record{Time: 1e9, Timed: true, Comm: "dd", RWBS: "W", Major: 7, Minor: 1, Bytes: 4096}},
	}
	for _, tc := range tests {
		got, ok, err := ParseLine(tc.line)
		if err != nil || !ok || got != tc.want {
			t.Errorf("ParseLine(%q) = %+v, %v, %v; want %+v", tc.line, got, ok, err, tc.want)
		}
	}
}

func TestParseLineSkips(t *testing.T) {
	for _, line := range []string{
		"", "# tracer: nop", "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
		`  dd-1 [000] ..... 1.0: block_rq_issue: 7,0 W 4096 () 0 + 8 be,0,4 [dd]`,
		"  some other text",
	} {
		if rec, ok, err := ParseLine(line); ok || err != nil {
			t.Errorf("ParseLine(%q) = %+v, %v, %v; want skipped", line, rec, ok, err)
		}
	}
}

func TestParseLineErrorsNameTheField(t *testing.T) {
	const p = "x-1 [000] ..... 1.0: block_bio_queue: "
	for line, field := range map[string]string{
		p + "7 W 0 + 8 [dd]":                 "dev",
		p + "7,x W 0 + 8 [dd]":               "dev",
		p + "7,1 Q 0 + 8 [dd]":               "rwbs",
		p + "7,1 WSSSSSSSSS 0 + 8 [dd]":      "rwbs",
		p + "7,1 W -1 + 8 [dd]":              "sector",
		p + "7,1 W 0 - 8 [dd]":               "nr_sector",
		p + "7,1 W 0 + 4294967296 [dd]":      "nr_sector",
		p + "7,1 W 0 + 8 dd":                 "comm",
		p + "7,1 W 0 + 8 [dd":                "comm",
		p + "7,1 W 0 + 8 [0123456789abcdef]": "comm",
		p + "7,1 W 0 + 8":                    "want DEV RWBS SECTOR + NR [COMM]",
		"x-1 (  12a) [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 8 [dd]": "tgid",
	} {
		_, _, err := ParseLine(line)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("ParseLine(%q): error %v, want one naming %q", line, err, field)
		}
	}
}

func TestParseTraceCountsLostEvents(t *testing.T) {
	text := strings.Join([]string{
		"# tracer: nop",
		"#",
		"# entries-in-buffer/entries-written: 3/5   #P:2",
		lineTGID,
		"CPU:1 [LOST 7 EVENTS]",
		lineRocks,
		lineFlush,
	}, "\n")
	tr, err := ParseTrace(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != 3 || tr.Lost != 2+7 {
		t.Fatalf("%d records, %d lost; want 3 and 9", len(tr.Records), tr.Lost)
	}
	for _, bad := range []string{"# entries-in-buffer/entries-written: 5/3   #P:2", "CPU:1 [LOST x EVENTS]", "x-1 [000] ..... 1.0: block_bio_queue: 7 W 0 + 8 [dd]"} {
		if _, err := ParseTrace(strings.NewReader("# tracer: nop\n" + bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ParseTrace(%q): error %v, want one naming line 2", bad, err)
		}
	}
}

func TestDirOf(t *testing.T) {
	for rwbs, want := range map[string]Direction{
		"W": Write, "WS": Write, "WFS": Write, "FWS": Write, "WM": Write,
		"R": Read, "RA": Read, "RM": Read, "FR": Read,
		"D": Discard, "DE": Discard, "FF": Flush, "F": Flush, "FS": Flush,
		"N": Other, "FN": Other, "": Other,
	} {
		if got := DirOf(rwbs); got != want {
			t.Errorf("DirOf(%q) = %s, want %s", rwbs, got, want)
		}
	}
}
