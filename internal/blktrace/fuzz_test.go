package blktrace

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseLine: any line either is skipped, fails with an error naming a
// field, or gives a record that prints back to a line parsing to the same record.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{realPartWrite, realFUA, realPreflush, realDiscard, realResched, realNoTGID, lineTGID, linePlain, lineRocks, lineFlush, lineUdev, lineNoTGID,
		"# entries-in-buffer/entries-written: 3/5   #P:2", "CPU:1 [LOST 7 EVENTS]",
		"x-1 (  12a) [000] ..... 1.0: block_bio_queue: 7,1 W 0 + 8 [dd]", ": block_bio_queue: 7,1 W 0 + 8 [[]]",
		"a[b(c)-12 [000] ..... 2.5: block_bio_queue: 7,1 W 0 + 8 [a[b(c)]", "dd-7 [000] ..... 18446744073.709551615: block_bio_queue: 7,1 W 0 + 8 [dd]",
		"dd-7 [000] ..... 123456789012: block_bio_queue: 7,1 W 0 + 8 [dd]", "dd-7 (      7) [000] 3.25: block_bio_queue: 7,1 W 0 + 8 [dd]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		rec, ok, err := ParseLine(line)
		if err != nil {
			if ok || !strings.Contains(err.Error(), "block_bio_queue: ") && !strings.Contains(err.Error(), "tgid") {
				t.Fatalf("ParseLine(%q): ok %v with error %v", line, ok, err)
			}
			return
		}
		if !ok {
			return
		}
		if rec.Bytes%sectorSize != 0 || len(rec.Comm) > maxComm || rec.RWBS == "" || len(rec.RWBS) > maxRWBS || rec.TGID < 0 || rec.PID < 0 ||
			!rec.Timed && rec.Time != 0 {
			t.Fatalf("ParseLine(%q) = %+v breaks an invariant", line, rec)
		}
		tgid := "-------"
		if rec.TGID > 0 {
			tgid = fmt.Sprint(rec.TGID)
		}
		ts := "42" // a counter clock's bare count: no time
		if rec.Timed {
			ts = fmt.Sprintf("%d.%09d", rec.Time/1e9, rec.Time%1e9)
		}
		again := fmt.Sprintf("t-%d (%7s) [000] ..... %s: block_bio_queue: %d,%d %s %d + %d [%s]",
			rec.PID, tgid, ts, rec.Major, rec.Minor, rec.RWBS, rec.Sector, rec.Bytes/sectorSize, rec.Comm)
		back, ok, err := ParseLine(again)
		if err != nil || !ok || back != rec {
			t.Fatalf("ParseLine(%q) = %+v, but its print %q parses to %+v, %v, %v", line, rec, again, back, ok, err)
		}
	})
}

// FuzzParseTrace: a whole buffer never panics, and the records it keeps are
// the lines ParseLine keeps.
func FuzzParseTrace(f *testing.F) {
	f.Add(strings.Join([]string{"# entries-in-buffer/entries-written: 3/5   #P:2", lineTGID, "CPU:0 [LOST 1 EVENTS]", lineFlush}, "\n"))
	f.Add("# entries-in-buffer/entries-written: 9/3   #P:2")
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := ParseTrace(strings.NewReader(text))
		if err != nil {
			return
		}
		n := 0
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSuffix(line, "\r") // as bufio.ScanLines does
			if _, ok, _ := ParseLine(line); ok {
				if _, isLost, _ := lostEvents(line); !isLost {
					n++
				}
			}
		}
		if n != len(tr.Records) {
			t.Fatalf("ParseTrace kept %d records, ParseLine keeps %d lines", len(tr.Records), n)
		}
	})
}
