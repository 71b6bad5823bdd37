package osdstats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/host/cephdaemon"
)

const recordedDir = "../../host/cephdaemon/testdata/ceph-16.2.15"

// replay answers each command with a recorded reply of Ceph 16.2.15 ("fresh" or "spilled"), or
// of the release under dir ("fresh").
type replay struct {
	state string
	fail  map[string]error  // by command prefix
	dir   string            // recordedDir when empty
	kv    string            // the dump_objectstore_kv_stats reply under dir (default kv-stats-off)
	names map[string]string // a reply's file name -> another recording's (an OSD's own replies)
}

func (r replay) Ask(_ context.Context, _ string, cmd cephdaemon.Command) ([]byte, error) {
	if err, ok := r.fail[cmd.Prefix]; ok {
		return nil, err
	}
	name := ""
	switch cmd.Prefix {
	case "perf dump":
		name = "perf-dump-" + cmd.Args["logger"] + "-" + r.state
	case "bluefs stats":
		name = "bluefs-stats-" + r.state
	case "dump_objectstore_kv_stats":
		name = map[string]string{"fresh": "kv-stats-off", "spilled": "kv-stats-on"}[r.state]
		if r.dir != "" {
			name = r.kv
			if name == "" {
				name = "kv-stats-off"
			}
		}
	case "config get":
		name = "config-get-" + cmd.Args["var"]
	default:
		name = "version"
	}
	if other, ok := r.names[name]; ok {
		name = other
	}
	dir := recordedDir
	if r.dir != "" {
		dir = r.dir
	}
	return os.ReadFile(filepath.Join(dir, name+".out"))
}

// Ceph 20.2.4 (the e2e's Rook cluster): BlueStore's counters lost their bluestore_ prefix,
// bluefs stats changed its matrix, dump_objectstore_kv_stats answers plain text: a running
// OSD without rocksdb_perf says its statistics are off, one that has not booted has no such
// command yet. Either way every part the release has is read, and the table has every class.
func TestReadOSDRecordedCeph20(t *testing.T) {
	for _, c := range []struct {
		kv, message  string
		off, unknown bool
	}{
		{kv: "kv-stats-off", off: true, message: "RocksDB level statistics off"},
		{kv: "kv-stats-unknown-command", unknown: true, message: "dump_objectstore_kv_stats"},
	} {
		ask := replay{state: "fresh", dir: "../../host/cephdaemon/testdata/ceph-20.2.4", kv: c.kv}
		r := ReadOSD(context.Background(), ask, 0, "/run/ceph/ceph-osd.0.asok", at("2026-12-06T21:15:00Z"))
		if len(r.Errors) > 0 || r.Stats == nil || r.RocksDB == nil || r.BlueFS == nil || r.Store == nil {
			t.Fatalf("%s: reading: errors %q, %+v", c.kv, r.Errors, r)
		}
		if r.LevelsUnsupported != c.unknown || r.LevelsOff != c.off || r.Levels != nil {
			t.Errorf("%s: levels: unsupported %v, off %v, %+v", c.kv, r.LevelsUnsupported, r.LevelsOff, r.Levels)
		}
		rows := Table(nil, r)
		for _, class := range []string{ClassWAL, ClassBlueFS, ClassSST, ClassSpilled, ClassObjects} {
			if row := rowByClass(rows, class); row.Occupied == nil || row.Written == nil {
				t.Errorf("%s: %s: occupied %v, written %v", c.kv, class, row.Occupied, row.Written)
			}
		}
		if o := rowByClass(rows, ClassSST).Occupied; o == nil || *o != 13<<20 {
			t.Errorf("%s: sst occupied %v, want 13 MiB (the db row's DB column)", c.kv, o)
		}
		msg := Summarize([]OSD{{ID: 0, Last: &r, Known: true}})[0].Message
		if !strings.Contains(msg, c.message) || strings.Contains(msg, "last read") {
			t.Errorf("%s: message %q, want one with %q", c.kv, msg, c.message)
		}
	}
}

// An OSD with no DB device (the e2e's QLC-alone OSD, Ceph 20.2.4): bluefs stats has no matrix,
// only the selector's totals. The OSD is read without error (the e2e's write count failed on
// "bluefs stats: no usage matrix"); the space of WAL, log and SSTs, which only the matrix
// splits, is unknown, and what BlueFS wrote is known.
func TestReadOSDRecordedCeph20Collocated(t *testing.T) {
	ask := replay{state: "fresh", dir: "../../host/cephdaemon/testdata/ceph-20.2.4",
		names: map[string]string{"bluefs-stats-fresh": "bluefs-stats-collocated", "perf-dump-bluefs-fresh": "perf-dump-bluefs-collocated"}}
	r := ReadOSD(context.Background(), ask, 2, "/run/ceph/ceph-osd.2.asok", at("2026-12-07T07:59:00Z"))
	if len(r.Errors) > 0 || r.Stats == nil || r.Stats.Totals == nil {
		t.Fatalf("reading: errors %q, stats %+v", r.Errors, r.Stats)
	}
	rows := Table(nil, r)
	for _, class := range []string{ClassWAL, ClassBlueFS, ClassSST} {
		row := rowByClass(rows, class)
		if row.Occupied != nil {
			t.Errorf("%s: occupied %d, want unknown (no matrix)", class, *row.Occupied)
		}
		if row.Written == nil {
			t.Errorf("%s: written unknown", class)
		}
	}
	if w := rowByClass(rows, ClassWAL).Written; w == nil || *w != 5763072 {
		t.Errorf("wal written %v, want 5763072 (bytes_written_wal)", w)
	}
}

func at(s string) func() time.Time {
	return func() time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
}

func rowByClass(rows []Row, class string) Row {
	for _, r := range rows {
		if r.Class == class {
			return r
		}
	}
	return Row{}
}

func TestReadOSDRecorded(t *testing.T) {
	r := ReadOSD(context.Background(), replay{state: "fresh"}, 0, "/run/ceph/ceph-osd.0.asok", at("2026-11-25T21:41:00Z"))
	if len(r.Errors) > 0 || !r.LevelsOff || r.Levels != nil || r.RocksDB == nil || r.Stats == nil {
		t.Fatalf("fresh reading: %+v", r)
	}
	if r.RocksDB.WriteBufferBytes != 16<<20 || r.RocksDB.BaseBytes != 64<<20 || r.RocksDB.MaxTotalWALBytes != 1<<30 {
		t.Errorf("levels %+v", *r.RocksDB)
	}
	s := ReadOSD(context.Background(), replay{state: "spilled"}, 0, "", at("2026-11-25T21:45:20Z"))
	if len(s.Errors) > 0 || s.LevelsOff || len(s.Levels) != 2 {
		t.Fatalf("spilled reading: errors %v, levels %+v", s.Errors, s.Levels)
	}
}

// The table from the two recorded readings, 260 s apart (the run of docs/osd-table.md).
func TestTableRecorded(t *testing.T) {
	fresh := ReadOSD(context.Background(), replay{state: "fresh"}, 0, "", at("2026-11-25T21:41:00Z"))
	spilled := ReadOSD(context.Background(), replay{state: "spilled"}, 0, "", at("2026-11-25T21:45:20Z"))
	rows := Table(&fresh, spilled)
	const mib = 1 << 20
	secs := 260.0
	for _, c := range []struct {
		class           string
		occupied, delta uint64
		written         uint64
	}{
		{ClassWAL, 450 * mib, 333541376 - 319488, 333541376},
		{ClassBlueFS, 14 * mib, 71520256 - 118784, 71520256},
		{ClassSST, 165 * mib, (197021696 - 11132928) - 8192, 197021696 - 11132928},
		{ClassSpilled, 66256896, 11132928, 11132928},
		{ClassObjects, 1030914048, 1030815744 + 30198 - fresh.Store["bluestore_write_big_bytes"] - fresh.Store["bluestore_write_small_bytes"], 1030815744 + 30198},
	} {
		r := rowByClass(rows, c.class)
		if r.Occupied == nil || *r.Occupied != c.occupied || r.Written == nil || *r.Written != c.written {
			t.Errorf("%s: occupied %v written %v, want %d and %d", c.class, deref(r.Occupied), deref(r.Written), c.occupied, c.written)
			continue
		}
		if r.PerDay == nil || fmt.Sprintf("%.0f", *r.PerDay) != fmt.Sprintf("%.0f", float64(c.delta)/secs*86400) {
			t.Errorf("%s: per day %v, want %.0f", c.class, deref(r.PerDay), float64(c.delta)/secs*86400)
		}
		if want := float64(c.written) / float64(c.occupied); r.Beta == nil || fmt.Sprintf("%.6f", *r.Beta) != fmt.Sprintf("%.6f", want) {
			t.Errorf("%s: beta %v, want %.6f", c.class, deref(r.Beta), want)
		}
	}
	total := 0.0
	for _, r := range rows {
		if !r.Breakdown && r.Share != nil {
			total += *r.Share
		}
	}
	if total < 0.999 || total > 1.001 {
		t.Errorf("shares add up to %.4f", total)
	}
	// The levels of the spilled reading, without a rate: the fresh OSD reported none.
	if l1 := rowByClass(rows, "L1"); !l1.Breakdown || l1.Occupied == nil || *l1.Occupied != 66365 || l1.PerDay != nil {
		t.Errorf("L1 row %+v", l1)
	}
	// The first reading has no rates at all.
	for _, r := range Table(nil, fresh) {
		if r.PerDay != nil || r.Share != nil {
			t.Errorf("first reading, %s: a rate without a previous reading", r.Class)
		}
	}
}

func TestTableCounterReset(t *testing.T) {
	fresh := ReadOSD(context.Background(), replay{state: "fresh"}, 0, "", at("2026-11-25T21:41:00Z"))
	spilled := ReadOSD(context.Background(), replay{state: "spilled"}, 0, "", at("2026-11-25T21:45:20Z"))
	// The OSD restarted between the two readings: its counters went down.
	rows := Table(&spilled, fresh)
	if r := rowByClass(rows, ClassWAL); r.PerDay != nil || r.Share != nil || r.Written == nil {
		t.Errorf("after a restart: %+v, want no rate and the new counter", r)
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestCollectorKeepsValuesOnFailure(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ceph-osd.0.asok", "ceph-osd.12.asok"} {
		l, err := net.Listen("unix", filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	// Not sockets, or not OSDs: ignored.
	_ = os.WriteFile(filepath.Join(dir, "ceph-osd.3.asok"), nil, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "ceph-mon.a.asok"), nil, 0o644)
	now := at("2026-11-25T21:41:00Z")()
	c := &Collector{Node: "n1", SocketDir: dir, Ask: replay{state: "fresh"}, Now: func() time.Time { return now }, MinWindow: time.Minute}
	if err := c.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	osds := c.OSDs()
	if len(osds) != 2 || osds[0].ID != 0 || osds[1].ID != 12 || osds[0].DBUsed != 35651584 {
		t.Fatalf("OSDs %+v", osds)
	}
	// The second poll fails for perf dump: the values stay, the error shows.
	now = now.Add(5 * time.Minute)
	c.Ask = replay{state: "spilled", fail: map[string]error{"perf dump": errors.New("admin socket: i/o timeout")}}
	err := c.Poll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "osd.0: perf dump bluefs") {
		t.Fatalf("poll error %v", err)
	}
	o := c.OSDs()[0]
	if o.DBUsed != 35651584 || !o.Known || len(o.Errors) != 2 || o.Last.Stats == nil {
		t.Errorf("after a failed perf dump: db_used %d known %v errors %v", o.DBUsed, o.Known, o.Errors)
	}
	sum, ok := c.Summary()
	if !ok || len(sum) != 2 || !strings.Contains(sum[0].Message, "last read: perf dump bluefs") || sum[0].DBUsedBytes != 36000000 {
		t.Errorf("summary %+v %v", sum, ok)
	}
	// The socket directory vanishes (unmounted): nothing changes and the summary says keep.
	c.SocketDir = filepath.Join(dir, "gone")
	if err := c.Poll(context.Background()); err != nil {
		t.Fatalf("missing directory: %v", err)
	}
	if got := c.OSDs(); len(got) != 0 {
		t.Errorf("a missing directory means no OSD on the node: %+v", got)
	}
	c.SocketDir = filepath.Join(dir, "ceph-osd.3.asok") // a file: listing fails
	if err := c.Poll(context.Background()); err == nil {
		t.Fatal("listing a file succeeded")
	}
	if _, ok := c.Summary(); ok {
		t.Error("a failed listing must keep the published summary")
	}
}

func TestSummaryAndMetricsRecorded(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "ceph-osd.0.asok"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := at("2026-11-25T21:41:00Z")()
	c := &Collector{Node: "n1", SocketDir: dir, Ask: replay{state: "fresh"}, Now: func() time.Time { return now }, MinWindow: time.Minute}
	if err := c.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(260 * time.Second)
	c.Ask = replay{state: "spilled"}
	if err := c.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	sum, ok := c.Summary()
	if !ok || len(sum) != 1 {
		t.Fatalf("summary %+v", sum)
	}
	s := sum[0]
	if !s.Spilled || s.SlowUsedBytes != 66000000 || s.DBTotalBytes != 670000000 || s.SpillForecastTime != nil || *s.LevelsOnFast != -1 {
		t.Errorf("summary %+v", s)
	}
	if len(s.SlotAdvice) != 6 || s.SlotAdvice[0].SlotBytes != 1146<<20 {
		t.Errorf("slot advice %+v", s.SlotAdvice)
	}
	var wal *string
	for _, cl := range s.Classes {
		if cl.Name == ClassWAL {
			wal = &cl.Beta
		}
	}
	if wal == nil || *wal != "0.71" { // 333541376 written ÷ 450 MiB held
		t.Errorf("wal beta %v", deref(wal))
	}
	names := map[string]bool{}
	for _, m := range Metrics("n1", c.OSDs()) {
		names[m.Desc().String()[:60]] = true
	}
	if len(Metrics("n1", c.OSDs())) < 30 {
		t.Errorf("%d metrics", len(Metrics("n1", c.OSDs())))
	}
}

func TestRoundingKeepsTheStatusStill(t *testing.T) {
	for _, c := range []struct {
		in   uint64
		want int64
	}{{0, 0}, {99, 99}, {123, 120}, {35651584, 36000000}, {671080448, 670000000}} {
		if got := round2(c.in); got != c.want {
			t.Errorf("round2(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   float64
		want string
	}{{0, "0"}, {0.2345, "0.23"}, {172.2, "170"}, {0.0012345, "0.0012"}, {1, "1"}, {9.96, "10"}} {
		if got := decimal(c.in); got != c.want {
			t.Errorf("decimal(%g) = %q, want %q", c.in, got, c.want)
		}
	}
}

// goldenStatus is the StorageNode status the agent publishes for the recorded OSD: the
// fresh reading, then the spilled one 260 s later (kubectl prism osds and the page read it
// in their tests). PRISM_UPDATE_GOLDEN=1 rewrites it.
const goldenStatus = "testdata/storagenode-osds-ceph-16.2.15.json"

func TestSummaryGolden(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "ceph-osd.0.asok"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := at("2026-11-25T21:41:00Z")()
	c := &Collector{Node: "prismtest-node", SocketDir: dir, Ask: replay{state: "fresh"}, Now: func() time.Time { return now }}
	if err := c.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(260 * time.Second)
	c.Ask = replay{state: "spilled"}
	if err := c.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	sum, _ := c.Summary()
	got, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if os.Getenv("PRISM_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenStatus, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenStatus)
	if err != nil {
		t.Fatalf("%v (PRISM_UPDATE_GOLDEN=1 writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("status.osds differs from %s (PRISM_UPDATE_GOLDEN=1 rewrites it):\n%s", goldenStatus, got)
	}
}
