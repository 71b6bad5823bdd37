package ioclass

import (
	"os"
	"strings"
	"testing"
)

func mustEvaluator(t testing.TB, csv string) *Evaluator {
	t.Helper()
	cfg, err := ParseCSV(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustRule(t *testing.T, text string) Rule {
	t.Helper()
	r, err := ParseRule(text)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPrecedence: '|' binds tighter than '&' (the kernel's left-to-right
// evaluation that gives up at an '&' reached with a false result), checked
// over every assignment of four conditions.
func TestPrecedence(t *testing.T) {
	// A..D are independent conditions: direct, metadata, lba:1, core_id:1.
	r := mustRule(t, "direct|metadata&lba:1|core_id:1")
	for bits := 0; bits < 16; bits++ {
		a, b, c, d := bits&1 != 0, bits&2 != 0, bits&4 != 0, bits&8 != 0
		io := IO{Direct: a, Metadata: b}
		if c {
			io.LBA = 1
		}
		if d {
			io.CoreID = 1
		}
		got, stop := r.Match(io, 0)
		if want := (a || b) && (c || d); got != want || stop {
			t.Errorf("A=%v B=%v C=%v D=%v: match %v stop %v, want %v", a, b, c, d, got, stop, want)
		}
	}
}

// TestDoneStopsTheRule: done ends evaluation with a match; conditions after
// it are never tested (classifier.c breaks on the stop flag).
func TestDoneStopsTheRule(t *testing.T) {
	for _, tc := range []struct {
		rule        string
		io          IO
		match, stop bool
	}{
		{"direct&done&metadata", IO{Direct: true}, true, true},   // metadata never tested
		{"direct&done&metadata", IO{}, false, false},             // gave up at the first '&'
		{"done|direct", IO{}, true, true},                        // done first: matches everything
		{"direct|done", IO{}, true, true},                        // false|true
		{"metadata|direct&done", IO{Metadata: true}, true, true}, // (metadata or direct) and done
		{"metadata&direct|done", IO{Metadata: true}, true, true}, // metadata and (direct or done)
		{"metadata&direct|done", IO{}, false, false},             // gave up before done
		{"direct", IO{Direct: true}, true, false},                // no done: no stop
	} {
		r := mustRule(t, tc.rule)
		if m, s := r.Match(tc.io, 0); m != tc.match || s != tc.stop {
			t.Errorf("%s with %v: match %v stop %v, want %v %v", tc.rule, tc.io, m, s, tc.match, tc.stop)
		}
	}
}

// TestLastMatchVersusDone: without done the highest matching id wins, with
// done the lowest.
func TestLastMatchVersusDone(t *testing.T) {
	noDone := mustEvaluator(t, hdr+"0,unclassified,22,1\n1,request_size:le:65536,1,1\n2,io_direction:write,2,1\n3,lba:lt:100,3,1\n")
	withDone := mustEvaluator(t, hdr+"0,unclassified,22,1\n1,request_size:le:65536&done,1,1\n2,io_direction:write&done,2,1\n3,lba:lt:100&done,3,1\n")
	io := IO{Size: 4096, Write: true, LBA: 7}
	if got := noDone.Classify(io); got != 3 {
		t.Errorf("without done: class %d, want 3 (the last match)", got)
	}
	if got := withDone.Classify(io); got != 1 {
		t.Errorf("with done: class %d, want 1 (the first match)", got)
	}
	if got := withDone.Classify(IO{Size: 1 << 20, LBA: 1000}); got != 0 {
		t.Errorf("no match: class %d, want 0", got)
	}
	// A later rule that does not match leaves the class alone.
	if got := noDone.Classify(IO{Size: 4096, LBA: 1000}); got != 1 {
		t.Errorf("only class 1 matches: got %d", got)
	}
}

// TestIOClassChaining: io_class compares with the class assigned so far, so
// a later rule can refine an earlier one.
func TestIOClassChaining(t *testing.T) {
	e := mustEvaluator(t, hdr+
		"0,unclassified,22,1\n"+
		"1,request_size:le:4096,1,1\n"+ // small: tentatively 1
		"2,io_class:1&io_direction:write&done,2,1\n"+ // small writes refine to 2
		"3,io_class:0&done,3,1\n"+ // nothing matched so far
		"4,done,4,1\n") // never reached
	for _, tc := range []struct {
		io   IO
		want int
	}{
		{IO{Size: 4096, Write: true}, 2},
		{IO{Size: 4096}, 4}, // class 1 so far, rule 2 fails, rule 3 (io_class:0) fails, rule 4 takes it
		{IO{Size: 8192}, 3},
	} {
		if got := e.Classify(tc.io); got != tc.want {
			t.Errorf("%v: class %d, want %d", tc.io, got, tc.want)
		}
	}
	if class, steps := e.Trace(IO{Size: 4096}); class != 4 || len(steps) != 4 || !steps[0].Matched || steps[1].Matched || !steps[3].Stopped {
		t.Errorf("Trace: %d %+v", class, steps)
	}
}

// TestKernelFactsWorkloads replays KERNEL-FACTS.md's observation: the table
// sent 8 MiB of writes to class 1 (lba), 56 MiB to class 2 (request size),
// 64 MiB to class 3 (process name) and 48 MiB of 256 KiB fio writes to 4.
func TestKernelFactsWorkloads(t *testing.T) {
	e := mustEvaluator(t, "IO class id,IO class name,Eviction priority,Allocation\n"+
		"0,unclassified,22,1.00\n"+
		"1,lba:ge:0&lba:lt:2097152&done,1,1.00\n"+
		"2,request_size:le:16384&done,2,1.00\n"+
		"3,process_name:dd&done,3,1.00\n"+
		"4,io_direction:write&done,4,1.00\n")
	const gib = 2097152 // sectors
	for _, tc := range []struct {
		name string
		io   IO
		want int
	}{
		{"write in the first GiB, any size", IO{Size: 1 << 20, Write: true, LBA: 2048, Comm: "fio"}, 1},
		{"buffered dd: 4 KiB writeback requests", IO{Size: 4096, Write: true, LBA: gib + 8, Comm: "kworker/u16:2"}, 2},
		{"O_DIRECT dd 32 KiB writes", IO{Size: 32 << 10, Write: true, LBA: gib + 64, Comm: "dd", Direct: true}, 3},
		{"fio 256 KiB writes", IO{Size: 256 << 10, Write: true, LBA: 3 * gib, Comm: "fio", Direct: true}, 4},
		{"fio 256 KiB read", IO{Size: 256 << 10, LBA: 3 * gib, Comm: "fio"}, 0},
		{"last sector of the first GiB", IO{Size: 1 << 20, LBA: gib - 1}, 1},
	} {
		if got := e.Classify(tc.io); got != tc.want {
			t.Errorf("%s: class %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPrismCSVClasses classifies with the reference prism.csv.
func TestPrismCSVClasses(t *testing.T) {
	raw, err := os.ReadFile("testdata/prism.csv")
	if err != nil {
		t.Fatal(err)
	}
	e := mustEvaluator(t, string(raw))
	file := func(dir, name string, size uint64) IO {
		io := IO{HasFile: true, Dir: dir, FileName: name, FileSize: size, Size: 8192, Write: true, LBA: 1 << 30}
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			io.Extension = name[i+1:]
		}
		return io
	}
	for _, tc := range []struct {
		name string
		io   IO
		want int
	}{
		{"filesystem metadata", IO{Metadata: true, Size: 4096}, 1},
		{"tmp file under kubelet pods", file("/var/lib/kubelet/pods/abc/volumes", "tmpXYZ", 10), 2},
		{"non-tmp file under kubelet pods: io_class:0 catches it", file("/var/lib/kubelet/pods/abc", "data", 1<<30), 8},
		{"journal file anywhere", file("/srv", "x.journal", 1), 3},
		{"anything under /var/log", file("/var/log/nginx", "access", 1), 3},
		{"/var/logs is not /var/log", file("/var/logs", "access", 1<<30), 8},
		{"small hot file", file("/data/hot/db", "f", 1<<20), 4},
		{"large hot file", file("/data/hot", "f", 1<<20+1), 8},
		{"postgres write", IO{Comm: "postgres", Write: true, Size: 8192, LBA: 1 << 30}, 5},
		{"postgres read, core 1, low LBA", IO{Comm: "postgres", Size: 8192, CoreID: 1, LBA: 100}, 6},
		{"4 KiB read elsewhere", IO{Size: 4096, LBA: 1 << 30}, 7},
		{"raw 64 KiB read: io_class:0 catches it", IO{Size: 65536, LBA: 1 << 30}, 8},
	} {
		if got := e.Classify(tc.io); got != tc.want {
			t.Errorf("%s: class %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestFileConditionsNeedAFile(t *testing.T) {
	for _, rule := range []string{"file_size:ge:0", "file_offset:ge:0", "directory:/", "extension:log", "file_name_prefix:a"} {
		r := mustRule(t, rule)
		if m, _ := r.Match(IO{Extension: "log", FileName: "a"}, 0); m {
			t.Errorf("%s matched an IO without a file", rule)
		}
		if m, _ := r.Match(IO{HasFile: true, Dir: "/", Extension: "log", FileName: "a"}, 0); !m {
			t.Errorf("%s did not match a file", rule)
		}
	}
}

func TestDirectoryMatching(t *testing.T) {
	io := IO{HasFile: true, Dir: "/var/lib/ceph", FileName: "osd.log"}
	for dir, want := range map[string]bool{
		"/": true, "/var": true, "/var/": true, "/var/lib/ceph": true, "var/lib": true,
		"/var/lib/ceph/osd.log": true, // the file itself: the walk starts at its inode
		"/var/li":               false, "/var/lib/cephx": false, "/var/lib/ceph/osd": false, "/etc": false,
	} {
		if m, _ := mustRule(t, "directory:"+dir).Match(io, 0); m != want {
			t.Errorf("directory:%s matched %v, want %v", dir, m, want)
		}
	}
	if m, _ := mustRule(t, "directory:/x").Match(IO{HasFile: true, FileName: "x"}, 0); m {
		t.Error("an unknown directory matched a path")
	}
}

func TestProcessNameIsTheKernelsComm(t *testing.T) {
	r := mustRule(t, "process_name:bstore_kv_final")
	if m, _ := r.Match(IO{Comm: "bstore_kv_finalize"}, 0); !m {
		t.Error("the kernel keeps 15 characters of comm")
	}
	if m, _ := r.Match(IO{Comm: "bstore_kv_fina"}, 0); m {
		t.Error("process_name is an exact match, not a prefix")
	}
	if m, _ := mustRule(t, "process_name:"+strings.Repeat("x", 16)).Match(IO{Comm: strings.Repeat("x", 16)}, 0); m {
		t.Error("a 16-character process_name can never match")
	}
}

func TestNumericOperators(t *testing.T) {
	for _, tc := range []struct {
		rule string
		size uint64
		want bool
	}{
		{"request_size:4096", 4096, true}, {"request_size:eq:4096", 4095, false},
		{"request_size:ne:4096", 4095, true}, {"request_size:lt:4096", 4096, false},
		{"request_size:gt:4096", 4097, true}, {"request_size:le:4096", 4096, true},
		{"request_size:ge:4096", 4095, false}, {"request_size:ge:0", 0, true},
	} {
		if m, _ := mustRule(t, tc.rule).Match(IO{Size: tc.size}, 0); m != tc.want {
			t.Errorf("%s with %d: %v", tc.rule, tc.size, m)
		}
	}
}

func TestNewEvaluatorNamesTheClass(t *testing.T) {
	raw, err := os.ReadFile("testdata/unknown_cond.csv")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseCSV(strings.NewReader(string(raw))) // casadm accepts it...
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewEvaluator(cfg) // ...the kernel does not
	want := `IO class 1 rule "bogus_cond:5&done": Unexpected classification rule condition: condition 1 "bogus_cond:5"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestClassifyDoesNotAllocate(t *testing.T) {
	raw, _ := os.ReadFile("testdata/prism.csv")
	e := mustEvaluator(t, string(raw))
	io := IO{HasFile: true, Dir: "/var/lib/kubelet/pods/x", FileName: "tmp1", Size: 4096, Comm: "postgres"}
	if n := testing.AllocsPerRun(100, func() { e.Classify(io) }); n != 0 {
		t.Errorf("Classify allocates %v times", n)
	}
}
