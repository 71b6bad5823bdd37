package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The demo plays the kernel's sysfs and udev for the simulated nodes' loop-backed fast
// devices, whose host roots are fixture trees: when this machine's kernel has a partition of a
// loop device (the agent's partx --update made it), the demo
//   - mirrors it into the host root's /sys/block/<disk>/<part>/{partition,start,size,dev}, where
//     the agent's inventory lists a disk's partitions. The mirror lags the kernel by up to one
//     poll, which real sysfs does not; so the host root has no /sys/class/block, and the agent
//     checks its partitions against the partition table alone (provision.Runner's fallback
//     when it cannot read the kernel's view) instead of against a mirror that is not there yet;
//   - makes the partition's device node in the host root's /dev, and the
//     /dev/disk/by-id/<disk>-partN link udev's 60-persistent-storage.rules would make;
//   - tells the node's casadm emulator the partition exists.
// The agent waits for that link before it starts a cache on the partition, as on a real node
// it waits for udev.

// partitionName is the kernel's name of partition n of disk (nvme0n1p3, sda3).
func partitionName(disk string, n int) string {
	if last := disk[len(disk)-1]; last >= '0' && last <= '9' {
		return disk + "p" + strconv.Itoa(n)
	}
	return disk + strconv.Itoa(n)
}

// kernelPartition is one partition of a loop device as this machine's kernel has it.
type kernelPartition struct {
	number       int
	start, size  int64 // 512-byte sectors
	major, minor uint32
}

func readKernelPartition(loopName, kp string) (kernelPartition, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(kp, loopName+"p"))
	if err != nil {
		return kernelPartition{}, fmt.Errorf("partition %s of %s: %w", kp, loopName, err)
	}
	p := kernelPartition{number: n}
	dir := filepath.Join("/sys/class/block", kp)
	if p.start, err = readSysfsInt(filepath.Join(dir, "start")); err != nil {
		return p, err
	}
	if p.size, err = readSysfsInt(filepath.Join(dir, "size")); err != nil {
		return p, err
	}
	p.major, p.minor, err = devNumbers(kp)
	return p, err
}

// syncPartitions mirrors the kernel's partitions of each loop into its host root; registered
// remembers the partition links already given to the emulator. It returns what it made.
func syncPartitions(ctx context.Context, loops []*loopDevice, hosts map[string]emulatedHost, registered map[string]bool) ([]string, error) {
	var made []string
	for _, l := range loops {
		links, err := byIDLinks(l.root)
		if err != nil {
			return made, err
		}
		disk, ok := links[l.name]
		if !ok {
			return made, fmt.Errorf("%s/%s has no /dev/disk/by-id link", l.node, l.name)
		}
		loopName := filepath.Base(l.loop)
		sysDisk := filepath.Join(l.root, "sys", "block", l.name)
		present := map[string]bool{}
		for _, kp := range kernelPartitions(loopName) {
			p, err := readKernelPartition(loopName, kp)
			if err != nil {
				return made, err
			}
			part := partitionName(l.name, p.number)
			present[part] = true
			if err := writeSysfsPartition(filepath.Join(sysDisk, part), p); err != nil {
				return made, err
			}
			node := filepath.Join(l.root, "dev", part)
			if !sameDevice(node, p.major, p.minor) {
				// New, or the kernel renumbered it (partx --delete and --update again).
				if err := mknodBlock(node, p.major, p.minor); err != nil {
					return made, err
				}
			}
			link := disk + "-part" + strconv.Itoa(p.number)
			if h, ok := hosts[l.node]; ok && !registered[l.node+link] {
				if err := h.addDevice(ctx, link, "/dev/"+part, p.size*512); err != nil {
					return made, err
				}
				registered[l.node+link] = true
			}
			if _, err := os.Lstat(filepath.Join(l.root, link)); errors.Is(err, os.ErrNotExist) {
				if err := os.Symlink(filepath.Join("..", "..", part), filepath.Join(l.root, link)); err != nil {
					return made, err
				}
				made = append(made, l.node+":"+link)
			}
		}
		// Partitions the kernel no longer has leave sysfs (their node and link stay, as a
		// udev that missed the event would leave them).
		entries, _ := os.ReadDir(sysDisk)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), l.name) && !present[e.Name()] {
				_ = os.RemoveAll(filepath.Join(sysDisk, e.Name()))
			}
		}
	}
	return made, nil
}

func writeSysfsPartition(dir string, p kernelPartition) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, v := range map[string]string{
		"partition": strconv.Itoa(p.number), "start": strconv.FormatInt(p.start, 10), "size": strconv.FormatInt(p.size, 10),
		"dev": fmt.Sprintf("%d:%d", p.major, p.minor),
	} {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && string(old) == v+"\n" {
			continue
		}
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// sameDevice says whether path is the block device major:minor.
func sameDevice(path string, major, minor uint32) bool {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Rdev == mkdev(major, minor)
}

// runUdev syncs partitions every interval until ctx ends.
func runUdev(ctx context.Context, loops []*loopDevice, hosts map[string]emulatedHost, interval time.Duration) {
	registered := map[string]bool{}
	for {
		if made, err := syncPartitions(ctx, loops, hosts, registered); err != nil {
			if ctx.Err() == nil {
				logf("simulated udev: %v", err)
			}
		} else {
			for _, m := range made {
				logf("simulated udev: %s", m)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

func readSysfsInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}
