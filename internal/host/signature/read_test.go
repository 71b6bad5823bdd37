package signature

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// span is one ReadAt call.
type span struct{ off, n int64 }

// counting records the reads Detect makes.
type counting struct {
	io.ReaderAt
	mu    sync.Mutex
	reads []span
}

func (c *counting) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.reads = append(c.reads, span{off, int64(len(p))})
	c.mu.Unlock()
	return c.ReaderAt.ReadAt(p, off)
}

// detectUncached is Detect as it was before the head shrank to 516 KiB and the tail
// read was added: the first MiB in memory and every other probe reading the device
// itself. Detect must find exactly what it finds.
func detectUncached(r io.ReaderAt, size int64) ([]Signature, error) {
	buf := uncachedHeads.Get().(*[]byte)
	defer uncachedHeads.Put(buf)
	head := (*buf)[:min(size, 1<<20)]
	if err := readFull(r, head, 0); err != nil {
		return nil, err
	}
	return (&device{r: r, size: size, head: head}).detect()
}

// uncachedHeads keeps FuzzDetect fast: a fresh MiB per call costs about a millisecond.
var uncachedHeads = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// Every end-of-device structure (backup GPT for both sector sizes, ZFS labels 2 and 3,
// md 1.0 and 0.90) must come from the one tail read, whatever the size's alignment;
// beyond the head and the tail only the LUKS2 and BlueStore replica offsets are read.
func TestDetectReads(t *testing.T) {
	const kib, gib = 1 << 10, int64(1) << 30
	for _, size := range []int64{
		0, 100, 4096, 300 * kib, headSize - 1, headSize, headSize + 1, 600 * kib, 640 * kib, 700 * kib,
		mib, mib + 512, 8 * mib, 8*mib + 1000, 8*mib + 255*kib, 6 * gib, 6*gib + 4096 + 17, 1<<40 + 12345,
	} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := &counting{ReaderAt: dev(size)}
			if _, err := Detect(c, size); err != nil {
				t.Fatal(err)
			}
			head := min(size, headSize)
			var want []span
			if head > 0 {
				want = append(want, span{0, head})
			}
			ts := max(head, tailStart(size))
			if ts < size {
				want = append(want, span{ts, size - ts})
				if size-ts > tailMax {
					t.Errorf("tail of %d bytes exceeds tailMax %d", size-ts, tailMax)
				}
			}
			// Small reads of what lies neither in the head nor in the tail.
			small := func(off, n int64) {
				if off+n <= size && off+n > head && off < ts {
					want = append(want, span{off, n})
				}
			}
			for _, off := range []int64{0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x100000, 0x200000, 0x400000} {
				small(off, 8)
			}
			for _, off := range blueStoreLabels {
				small(off, int64(len(blueStoreMagic)))
			}
			if !slices.Equal(c.reads, want) {
				t.Errorf("reads %v\nwant  %v", c.reads, want)
			}
			if size >= 8*mib {
				// head, tail, LUKS2 at 1, 2 and 4 MiB, and the BlueStore replicas on the device.
				n := 5
				for _, off := range blueStoreLabels[1:] {
					if off < size {
						n++
					}
				}
				if len(c.reads) != n {
					t.Errorf("%d reads, want %d", len(c.reads), n)
				}
			}
		})
	}
}

// Structures at the edges of the head and the tail, on sizes with and without the
// alignments the end-of-device formats use, are found as the uncached reader finds them.
func TestDetectEdges(t *testing.T) {
	md1 := append(u32(0xa92b4efc), u32(1)...)
	md0 := append(u32(0xa92b4efc), u32(0)...)
	skul := []byte("SKUL\xba\xbe\x00\x02")
	for _, size := range []int64{8 * mib, 8*mib + 1000, 8*mib + 100<<10, 8*mib + 255<<10 + 511, 700 << 10} {
		align := size % zfsLabelSize
		cases := []struct {
			name string
			d    *sparse
			want []Signature
		}{
			{"zfs label 2", dev(size).put(size-2*zfsLabelSize-align+zfsUberOffset, zfsRing()),
				[]Signature{{Filesystem, "zfs_member", size - 2*zfsLabelSize - align + zfsUberOffset}}},
			{"zfs label 3", dev(size).put(size-zfsLabelSize-align+zfsUberOffset, zfsRing()),
				[]Signature{{Filesystem, "zfs_member", size - zfsLabelSize - align + zfsUberOffset}}},
			{"md 1.0", dev(size).put(((size>>9-16)&^7)<<9, md1), []Signature{{RAID, "linux_raid_member", ((size>>9 - 16) &^ 7) << 9}}},
			{"md 0.90", dev(size).put(size&^(64<<10-1)-64<<10, md0), []Signature{{RAID, "linux_raid_member", size&^(64<<10-1) - 64<<10}}},
			{"gpt backup 512", dev(size).put(size/512*512-512, gptHdr(512, uint64(size/512-1))),
				[]Signature{{PartitionTable, "gpt", size/512*512 - 512}}},
			{"gpt backup 4096", dev(size).put(size/4096*4096-4096, gptHdr(4096, uint64(size/4096-1))),
				[]Signature{{PartitionTable, "gpt", size/4096*4096 - 4096}}},
			{"luks2 at 512 KiB", dev(size).put(0x80000, skul), []Signature{{Other, "crypto_LUKS", 0x80000}}},
			{"luks2 at 1 MiB", dev(size).put(0x100000, skul), []Signature{{Other, "crypto_LUKS", 0x100000}}},
			{"luks2 at 4 MiB", dev(size).put(0x400000, skul), []Signature{{Other, "crypto_LUKS", 0x400000}}},
		}
		for _, tt := range cases {
			t.Run(fmt.Sprintf("%s/%d", tt.name, size), func(t *testing.T) {
				got, err := Detect(tt.d, size)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := detectUncached(tt.d, size)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, ref) {
					t.Errorf("Detect %v, uncached %v", got, ref)
				}
				if file := viaFile(t, tt.d); !reflect.DeepEqual(file, got) {
					t.Errorf("DetectFile (mapped on Linux) %v, Detect %v", file, got)
				}
				if size >= 8*mib && !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got  %v\nwant %v", got, tt.want)
				}
			})
		}
	}
}

// Detect shares its buffers between goroutines; each must see its own device.
func TestDetectConcurrent(t *testing.T) {
	devs := []*sparse{
		dev(8*mib).put(1024, extSB(0x4, 0x2|0x40, 0x3)),
		dev(8*mib).put(8*mib-512, gptHdr(512, 8*mib/512-1)),
		dev(8*mib).put(8*mib-128<<10, zfsRing()),
		dev(8 * mib),
	}
	want := make([][]Signature, len(devs))
	for i, d := range devs {
		var err error
		if want[i], err = detectUncached(d, d.size); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				d := devs[(g+i)%len(devs)]
				got, err := Detect(d, d.size)
				if err != nil {
					t.Error(err)
					return
				}
				if w := want[(g+i)%len(devs)]; !reflect.DeepEqual(got, w) {
					t.Errorf("got %v, want %v", got, w)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkDetect measures the detector without process start-up: on in-memory devices
// (the probes' CPU cost and allocations) and through DetectPath on a sparse image file,
// whose pages stay cached (open, reads and close, but no device I/O). read-B/op and
// reads/op count what Detect asks of the device.
func BenchmarkDetect(b *testing.B) {
	const gib = int64(1) << 30
	mem := []struct {
		name string
		d    *sparse
	}{
		{"mem/blank-6GiB", dev(6 * gib)},
		{"mem/ext4-6GiB", dev(6*gib).put(1024, extSB(0x4, 0x2|0x40, 0x3))},
		{"mem/gpt-6GiB", dev(6*gib).put(0, mbr(0, 0xee)).put(512, gptHdr(512, 1)).put(6*gib-512, gptHdr(512, uint64(6*gib/512-1)))},
	}
	for _, m := range mem {
		b.Run(m.name, func(b *testing.B) {
			c := &counting{ReaderAt: m.d}
			b.ReportAllocs()
			for b.Loop() {
				c.reads = c.reads[:0]
				if _, err := Detect(c, m.d.size); err != nil {
					b.Fatal(err)
				}
			}
			var n int64
			for _, r := range c.reads {
				n += r.n
			}
			b.ReportMetric(float64(n), "read-B/op")
			b.ReportMetric(float64(len(c.reads)), "reads/op")
		})
	}
	b.Run("file/blank-6GiB", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "disk.img")
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Truncate(6 * gib); err != nil {
			b.Fatal(err)
		}
		f.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DetectPath(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// viaFile writes d to a sparse file and runs DetectFile on it, as the inventory does on a
// device (on Linux through detectMapped).
func viaFile(t *testing.T, d *sparse) []Signature {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dev.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(d.size); err != nil {
		t.Fatal(err)
	}
	for _, o := range slices.Sorted(maps.Keys(d.parts)) {
		if _, err := f.WriteAt(d.parts[o], o); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(d.size); err != nil { // parts beyond the end are not on the device
		t.Fatal(err)
	}
	sigs, err := DetectFile(f, p)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}
