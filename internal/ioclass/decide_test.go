package ioclass

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestFullBytes checks the byte test behind the decision tables against a
// plain loop, for every pattern of full bytes and with one bit missing.
func TestFullBytes(t *testing.T) {
	for pat := 0; pat < 256; pat++ {
		for hole := -1; hole < 64; hole++ {
			var x uint64
			for i := 0; i < 8; i++ {
				if pat&(1<<i) != 0 {
					x |= 0xff << (8 * i)
				} else {
					x |= uint64(0x7e^i) << (8 * i)
				}
			}
			if hole >= 0 {
				x &^= 1 << hole
			}
			want := uint64(0)
			for i := 0; i < 8; i++ {
				if x>>(8*i)&0xff == 0xff {
					want |= 1 << i
				}
			}
			if got := fullBytes(x); got != want {
				t.Fatalf("fullBytes(%#x) = %08b, want %08b", x, got, want)
			}
		}
	}
}

// TestDecisionNumericEdges: comparisons at 0 and at the top of the u64
// range, where the interval bounds are clipped.
func TestDecisionNumericEdges(t *testing.T) {
	const max = "18446744073709551615"
	for _, rule := range []string{"lba:le:" + max, "lba:gt:" + max, "lba:eq:" + max, "lba:ne:" + max,
		"lba:lt:0", "lba:ge:0", "lba:eq:0", "lba:ne:0", "lba:le:0", "lba:gt:0", "lba:lt:" + max, "lba:ge:" + max} {
		e := mustEvaluator(t, hdr+"0,unclassified,22,1\n1,"+rule+",1,1\n")
		if e.dec == nil {
			t.Fatalf("%s: not compiled", rule)
		}
		for _, lba := range []uint64{0, 1, 2, 1 << 63, ^uint64(0) - 1, ^uint64(0)} {
			io := IO{LBA: lba}
			if got, want := e.Classify(io), e.ClassifyReference(io); got != want {
				t.Errorf("%s, lba %d: %d, reference %d", rule, lba, got, want)
			}
		}
	}
}

// TestDecisionFallback: rules the tables cannot hold (more than 8 terms)
// keep the reference model, with the same answers.
func TestDecisionFallback(t *testing.T) {
	rule := strings.Repeat("direct&", 8) + "lba:1"
	e := mustEvaluator(t, hdr+"0,unclassified,22,1\n1,"+rule+",1,1\n")
	if e.dec != nil {
		t.Fatal("9 terms compiled into 8-term bytes")
	}
	if got := e.Classify(IO{Direct: true, LBA: 1}); got != 1 {
		t.Errorf("class %d, want 1", got)
	}
}

// TestDecisionPolicy33 compares the tables with the reference on the
// benchmark's 33-class policy over a grid of IOs around its constants.
func TestDecisionPolicy33(t *testing.T) {
	cfg, err := Compile(policy33())
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.dec == nil {
		t.Fatal("policy33 not compiled")
	}
	n, classes := 0, map[int]bool{}
	for id := 0; id <= 33; id++ {
		for _, comm := range []string{"proc-" + strconv.Itoa(id), "tp_osd_tp"} {
			for _, pid := range []int{0, id} {
				for flags := 0; flags < 4; flags++ {
					for _, size := range []uint64{4096 * uint64(id), 4096*uint64(id) + 1} {
						for _, lba := range []uint64{1 << 20 * uint64(id), 1<<20*uint64(id) - 1} {
							io := IO{Comm: comm, PID: pid, Direct: flags&1 != 0, Write: flags&2 != 0, Size: size, LBA: lba}
							got, want := e.Classify(io), e.ClassifyReference(io)
							if got != want {
								t.Fatalf("%+v: class %d, reference %d", io, got, want)
							}
							classes[got] = true
							n++
						}
					}
				}
			}
		}
	}
	if len(classes) < 20 {
		t.Errorf("the grid reached only %d classes: it tests little", len(classes))
	}
}

// ioGen turns fuzz bytes into IOs whose fields sit on and next to the
// constants the generated policies compare with.
type ioGen struct{ *specGen }

var (
	fuzzNums  = []uint64{0, 1, 2, 31, 32, 33, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20, 1<<63 - 1, ^uint64(0) - 1, ^uint64(0)}
	fuzzComms = []string{"", "bstore_kv_sync", "tp_osd_tp", "bstore_kv_final", "bstore_kv_finalize", "x", "a b", "log", "rocksdb:low0",
		"proc-1", "proc-31"}
	fuzzDirs  = []string{"", "/", "/var", "/var/log", "/var/logs", "/var/log/x"}
	fuzzFiles = []string{"", "x", "log", "a b.log", "x.log", "a b"}
)

func (g ioGen) num() uint64 {
	if b := g.next(); b < 200 {
		return fuzzNums[int(b)%len(fuzzNums)]
	}
	return uint64(g.next())<<8 | uint64(g.next())
}

func (g ioGen) io() IO {
	flags := g.next()
	io := IO{Size: g.num(), Write: flags&1 != 0, Direct: flags&2 != 0, Metadata: flags&4 != 0, HasFile: flags&8 != 0,
		Comm: g.pick(fuzzComms), LBA: g.num(), CoreID: int(g.num() % 4096), PID: int(int32(g.num())), WLTH: int(g.num() % 8),
		Dir: g.pick(fuzzDirs), FileName: g.pick(fuzzFiles), FileSize: g.num(), FileOffset: g.num()}
	if i := strings.LastIndexByte(io.FileName, '.'); i >= 0 {
		io.Extension = io.FileName[i+1:]
	}
	return io
}

// FuzzDecision: on random policies (the fuzz helpers' valid specs, and
// three raw rules in the kernel's syntax) and random IOs, Classify (the
// compiled tables) gives the class ClassifyReference (rule by rule) gives.
func FuzzDecision(f *testing.F) {
	f.Add([]byte{}, "", "", "")
	f.Add(bytes.Repeat([]byte{5, 2, 1, 1, 2, 3, 1, 2, 7}, 40), "io_class:1&io_direction:write", "direct|metadata&lba:1|core_id:1", "done")
	f.Add(bytes.Repeat([]byte{33, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 200, 17}, 60), "io_class:lt:5|pid:3&done",
		"request_size:le:4096&done&lba:1", "process_name:bstore_kv_sync|io_class:ne:0&wlth:ge:2")
	f.Fuzz(func(t *testing.T, data []byte, r1, r2, r3 string) {
		if len(data) > 4096 {
			return
		}
		g := ioGen{&specGen{data: data}}
		var cfg Config
		if g.next()%2 == 0 {
			var err error
			if cfg, err = Compile(g.validSpec()); err != nil {
				return
			}
		} else {
			ids := []int{1 + int(g.next()%32), 1 + int(g.next()%32), 1 + int(g.next()%32)}
			cfg = Config{Classes: []Class{{ID: 0, Rule: UnclassifiedName}, {ID: ids[0], Rule: r1}, {ID: ids[1], Rule: r2}, {ID: ids[2], Rule: r3}}}
		}
		e, err := NewEvaluator(cfg)
		if err != nil {
			return
		}
		for range 16 {
			io := g.io()
			if got, want := e.Classify(io), e.ClassifyReference(io); got != want {
				t.Fatalf("Classify = %d, reference = %d for %+v\n%s", got, want, io, cfg.CSV())
			}
		}
	})
}

// TestDecisionDynamic: io_class terms, decided in evaluation order, and the
// other conditions of their term, which make them true whatever the class.
func TestDecisionDynamic(t *testing.T) {
	e := mustEvaluator(t, hdr+"0,unclassified,22,1\n1,direct,1,1\n2,lba:1|io_class:eq:1,1,1\n"+
		"3,metadata&io_class:ne:2|pid:7,1,1\n4,io_class:3&done,1,1\n5,io_direction:write,1,1\n")
	if e.dec == nil || !e.dec.anyDynamic {
		t.Fatal("not compiled with dynamic terms")
	}
	for _, tc := range []struct {
		io   IO
		want int
	}{
		{IO{}, 0},
		{IO{Direct: true}, 2},                   // 1, then io_class:eq:1 holds
		{IO{LBA: 1}, 2},                         // lba:1 holds with class 0
		{IO{LBA: 1, Metadata: true}, 2},         // 3: class 2, io_class:ne:2 fails and pid is not 7
		{IO{LBA: 1, Metadata: true, PID: 7}, 4}, // 3 through pid:7, then 4 stops
		{IO{Metadata: true}, 4},                 // 3 (class 0 != 2), then 4 stops
		{IO{Metadata: true, Write: true}, 4},
		{IO{Direct: true, Write: true}, 5},
	} {
		if got, ref := e.Classify(tc.io), e.ClassifyReference(tc.io); got != tc.want || ref != tc.want {
			t.Errorf("%v: Classify %d, reference %d, want %d", tc.io, got, ref, tc.want)
		}
	}
	// Two dynamic terms: one holds through lba, the other through the class.
	e = mustEvaluator(t, hdr+"0,unclassified,22,1\n1,lba:1|io_class:eq:7&pid:2|io_class:eq:0,1,1\n")
	for _, tc := range []struct {
		io   IO
		want int
	}{{IO{LBA: 1}, 1}, {IO{PID: 2}, 0}, {IO{LBA: 1, PID: 2}, 1}, {IO{}, 0}} {
		if got, ref := e.Classify(tc.io), e.ClassifyReference(tc.io); got != tc.want || ref != tc.want {
			t.Errorf("%v: Classify %d, reference %d, want %d", tc.io, got, ref, tc.want)
		}
	}
}
