package inventory

import (
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// MinimumDeviceBytes is the smallest device Prism uses: ceph-volume refuses OSD devices below 5 GB.
const MinimumDeviceBytes = 5 * 1000 * 1000 * 1000

// Filter is a named eligibility check. It returns "" when the device passes, else why not.
type Filter struct {
	Name  string
	Check func(d *prismv1.Device, problems []string) string
}

// Filters are applied in order; every failing filter is reported, not only the first.
var Filters = []Filter{
	{prismv1.FilterReadable, func(_ *prismv1.Device, problems []string) string {
		if len(problems) == 0 {
			return ""
		}
		return "could not read the device completely, so it cannot be proven empty: " + strings.Join(problems, "; ")
	}},
	{prismv1.FilterNotReadOnly, func(d *prismv1.Device, _ []string) string {
		if d.ReadOnly {
			return "the kernel marks the device read-only"
		}
		return ""
	}},
	{prismv1.FilterNotRemovable, func(d *prismv1.Device, _ []string) string {
		if d.Removable {
			return "removable media"
		}
		return ""
	}},
	{prismv1.FilterMinimumSize, func(d *prismv1.Device, _ []string) string {
		if d.SizeBytes < MinimumDeviceBytes {
			return fmt.Sprintf("%d bytes is below the 5 GB ceph-volume minimum", d.SizeBytes)
		}
		return ""
	}},
	{prismv1.FilterNoPartitions, func(d *prismv1.Device, _ []string) string {
		if len(d.Partitions) > 0 {
			return "has partitions: " + strings.Join(d.Partitions, ", ")
		}
		return ""
	}},
	{prismv1.FilterNoHolders, func(d *prismv1.Device, _ []string) string {
		if len(d.Holders) > 0 {
			return "in use by " + strings.Join(d.Holders, ", ")
		}
		return ""
	}},
	{prismv1.FilterNoSignatures, func(d *prismv1.Device, _ []string) string {
		if len(d.Signatures) == 0 {
			return ""
		}
		var s []string
		for _, sig := range d.Signatures {
			s = append(s, fmt.Sprintf("%s (%s at offset %d)", sig.Name, sig.Kind, sig.OffsetBytes))
		}
		return "holds data: " + strings.Join(s, ", ")
	}},
	{prismv1.FilterZeroHeadAndTail, func(d *prismv1.Device, _ []string) string {
		if d.NonZeroAtBytes == nil {
			return ""
		}
		return fmt.Sprintf("non-zero bytes at offset %d, in the first or last MiB, that no known format explains: the device may hold data "+
			"(plain dm-crypt, raw application data, a file system under a wiped table); clear it (blkdiscard, or ceph-volume lvm zap --destroy) "+
			"or list it in the policy's allowWipe", *d.NonZeroAtBytes)
	}},
	{prismv1.FilterHasStablePath, func(d *prismv1.Device, _ []string) string {
		if d.StablePath == "" {
			return "udev published no /dev/disk/by-id link, so the device cannot be named across reboots"
		}
		return ""
	}},
}

// Evaluate runs every filter and returns the device's eligibility.
func Evaluate(d *prismv1.Device, problems []string) prismv1.Eligibility {
	e := prismv1.Eligibility{Eligible: true}
	for _, f := range Filters {
		if msg := f.Check(d, problems); msg != "" {
			e.Eligible = false
			e.Reasons = append(e.Reasons, prismv1.EligibilityReason{Filter: f.Name, Message: msg})
		}
	}
	return e
}
