package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/cachesim"
	"github.com/prism-storage/prism/internal/host/casadm"
)

// guestDir holds outputs of the real v26.03.2 module (testdata/guest-v26.03.2/README.md).
const guestDir = "testdata/guest-v26.03.2/"

// TestGuestWorkloadCounters replays on the emulator the workload run on the real module in
// the guest (16 KiB lines, Prism's default classes, three dd runs) and compares the request
// counters per IO class with what the real casadm printed. Sequential 4 KiB writes into
// 16 KiB lines are all full misses on the real cache: a line mapped by one 4 KiB write holds
// no data for the next one.
func TestGuestWorkloadCounters(t *testing.T) {
	real := readGuestStats(t, "casadm_P_i_1_d_o_csv.after-dd.txt", true)
	e := newEnv(t)
	guestWorkload(e)

	for _, id := range []int{2, 3, 11} {
		want := real[id]
		got := e.classStats(id)
		for _, c := range []struct {
			name      string
			got, want *casadm.Counter
		}{
			{"write hits", got.Requests.WriteHits, want.Requests.WriteHits},
			{"write full misses", got.Requests.WriteFullMisses, want.Requests.WriteFullMisses},
			{"write partial misses", got.Requests.WritePartialMisses, want.Requests.WritePartialMisses},
			{"pass-through writes", got.Requests.PassThroughWrites, want.Requests.PassThroughWrites},
			{"pass-through reads", got.Requests.PassThroughReads, want.Requests.PassThroughReads},
			{"dirty", got.Usage.Dirty, want.Usage.Dirty},
			{"exported-object writes", got.Blocks.ExportedWrites, want.Blocks.ExportedWrites},
		} {
			if v(c.got) != v(c.want) {
				t.Errorf("class %d %s: emulator %d, real module %d", id, c.name, v(c.got), v(c.want))
			}
		}
	}
	// Class 11 took every 4 KiB write: 1024 lines of 16 KiB, all dirty.
	if got, want := v(e.classStats(11).Usage.Occupancy), v(real[11].Usage.Occupancy); got != want {
		t.Errorf("class 11 occupancy: emulator %d, real module %d", got, want)
	}
	// The cache record: the dirty age as the real casadm prints it (no trailing space).
	realCache := readGuestStats(t, "casadm_P_i_1_o_csv.after-dd.txt", false)[0]
	e.now = strconv.FormatUint(1000+realCache.Cache.DirtyForSeconds, 10)
	if got, want := e.cacheStats().Cache.DirtyFor, realCache.Cache.DirtyFor; got != want {
		t.Errorf("Dirty for: emulator %q, real module %q", got, want)
	}
	// Writing the same blocks again: now every request finds its data and is a hit.
	e.io(1, "size=4096,dir=write,comm=dd,direct,lba="+strconv.Itoa(100000*8), 4096, "--stride", "4096")
	if got := v(e.classStats(11).Requests.WriteHits); got != 4096 {
		t.Errorf("rewrite: %d write hits, want 4096", got)
	}
}

// guestWorkload sets up on e the guest's cache (16 KiB lines on the same partition size and
// kernel name, one 64 GiB core, nhit promotion, Prism's default classes as -C -L listed them)
// and runs the three dd runs. udev read three 4 KiB blocks of the new exported object before
// the classes were loaded (class 0 of the recordings): emulated as three reads at lba 0.
func guestWorkload(e *env) {
	e.t.Helper()
	classes, err := os.ReadFile(guestDir + "casadm_C_L_i_1_o_csv.txt")
	if err != nil {
		e.t.Fatal(err)
	}
	e.must("--emulator-add-device", "--device", cacheDev, "--size", "17177772032", "--kernel-name", "/dev/nvme2n1p3")
	e.must("--emulator-add-device", "--device", qlc1, "--size", strconv.Itoa(64<<30))
	e.must("-S", "-d", cacheDev, "-i", "1", "-c", "wb", "-x", "16")
	e.must("-A", "-i", "1", "-d", qlc1, "-j", "1")
	e.io(1, "size=4096,dir=read,comm=systemd-udevd,lba=0", 3, "--stride", "4096")
	e.must("-X", "-n", "promotion", "-i", "1", "-p", "nhit")
	e.must("-X", "-n", "seq-cutoff", "-i", "1", "-j", "1", "-t", "512")
	e.load(string(classes))
	e.io(1, "size=4096,dir=write,comm=dd,direct,lba="+strconv.Itoa(100000*8), 4096, "--stride", "4096")
	e.io(1, "size=1048576,dir=write,comm=dd,direct,lba="+strconv.Itoa(4096*2048), 64, "--stride", "1048576")
	e.io(1, "size=65536,dir=read,comm=dd,direct,lba=0", 256, "--stride", "65536")
}

// readGuestStats parses a real -P output into its records, by IO class id when byClass
// (a -P -d output), else by position.
func readGuestStats(t *testing.T, name string, byClass bool) map[int]casadm.Stats {
	t.Helper()
	raw, err := os.ReadFile(guestDir + name)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := casadm.ParseStats(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[int]casadm.Stats{}
	for i, r := range recs {
		if !byClass {
			out[i] = r
			continue
		}
		if r.Class == nil {
			t.Fatalf("%s: a record without an IO class", name)
		}
		out[r.Class.ID] = r
	}
	return out
}

func TestBlockMask(t *testing.T) {
	const lb = 16 * kib
	for _, c := range []struct {
		line, off, size uint64
		want            uint16
	}{
		{0, 0, 4 * kib, 0b0001},
		{0, 4 * kib, 4 * kib, 0b0010},
		{0, 0, lb, 0b1111},
		{1, 0, 64 * kib, 0b1111},       // a request covering the whole line and more
		{1, 12 * kib, 8 * kib, 0b0001}, // the tail of a request that starts in line 0
		{0, 12 * kib, 8 * kib, 0b1000},
		{2, 0, 8 * kib, 0},    // a line the request does not touch
		{0, 512, 512, 0b0001}, // a sector rounds out to its 4 KiB block
		{3, 3*lb + 15*kib, 1 * kib, 0b1000},
	} {
		if got := cachesim.BlockMask(c.line, lb, c.off, c.size); got != c.want {
			t.Errorf("cachesim.BlockMask(line %d, off %d, size %d) = %04b, want %04b", c.line, c.off, c.size, got, c.want)
		}
	}
	if got := cachesim.BlockMask(0, 64*kib, 0, 64*kib); got != 0xffff {
		t.Errorf("a 64 KiB line: %x", got)
	}
}

// TestWriteAroundPartialHit: in write-around, OCF writes through only a full hit; any other
// write is serviced in pass-through and invalidates the lines it touches (engine_wa.c).
func TestWriteAroundPartialHit(t *testing.T) {
	e := newEnv(t)
	e.setup("wa", 1<<30)
	e.io(1, "size=4096,dir=read,lba=0", 1) // a read miss maps line 0
	e.io(1, "size=8192,dir=write,lba=0", 1)
	s := e.classStats(0)
	if v(s.Requests.PassThroughWrites) != 1 || v(s.Requests.WriteTotal) != 0 {
		t.Errorf("partial-hit write: %d pass-through, %d serviced; want 1 and 0", v(s.Requests.PassThroughWrites), v(s.Requests.WriteTotal))
	}
	if occ := v(s.Usage.Occupancy); occ != 0 {
		t.Errorf("the write left %d blocks in the cache; it invalidates what it touches", occ)
	}
	e.io(1, "size=4096,dir=read,lba=0", 1)
	e.io(1, "size=4096,dir=write,lba=0", 1) // a full hit: written through the cache
	if s := e.classStats(0); v(s.Requests.WriteTotal) != 1 || v(s.Requests.WriteHits) != 1 {
		t.Errorf("full-hit write: %d serviced, %d hits; want 1 and 1", v(s.Requests.WriteTotal), v(s.Requests.WriteHits))
	}
}
