package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// loopDevice is a simulated node's fast device backed by a real loop device: the agent
// partitions it (its own GPT writer, the real wipefs, blkid and partx), so the plan's cache partition really exists.
type loopDevice struct {
	node, name string // simulated node and kernel name in its host root (nvme0n1)
	root       string // the node's host root
	loop       string // /dev/loopN
	file       string // sparse backing file
}

// loopTools are what attaching and partitioning a loop device needs on this machine.
var loopTools = []string{"losetup", "partx", "wipefs", "blkid", "sfdisk"}

// canUseLoops says why this machine cannot back fast devices with loop devices ("" if it can).
func canUseLoops() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	for _, t := range loopTools {
		if _, err := exec.LookPath(t); err != nil {
			return t + " is not installed"
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return "no /dev/loop-control"
	}
	return ""
}

// attachFastDevices backs every fast device of the simulated nodes (the fixtures' expected
// tier Fast) with a sparse file of the device's size on a loop device, and makes the device
// node in the host root that loop device's block node. The returned function detaches them.
func attachFastDevices(ctx context.Context, nodes []fixturehost.Node, roots map[string]string, dir string) ([]*loopDevice, func(), error) {
	var loops []*loopDevice
	detach := func() {
		for _, l := range loops {
			l.detach()
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "disks"), 0o755); err != nil {
		return nil, detach, err
	}
	for _, n := range nodes {
		for _, d := range n.Devices {
			if d.Expect.Tier != "Fast" {
				continue
			}
			l := &loopDevice{node: n.Name, name: d.Name, root: roots[n.Name], file: filepath.Join(dir, "disks", n.Name+"-"+d.Name+".img")}
			if err := l.attach(ctx, d); err != nil {
				detach()
				return nil, func() {}, fmt.Errorf("%s/%s: %w", n.Name, d.Name, err)
			}
			loops = append(loops, l)
		}
	}
	return loops, detach, nil
}

func (l *loopDevice) attach(ctx context.Context, d fixturehost.Device) error {
	// A demo that was killed left its loops on this file: detach them first.
	if out, err := (hostexec.Local{Timeout: 10 * time.Second}).Run(ctx, []string{"losetup", "--list", "--noheadings", "--output", "NAME", "--associated", l.file}, nil); err == nil {
		for _, stale := range strings.Fields(string(out)) {
			(&loopDevice{loop: stale}).detach()
		}
	}
	f, err := os.Create(l.file)
	if err != nil {
		return err
	}
	err = f.Truncate(d.SizeBytes) // sparse: nothing is allocated until written
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	argv := []string{"losetup", "--find", "--show"}
	if d.LogicalBlockSize > 0 && d.LogicalBlockSize != 512 {
		argv = append(argv, "--sector-size", strconv.FormatInt(d.LogicalBlockSize, 10))
	}
	out, err := hostexec.Local{Timeout: 30 * time.Second}.Run(ctx, append(argv, l.file), nil)
	if err != nil {
		return err
	}
	l.loop = strings.TrimSpace(string(out))
	if !strings.HasPrefix(l.loop, "/dev/loop") {
		return fmt.Errorf("losetup printed %q", l.loop)
	}
	// A loop without partscan keeps partitions added with partx after losetup -d: a reused
	// loop can come with its last user's partitions, which would point into our file.
	if len(kernelPartitions(filepath.Base(l.loop))) > 0 {
		_, _ = hostexec.Local{Timeout: 30 * time.Second}.Run(ctx, []string{"partx", "--delete", l.loop}, nil)
		if stale := kernelPartitions(filepath.Base(l.loop)); len(stale) > 0 {
			return fmt.Errorf("%s came with partitions %v that partx cannot remove", l.loop, stale)
		}
	}
	major, minor, err := devNumbers(filepath.Base(l.loop))
	if err != nil {
		return err
	}
	return mknodBlock(filepath.Join(l.root, "dev", l.name), major, minor)
}

// detach removes the loop's kernel partitions and the loop device; the backing file stays
// with the demo's directory.
func (l *loopDevice) detach() {
	if l.loop == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := hostexec.Local{Timeout: 10 * time.Second}
	_, _ = run.Run(ctx, []string{"partx", "--delete", l.loop}, nil) // exits 1 when there are none
	for attempt := 0; attempt < 10; attempt++ {
		if _, err := run.Run(ctx, []string{"losetup", "-d", l.loop}, nil); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if l.file != "" {
		_ = os.Remove(l.file)
	}
	l.loop = ""
}

// kernelPartitions lists the partitions the kernel has for a disk of this machine (loopNpM).
func kernelPartitions(name string) []string {
	entries, err := os.ReadDir(filepath.Join("/sys/class/block", name))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("/sys/class/block", name, e.Name(), "partition")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// devNumbers reads a block device's major:minor from this machine's sysfs.
func devNumbers(name string) (uint32, uint32, error) {
	data, err := os.ReadFile(filepath.Join("/sys/class/block", name, "dev"))
	if err != nil {
		return 0, 0, err
	}
	ma, mi, ok := strings.Cut(strings.TrimSpace(string(data)), ":")
	major, err1 := strconv.ParseUint(ma, 10, 32)
	minor, err2 := strconv.ParseUint(mi, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/sys/class/block/%s/dev: %q is not major:minor", name, data)
	}
	return uint32(major), uint32(minor), nil
}

// mknodBlock replaces path with a block device node (what devtmpfs shows on a real host).
func mknodBlock(path string, major, minor uint32) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syscall.Mknod(path, syscall.S_IFBLK|0o600, int(mkdev(major, minor)))
}

// mkdev is Linux's dev_t encoding (glibc's makedev): minor's low 8 bits, major, minor's high bits.
func mkdev(major, minor uint32) uint64 {
	return uint64(minor&0xff) | uint64(major&0xfff)<<8 | uint64(minor&^0xff)<<12 | uint64(major&^0xfff)<<32
}
