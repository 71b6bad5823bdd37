package provision

import (
	"slices"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// kernelNumbers parses the kernel's partition names of dev (nvme0n1p3, sda3, loop0p3) into
// numbers; names that do not follow the kernel's rule are returned apart.
func kernelNumbers(dev prismv1.Device) (map[int]bool, []string) {
	nums := map[int]bool{}
	var unknown []string
	for _, name := range dev.Partitions {
		n, ok := parsePartitionName(dev.Name, name)
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		nums[n] = true
	}
	return nums, unknown
}

// partitionName is the kernel's name for partition n of disk: disk_name() in the kernel's
// block/partitions/core.c adds "p" when the disk name ends in a digit.
func partitionName(disk string, n int) string {
	if disk != "" && disk[len(disk)-1] >= '0' && disk[len(disk)-1] <= '9' {
		return disk + "p" + strconv.Itoa(n)
	}
	return disk + strconv.Itoa(n)
}

func parsePartitionName(disk, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, disk)
	if !ok || disk == "" {
		return 0, false
	}
	if d := disk[len(disk)-1]; d >= '0' && d <= '9' {
		if rest, ok = strings.CutPrefix(rest, "p"); !ok {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

func sortedKeys(m map[int]bool) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func maxKey(m map[int]bool) int {
	n := 0
	for k := range m {
		n = max(n, k)
	}
	return n
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
