package inventory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// libblkidSignatures asks libblkid, in one `wipefs --no-act --json`, what it finds on every
// disk whose eligibility its answer can still change (needsLibblkid): the formats Prism's own
// detector does not know (f2fs, squashfs, erofs, bcache, ...) must make a device ineligible
// too. wipefs stops at the first disk it cannot probe and names it ("wipefs: error:
// /dev/sdX: probing initialization failed"): that disk gets the error and the others are
// asked again, without it. When a failure names no disk of the call, each disk is asked
// alone, so that one unreadable disk never hides the others. found[i] is what Prism's
// detector returned for disks[i].
func libblkidSignatures(ctx context.Context, exec hostexec.Executor, host sysfs.Host, disks []sysfs.BlockDevice, found []signatures) ([][]blkid.Signature, []error) {
	sigs, errs := make([][]blkid.Signature, len(disks)), make([]error, len(disks))
	if exec == nil || len(disks) == 0 {
		return sigs, errs
	}
	probe := func(idx []int) error {
		paths := make([]string, len(idx))
		for j, i := range idx {
			paths[j] = host.DevicePath(disks[i].Name)
		}
		argv, err := blkid.WipefsArgv(paths...)
		if err != nil {
			return err
		}
		out, err := exec.Run(ctx, argv, nil)
		if err != nil {
			return err
		}
		found, err := blkid.ParseWipefs(out)
		if err != nil {
			return err
		}
		got := make([][]blkid.Signature, len(idx))
		for _, s := range found {
			k := slices.IndexFunc(idx, func(i int) bool { return filepath.Base(host.DevicePath(disks[i].Name)) == s.Device })
			if k < 0 {
				return fmt.Errorf("wipefs names a device %q it was not asked about", s.Device)
			}
			got[k] = append(got[k], s)
		}
		for k, i := range idx {
			sigs[i] = got[k]
		}
		return nil
	}
	var todo []int
	for i := range disks {
		if needsLibblkid(disks[i], found[i]) {
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		err := probe(todo)
		if err == nil {
			return sigs, errs
		}
		named := slices.IndexFunc(todo, func(i int) bool { return strings.Contains(err.Error(), host.DevicePath(disks[i].Name)+":") })
		if named < 0 || ctx.Err() != nil {
			break
		}
		errs[todo[named]] = err
		todo = slices.Delete(todo, named, named+1)
	}
	for _, i := range todo {
		errs[i] = probe([]int{i})
	}
	return sigs, errs
}

// needsLibblkid reports whether libblkid's answer can change a disk's eligibility. It cannot
// when sysfs already settles it (contentIrrelevant) nor when Prism's detector failed to read
// the disk or found a signature on it: the disk is ineligible whatever libblkid finds
// (Evaluate refuses a device with any signature or a read problem), so it is not asked. A
// probe of a blank disk costs libblkid about fifty reads; one of a disk with data is skipped
// at no loss but the libblkid-only names in that disk's signature list. The write path asks
// libblkid again itself before any write (internal/node/provision, observe).
func needsLibblkid(d sysfs.BlockDevice, found signatures) bool {
	return found.err == nil && len(found.found) == 0 && !contentIrrelevant(d)
}

// contentIrrelevant reports a disk whose eligibility sysfs already settles: read-only,
// removable, below the minimum size, partitioned or held by a stacked device. A missing
// /dev/disk/by-id link does not count: udev may publish one before the next inventory.
func contentIrrelevant(d sysfs.BlockDevice) bool {
	return d.ReadOnly || d.Removable || d.SizeBytes < MinimumDeviceBytes || len(d.Partitions) > 0 || len(d.Holders) > 0
}

// mergeLibblkid adds to d what libblkid found that Prism's detector did not (same name and
// offset), within the API's limit on the list.
func mergeLibblkid(d *prismv1.Device, found []blkid.Signature) {
	gpt := slices.ContainsFunc(d.Signatures, func(o prismv1.DeviceSignature) bool { return o.Name == "gpt" })
	for _, s := range found {
		if s.Type == "PMBR" && gpt {
			continue // a GPT's protective MBR: part of the GPT already listed, as blkid -p reports it
		}
		dup := slices.ContainsFunc(d.Signatures, func(o prismv1.DeviceSignature) bool { return o.Name == s.Type && o.OffsetBytes == s.Offset })
		if dup || len(d.Signatures) >= maxSignatures {
			continue
		}
		d.Signatures = append(d.Signatures, prismv1.DeviceSignature{Kind: blkid.Kind(s.Type), Name: s.Type, OffsetBytes: s.Offset})
	}
}

// maxSignatures is the API's limit on a device's signatures list.
const maxSignatures = 16
