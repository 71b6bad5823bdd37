package provision

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/gpt"
	"github.com/prism-storage/prism/internal/host/hostexec"
)

// The sparse read's grid: SampleBytes at the start of every SampleStride of a range. 4 KiB is
// a page and the largest logical block of any device, so each sample is one aligned O_DIRECT
// read; it holds the superblock of a file system that begins on the grid (ext4's at 1 KiB,
// XFS's at 0; not Btrfs's, at 64 KiB). 1 MiB puts a sample on every MiB boundary, where
// partitions (and so the file systems and LVM data areas in them) begin, and reads 1/256 of
// the device: 2.9 GiB of an 800 GB device in 763,000 reads, half a
// second at the 1.5 million 4 KiB reads a second Intel rates the P5800X for (an estimate; the
// figures measured here are in docs/benchmarks.md, bench/sparse).
const (
	SampleBytes  = int64(4096)
	SampleStride = int64(1) << 20
)

// sampleReaders is how many samples are read at once: one read at a time leaves a flash
// device's queues idle (an Optane answers one 4 KiB read in ~10 µs, 8 s for 800 GB in turn).
const sampleReaders = 8

// Sparse is what a sparse read of a byte range of the device found.
type Sparse struct {
	// Start and Size are the range read, in bytes of the device.
	Start, Size int64
	// Samples is how many samples the range has (all read, unless one was not zero).
	Samples int64
	// NonZero is the index of the first sample holding a non-zero byte; -1 when all are zero.
	NonZero int64
	// At is the device offset of the first non-zero byte of that sample; -1 when none.
	At int64
}

// Empty reports whether every sample read zeros.
func (s Sparse) Empty() bool { return s.NonZero < 0 }

func (s Sparse) String() string {
	if s.Empty() {
		return fmt.Sprintf("zeros in all %d samples", s.Samples)
	}
	return fmt.Sprintf("non-zero bytes at byte %d (%.1f GiB; sample %d of %d, %d bytes every %d MiB)",
		s.At, float64(s.At)/(1<<30), s.NonZero+1, s.Samples, SampleBytes, SampleStride>>20)
}

// sampleCount is how many samples a range of size bytes has: one at every stride, the last
// shorter when the range ends inside it.
func sampleCount(size int64) int64 { return (size + SampleStride - 1) / SampleStride }

// sample is sample i of [start, start+size): its device offset and length.
func sample(start, size, i int64) (off, n int64) {
	off = i * SampleStride
	return start + off, min(SampleBytes, size-off)
}

// SparseRead reads every sample of [start, start+size) of the device at path and returns the
// first that holds a non-zero byte (stopping there). The device is opened O_DIRECT, so the
// device is read and not a page cache that writes through a partition's node bypass. Any
// error, a short read included, is returned: a range that could not be read is not empty.
func SparseRead(ctx context.Context, path string, start, size int64) (Sparse, error) {
	res := Sparse{Start: start, Size: size, Samples: sampleCount(size), NonZero: -1, At: -1}
	if start < 0 || size <= 0 {
		return res, fmt.Errorf("sparse read of %s: bad range at %d, size %d", path, start, size)
	}
	f, err := hostexec.OpenDirect(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	// One page-aligned buffer per reader, as O_DIRECT needs.
	bufs, err := unix.Mmap(-1, 0, int(SampleBytes)*sampleReaders, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return res, fmt.Errorf("sparse read of %s: %w", path, err)
	}
	defer unix.Munmap(bufs) //nolint:errcheck // unmapping an anonymous mapping cannot lose data
	per := (res.Samples + sampleReaders - 1) / sampleReaders
	type found struct {
		i, at int64
		err   error
	}
	results := make([]found, sampleReaders)
	var first sync.Mutex
	firstNonZero := res.Samples // the lowest non-zero sample any reader found so far
	var wg sync.WaitGroup
	for r := range sampleReaders {
		lo, hi := int64(r)*per, min(int64(r+1)*per, res.Samples)
		buf := bufs[r*int(SampleBytes) : (r+1)*int(SampleBytes)]
		results[r] = found{i: -1}
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				first.Lock()
				done := i > firstNonZero
				first.Unlock()
				if done {
					return
				}
				if err := ctx.Err(); err != nil {
					results[r].err = err
					return
				}
				off, n := sample(start, size, i)
				if _, err := f.ReadAt(buf[:n], off); err != nil {
					results[r].err = fmt.Errorf("sparse read of %s at byte %d: %w", path, off, err)
					return
				}
				if j := slices.IndexFunc(buf[:n], func(b byte) bool { return b != 0 }); j >= 0 {
					results[r] = found{i: i, at: off + int64(j)}
					first.Lock()
					firstNonZero = min(firstNonZero, i)
					first.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	for _, f := range results {
		if f.err != nil {
			return res, f.err
		}
	}
	for _, f := range results {
		if f.i >= 0 && (res.NonZero < 0 || f.i < res.NonZero) {
			res.NonZero, res.At = f.i, f.at
		}
	}
	return res, nil
}

// readNewSpace reads sparsely the space the decision's table write covers for the first time:
// the whole device when it has no table yet (the first table is written only over a device
// whose middle is zero too: a deleted partition's file system has a zero head and tail), else
// the range of each partition the table gains. It reports whether it read anything; obs gets
// the results (Whole, Content[n].Sparse) for Decide. Only an ungranted device is read: a
// grant lets Prism write over what only this read would see.
func readNewSpace(ctx context.Context, path string, fd prismv1.FastDevicePlan, obs *Observation, d Decision, read func(ctx context.Context, path string, start, size int64) (Sparse, error)) (bool, error) {
	i := slices.IndexFunc(d.Steps, func(s Step) bool { return s.Kind == StepWriteTable })
	if i < 0 {
		return false, nil
	}
	if _, ok := obs.Disk.Best(); !ok {
		if obs.Whole != nil {
			return false, nil
		}
		s, err := read(ctx, path, 0, obs.Device.SizeBytes)
		if err != nil {
			return false, fmt.Errorf("reading %s sparsely (it cannot be proven empty): %w", path, err)
		}
		obs.Whole = &s
		return true, nil
	}
	table, gained := obs.Disk.Table(), false
	for _, w := range Wanted(fd) {
		n := int(w.Number)
		c, observed := obs.Content[n]
		_, had := table.Partition(n)
		gains := slices.ContainsFunc(d.Steps[i].Table.Entries, func(e gpt.Entry) bool { return e.Number == n })
		if !observed || had || !gains || c.Sparse != nil {
			continue
		}
		s, err := read(ctx, path, w.StartBytes, w.SizeBytes)
		if err != nil {
			return false, fmt.Errorf("reading the range of partition %d of %s sparsely (it cannot be proven empty): %w", n, path, err)
		}
		c.Sparse = &s
		obs.Content[n], gained = c, true
	}
	return gained, nil
}

func (r Runner) sparseReader() func(ctx context.Context, path string, start, size int64) (Sparse, error) {
	if r.readSparse != nil {
		return r.readSparse
	}
	return SparseRead
}
