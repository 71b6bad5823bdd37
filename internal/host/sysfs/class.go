package sysfs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The kernel's current view of one disk, read under /sys/class/block (the partitioner's
// view, read fresh before every write). A fixture host without /sys/class/block answers
// "not there" (ok false, or an error), and callers keep the inventory's values.

// KernelPartition is a partition as the kernel has it, in 512-byte units.
type KernelPartition struct {
	Start, Size int64
	// Dev is the partition's major:minor.
	Dev string
}

// ClassInt reads /sys/class/block/<name>/<file> as an integer; ok is false when it is not
// there or not a number.
func (h Host) ClassInt(name, file string) (int64, bool) {
	if name == "" || strings.Contains(name, "/") {
		return 0, false
	}
	v, err := readInt(h.path("sys", "class", "block", name, file))
	return v, err == nil
}

// KernelPartitions reads /sys/class/block/<name>/<part>/{partition,start,size,dev}, by
// partition number.
func (h Host) KernelPartitions(name string) (map[int]KernelPartition, error) {
	if name == "" || strings.ContainsAny(name, "/") {
		return nil, fmt.Errorf("bad device name %q", name)
	}
	dir := h.path("sys", "class", "block", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[int]KernelPartition{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), name) {
			continue
		}
		num, err := readInt(h.path("sys", "class", "block", name, e.Name(), "partition"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var p KernelPartition
		if p.Start, err = readInt(h.path("sys", "class", "block", name, e.Name(), "start")); err != nil {
			return nil, err
		}
		if p.Size, err = readInt(h.path("sys", "class", "block", name, e.Name(), "size")); err != nil {
			return nil, err
		}
		dev, _ := os.ReadFile(h.path("sys", "class", "block", name, e.Name(), "dev"))
		p.Dev = strings.TrimSpace(string(dev))
		out[int(num)] = p
	}
	return out, nil
}

// ClassHolders lists /sys/class/block/<name>[/<part>]/holders: the devices stacked on the
// disk or on one of its partitions. Nil, without error, when the directory is not there.
func (h Host) ClassHolders(name string, part ...string) ([]string, error) {
	dir := h.path(append([]string{"sys", "class", "block", name}, append(part, "holders")...)...)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the holders of %s: %w", name, err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// DeviceMapper finds the device-mapper device named name (/sys/class/block/dm-N/dm/name) and
// returns its kernel name ("dm-2"); an error wrapping os.ErrNotExist when none has that name.
func (h Host) DeviceMapper(name string) (string, error) {
	dir := h.path("sys", "class", "block")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "dm-") {
			continue
		}
		data, err := readAttr(h.path("sys", "class", "block", e.Name(), "dm", "name"))
		if errors.Is(err, os.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(string(data)) == name {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("no device-mapper device named %q under %s: %w", name, dir, os.ErrNotExist)
}
