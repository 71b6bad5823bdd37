// Command sparse times the agent's sparse read (provision.SparseRead: 4 KiB at every MiB, the
// proof before a device's first table) beside the full read that would prove the same range
// zero byte by byte, `cmp -n <size> <device> /dev/zero`. It reads four targets: a sparse file
// (holes: the cost of the reads themselves, no media behind them) and a file of allocated zeros
// (this machine's disk behind every sample), each as a regular file and through a loop device
// (as root). Before each run the target's page cache is dropped (fadvise DONTNEED on the file,
// BLKFLSBUF on the loop), so cmp reads the disk too. Prints a Markdown table for
// docs/benchmarks.md.
//
//	sudo go run ./bench/sparse -sparse 64 -allocated 2 -runs 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/node/provision"
)

const gib = int64(1) << 30

func main() {
	sparseGiB := flag.Int64("sparse", 64, "size of the sparse file, GiB")
	allocGiB := flag.Int64("allocated", 2, "size of the file of allocated zeros, GiB")
	runs := flag.Int("runs", 5, "timed runs of each reader on each target")
	dir := flag.String("dir", "/var/tmp", "where the files go")
	flag.Parse()
	if err := run(*sparseGiB*gib, *allocGiB*gib, *runs, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "bench/sparse:", err)
		os.Exit(1)
	}
}

type target struct {
	name, path, file string
	size             int64
}

type timing struct{ wall, cpu time.Duration }

func run(sparseSize, allocSize int64, runs int, dir string) error {
	work, err := os.MkdirTemp(dir, "prism-bench-sparse-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	sparse, alloc := filepath.Join(work, "sparse"), filepath.Join(work, "allocated")
	if err := makeSparse(sparse, sparseSize); err != nil {
		return err
	}
	if err := makeAllocated(alloc, allocSize); err != nil {
		return err
	}
	targets := []target{
		{fmt.Sprintf("sparse file, %d GiB", sparseSize/gib), sparse, sparse, sparseSize},
		{fmt.Sprintf("file of allocated zeros, %d GiB", allocSize/gib), alloc, alloc, allocSize},
	}
	if os.Geteuid() == 0 {
		for _, t := range slices.Clone(targets) {
			loop, err := attach(t.file)
			if err != nil {
				return err
			}
			defer exec.Command("losetup", "--detach", loop).Run() //nolint:errcheck // best effort at exit
			targets = append(targets, target{"loop device over the " + t.name, loop, t.file, t.size})
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench/sparse: not root: no loop devices")
	}

	fmt.Printf("| target | samples | sparse read, median (min) wall | its CPU | `cmp -n <size> <target> /dev/zero`, median (min) wall | its CPU | cmp / sparse read |\n")
	fmt.Printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range targets {
		var sr, full []timing
		var samples int64
		for range runs {
			if err := dropCache(t); err != nil {
				return err
			}
			tm, s, err := timeSparse(t)
			if err != nil {
				return err
			}
			sr, samples = append(sr, tm), s
			if err := dropCache(t); err != nil {
				return err
			}
			tm, err = timeCmp(t)
			if err != nil {
				return err
			}
			full = append(full, tm)
		}
		fmt.Printf("| %s | %d | %s (%s) | %s | %s (%s) | %s | %.0fx |\n", t.name, samples,
			ms(median(sr, wall)), ms(minimum(sr, wall)), ms(median(sr, cpu)),
			ms(median(full, wall)), ms(minimum(full, wall)), ms(median(full, cpu)),
			float64(median(full, wall))/float64(median(sr, wall)))
	}
	return nil
}

// timeSparse runs the agent's sparse read once, in this process: CPU is the process's, all
// threads.
func timeSparse(t target) (timing, int64, error) {
	before := rusage()
	start := time.Now()
	s, err := provision.SparseRead(context.Background(), t.path, 0, t.size)
	wall := time.Since(start)
	if err != nil {
		return timing{}, 0, err
	}
	if !s.Empty() {
		return timing{}, 0, fmt.Errorf("%s: %s, want zeros", t.path, s)
	}
	return timing{wall, rusage() - before}, s.Samples, nil
}

// timeCmp runs cmp once; CPU is the child's, as wait4 returns it.
func timeCmp(t target) (timing, error) {
	cmd := exec.Command("cmp", "-n", fmt.Sprint(t.size), t.path, "/dev/zero")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return timing{}, fmt.Errorf("cmp %s: %v: %s", t.path, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return timing{wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}, nil
}

func rusage() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func makeSparse(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

// makeAllocated writes size bytes of zeros (allocated blocks, not holes) and syncs them.
func makeAllocated(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	return f.Sync()
}

func attach(file string) (string, error) {
	out, err := exec.Command("losetup", "--find", "--show", file).Output()
	if err != nil {
		return "", fmt.Errorf("losetup %s: %w", file, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// dropCache drops the target's cached pages: the backing file's, and the loop device's own.
func dropCache(t target) error {
	for _, p := range []string{t.file, t.path} {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		if p != t.file {
			err = unix.IoctlSetInt(int(f.Fd()), unix.BLKFLSBUF, 0)
		} else {
			err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("dropping the cache of %s: %w", p, err)
		}
	}
	return nil
}

func wall(t timing) time.Duration { return t.wall }
func cpu(t timing) time.Duration  { return t.cpu }

func median(ts []timing, f func(timing) time.Duration) time.Duration {
	ds := make([]time.Duration, len(ts))
	for i, t := range ts {
		ds[i] = f(t)
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func minimum(ts []timing, f func(timing) time.Duration) time.Duration {
	m := f(ts[0])
	for _, t := range ts[1:] {
		m = min(m, f(t))
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
