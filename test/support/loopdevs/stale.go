// Package loopdevs holds what every root test on loop devices needs when it takes a loop
// device another user had: the kernel partitions that user left behind.
package loopdevs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// KernelPartitions lists the partitions the kernel has for a disk (sysfs).
func KernelPartitions(name string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join("/sys/class/block", name))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join("/sys/class/block", name, e.Name(), "partition")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// DropStalePartitions removes the kernel partitions a reused loop device came with and returns
// the ones it found. On a loop device without partscan, partitions added with partx outlive
// losetup -d, and they would point into the new backing file. partx --delete fails while
// another program has a partition open for a moment (a blkid or ceph-volume scanning every
// block device), so it is tried again for a few seconds.
func DropStalePartitions(ctx context.Context, partx, dev string) (stale []string, err error) {
	name := filepath.Base(dev)
	stale, err = KernelPartitions(name)
	if err != nil || len(stale) == 0 {
		return stale, err
	}
	var last []byte
	for attempt := 0; attempt < 25; attempt++ {
		last, _ = exec.CommandContext(ctx, partx, "--delete", dev).CombinedOutput()
		left, err := KernelPartitions(name)
		if err != nil {
			return stale, err
		}
		if len(left) == 0 {
			return stale, nil
		}
		select {
		case <-ctx.Done():
			return stale, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	left, _ := KernelPartitions(name)
	return stale, fmt.Errorf("%s: cannot remove stale kernel partitions %v after 5 s: partx --delete: %s", dev, left, last)
}

// DropDetachedLoopPartitions removes the kernel partitions left on loop devices that have no
// backing file any more (their users detached them with partitions still registered), and
// returns the devices it cleaned. Such partitions point at nothing, so dropping them loses
// nothing; ceph-volume 16.2's device scan fails on them (disk.get_devices lists a partition
// whose detached loop it skipped: UnboundLocalError on device_slaves).
func DropDetachedLoopPartitions(ctx context.Context, partx string) ([]string, error) {
	disks, err := filepath.Glob("/sys/block/loop*")
	if err != nil {
		return nil, err
	}
	var cleaned []string
	for _, d := range disks {
		if _, err := os.Stat(filepath.Join(d, "loop")); err == nil {
			continue // attached: its partitions are its user's
		}
		stale, err := DropStalePartitions(ctx, partx, "/dev/"+filepath.Base(d))
		if err != nil {
			return cleaned, err
		}
		if len(stale) > 0 {
			cleaned = append(cleaned, filepath.Base(d))
		}
	}
	return cleaned, nil
}
