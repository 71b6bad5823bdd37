package tracefs

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/blktrace"
)

// The recordings in testdata come from this kernel (6.18) tracing a loop device with a GPT
// partition (7:0, partition 1 at sector 2048) through an instance like NewInstance's:
//   - block_bio_queue.format: events/block/block_bio_queue/format;
//   - trace-loop0.txt: the instance's trace file after dd writes to the partition (direct,
//     direct+sync, buffered), direct reads of the disk, blkdiscard on the partition (its
//     probe reads, then the discard), a buffered read after drop_caches;
//   - trace_pipe-lost.txt: `cat trace_pipe` with a 4 KiB buffer, the reader stopped while
//     dd queued 3000 direct writes: the kernel's "CPU:1 [LOST 2924 EVENTS]" line.

func read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestCheckFormat(t *testing.T) {
	real := read(t, "block_bio_queue.format")
	if err := CheckFormat(real); err != nil {
		t.Fatalf("this kernel's format: %v", err)
	}
	for name, tc := range map[string]struct{ from, to, want string }{
		"another print":   {`"%d,%d %s %llu + %u [%s]"`, `"%d,%d %s %llu + %u %s"`, "print fmt"},
		"no print fmt":    {"print fmt: ", "printed: ", "no print fmt"},
		"no sector field": {"field:sector_t sector;", "field:sector_t first_sector;", "sector"},
		"no dev field":    {"field:dev_t dev;", "field:u32 dev;", "dev"},
	} {
		changed := strings.Replace(real, tc.from, tc.to, 1)
		if changed == real {
			t.Fatalf("%s: %q is not in the recorded format", name, tc.from)
		}
		if err := CheckFormat(changed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", name, err, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	whole := Target{Major: 7, Minor: 0, Start: 0, Sectors: 131072}
	if got, want := whole.Filter(), "dev == 7340032"; got != want {
		t.Errorf("whole disk: %q, want %q", got, want)
	}
	part := Target{Major: 259, Minor: 3, Partition: true, Start: 2048, Sectors: 32768}
	if got, want := part.Filter(), "(dev == 271581187 && sector >= 2048 && sector < 34816)"; got != want {
		t.Errorf("partition: %q, want %q", got, want)
	}
	if got := KernelDev(8, 17); got != 8<<20|17 {
		t.Errorf("KernelDev(8, 17) = %d", got)
	}
}

// fakeSys builds a sysfs tree under root: a disk 7:0 of 131072 sectors with partition 1
// (259:0) at 2048 of 32768 sectors, linked from sys/dev/block as the kernel links them.
func fakeSys(t *testing.T, root string) {
	t.Helper()
	disk := filepath.Join(root, "sys", "devices", "virtual", "block", "loop0")
	files := map[string]string{
		filepath.Join(disk, "dev"): "7:0\n", filepath.Join(disk, "size"): "131072\n",
		filepath.Join(disk, "loop0p1", "dev"): "259:0\n", filepath.Join(disk, "loop0p1", "size"): "32768\n",
		filepath.Join(disk, "loop0p1", "start"): "2048\n", filepath.Join(disk, "loop0p1", "partition"): "1\n",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(root, "sys", "dev", "block")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"7:0": "../../devices/virtual/block/loop0", "259:0": "../../devices/virtual/block/loop0/loop0p1"} {
		if err := os.Symlink(target, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	fakeSys(t, root)
	fs := FS{Root: root}
	got, err := fs.Resolve("7:0")
	if want := (Target{Device: "7:0", Name: "loop0", Major: 7, Minor: 0, Sectors: 131072}); err != nil || got != want {
		t.Errorf("disk: %+v, %v; want %+v", got, err, want)
	}
	got, err = fs.Resolve("259:0")
	if want := (Target{Device: "259:0", Name: "loop0p1", Major: 7, Minor: 0, Partition: true, Start: 2048, Sectors: 32768}); err != nil || got != want {
		t.Errorf("partition: %+v, %v; want %+v", got, err, want)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dev", "notablock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for dev, want := range map[string]string{
		"8:0":            "not in sysfs",
		"/dev/notablock": "not a block device",
		"notablock":      "not a block device",
		"/dev/missing":   "no such file",
		"7:x":            "no such file", // not MAJOR:MINOR: a path, absent
		"4096:0":         "no such file",
	} {
		if _, err := fs.Resolve(dev); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q): %v, want an error with %q", dev, err, want)
		}
	}
}

func TestDirAndInstanceOnAFakeTree(t *testing.T) {
	root := t.TempDir()
	fs := FS{Root: root}
	if _, err := fs.Dir(); !errors.Is(err, ErrNotMounted) || !strings.Contains(err.Error(), "mount -t tracefs nodev "+root+"/sys/kernel/tracing") {
		t.Errorf("no tracefs: %v", err)
	}
	if got := fs.MountArgv(); !reflect.DeepEqual(got, []string{"mount", "-t", "tracefs", "nodev", root + "/sys/kernel/tracing"}) {
		t.Errorf("MountArgv = %q", got)
	}
	// A directory that looks like tracefs but holds none of its files: NewInstance fails on
	// the first write and removes the instance it made.
	dir := filepath.Join(root, "sys", "kernel", "tracing")
	event := eventDir(dir)
	if err := os.MkdirAll(filepath.Join(dir, "instances"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(event, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := fs.Dir(); err != nil || got != dir {
		t.Fatalf("Dir = %q, %v", got, err)
	}
	target := []Target{{Major: 7}}
	if _, err := fs.NewInstance(Options{Name: "x", Targets: target}); err == nil || !strings.Contains(err.Error(), "format") {
		t.Errorf("no format file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(event, "format"), []byte(read(t, "block_bio_queue.format")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := fs.NewInstance(Options{Name: "x", Targets: target})
	if err == nil || !strings.Contains(err.Error(), "record-tgid") {
		t.Errorf("an instance without options: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "instances")); len(entries) != 0 {
		t.Errorf("the failed instance was left behind: %v", entries)
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := fs.NewInstance(Options{Name: name, Targets: target}); err == nil || !strings.Contains(err.Error(), "single path element") {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := fs.NewInstance(Options{Name: "y"}); err == nil || !strings.Contains(err.Error(), "no device") {
		t.Errorf("no targets: %v", err)
	}
}

// collect feeds text to a lineReader in chunks of the given sizes (cycled).
func collect(t *testing.T, text string, max uint64, chunks ...int) (*lineReader, []blktrace.Record, error) {
	t.Helper()
	var recs []blktrace.Record
	r := &lineReader{max: max, keep: func(rec blktrace.Record) { recs = append(recs, rec) }}
	data := []byte(text)
	for i := 0; len(data) > 0; i++ {
		n := min(chunks[i%len(chunks)], len(data))
		full, err := r.feed(data[:n])
		if err != nil || full {
			return r, recs, err
		}
		data = data[n:]
	}
	return r, recs, nil
}

func TestLineReaderOnRecordings(t *testing.T) {
	text := read(t, "trace-loop0.txt")
	whole, err := blktrace.ParseTrace(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, chunks := range [][]int{{1 << 20}, {1}, {7, 100, 3}, {4096}} {
		r, recs, err := collect(t, text, 0, chunks...)
		if err != nil || !reflect.DeepEqual(recs, whole.Records) || r.lost != 0 {
			t.Errorf("chunks %v: %d records, %d lost, %v; ParseTrace has %d", chunks, len(recs), r.lost, err, len(whole.Records))
		}
	}
	if len(whole.Records) != 42 {
		t.Errorf("%d records; the header says 42 entries in the buffer", len(whole.Records))
	}
	// Lines as recorded, and what they say.
	for i, want := range map[int]blktrace.Record{
		0:  {PID: 1045, Time: 11588547810000, Timed: true, TGID: 1045, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2088, Bytes: 4096},             // direct write, partition block 5
		3:  {PID: 1046, Time: 11588550385000, Timed: true, TGID: 1046, Comm: "dd", RWBS: "RS", Major: 7, Minor: 0, Sector: 0, Bytes: 64 << 10},            // direct read of the disk
		5:  {PID: 1047, Time: 11588552949000, Timed: true, TGID: 1047, Comm: "dd", RWBS: "WFS", Major: 7, Minor: 0, Sector: 2048, Bytes: 1 << 20},         // oflag=direct,sync: FUA
		6:  {PID: 1047, Time: 11588559472000, Timed: true, TGID: 1047, Comm: "dd", RWBS: "FWS", Major: 7, Minor: 0},                                       // its flush
		9:  {PID: 1048, Time: 11588573162000, Timed: true, TGID: 1048, Comm: "blkdiscard", RWBS: "RA", Major: 7, Minor: 0, Sector: 34688, Bytes: 4096},    // blkid probe
		28: {PID: 1048, Time: 11588583058000, Timed: true, TGID: 1048, Comm: "blkdiscard", RWBS: "RA", Major: 7, Minor: 0, Sector: 2088, Bytes: 8192},     // flags .N...
		32: {PID: 1048, Time: 11588583392000, Timed: true, TGID: 1048, Comm: "blkdiscard", RWBS: "DS", Major: 7, Minor: 0, Sector: 4096, Bytes: 64 << 10}, // the discard
		33: {PID: 1177, Time: 11593786411000, Timed: true, TGID: 1177, Comm: "dd", RWBS: "RA", Major: 7, Minor: 0, Sector: 2848, Bytes: 4096},             // buffered read
		41: {PID: 1178, Time: 11593795717000, Timed: true, TGID: 1178, Comm: "dd", RWBS: "WS", Major: 7, Minor: 0, Sector: 2264, Bytes: 4096},             // buffered write-back
	} {
		if whole.Records[i] != want {
			t.Errorf("record %d = %+v, want %+v", i, whole.Records[i], want)
		}
	}

	pipe := read(t, "trace_pipe-lost.txt")
	for _, chunks := range [][]int{{1 << 20}, {13}} {
		r, recs, err := collect(t, pipe, 0, chunks...)
		if err != nil || len(recs) != 82 || r.lost != 2924 {
			t.Errorf("trace_pipe, chunks %v: %d records, %d lost, %v; want 82 and 2924 (6+2924+76 = the 3006 writes queued)", chunks, len(recs), r.lost, err)
		}
	}
	r, recs, err := collect(t, pipe, 10, 1<<20)
	if err != nil || len(recs) != 10 || !r.full() {
		t.Errorf("max 10: %d records, full %v, %v", len(recs), r.full(), err)
	}
}

func TestLineReaderErrors(t *testing.T) {
	for text, want := range map[string]string{
		"x-1 [000] ..... 1.0: block_bio_queue: 7,0 W 0 + 8 [dd]\nx-1 [000] ..... 1.0: block_bio_queue: 7 W 0 + 8 [dd]\n": "trace_pipe line 2: block_bio_queue: dev",
		"CPU:1 [LOST x EVENTS]\n":          "trace_pipe line 1: lost events",
		strings.Repeat("a", maxLine+1):     "longer than",
		strings.Repeat("a", maxLine) + "a": "longer than",
	} {
		if _, _, err := collect(t, text, 0, 1000); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: %v, want an error with %q", text, err, want)
		}
	}
}

// FuzzLineReader: however trace_pipe's bytes are cut into reads, the records and lost events
// are the ones blktrace.ParseTrace finds in the whole text (its complete lines), or both fail.
func FuzzLineReader(f *testing.F) {
	if pipe, err := os.ReadFile(filepath.Join("testdata", "trace_pipe-lost.txt")); err == nil {
		f.Add(string(pipe), uint16(13))
	}
	f.Add("x-1 [000] ..... 1.0: block_bio_queue: 7,0 W 0 + 8 [dd]\nCPU:0 [LOST 1 EVENTS]\n", uint16(1))
	f.Fuzz(func(t *testing.T, text string, chunk uint16) {
		if strings.ContainsRune(text, '\r') || len(text) > maxLine {
			return // bufio's ScanLines drops a CR that trace_pipe never writes
		}
		complete := text[:strings.LastIndexByte(text, '\n')+1]
		whole, werr := blktrace.ParseTrace(strings.NewReader(complete))
		r, recs, err := collect(t, text, 0, int(chunk%512)+1)
		if (err != nil) != (werr != nil) {
			t.Fatalf("lineReader error %v, ParseTrace error %v", err, werr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(recs, whole.Records) && !(len(recs) == 0 && len(whole.Records) == 0) || r.lost != whole.Lost {
			t.Fatalf("lineReader kept %d records and counted %d lost, ParseTrace %d and %d", len(recs), r.lost, len(whole.Records), whole.Lost)
		}
	})
}
