package inventory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// libblkidSignatures asks libblkid, in one `wipefs --no-act --json` for every disk that
// opened (files[i] != nil), what it finds on each: the formats Prism's own detector does not
// know (f2fs, squashfs, erofs, bcache, ...) must make a device ineligible too. wipefs stops at
// the first disk it cannot probe and names it ("wipefs: error: /dev/sdX: probing
// initialization failed"): that disk gets the error and the others are asked again, without
// it. When a failure names no disk of the call, each disk is asked alone, so that one
// unreadable disk never hides the others. A disk that did not open is not asked: Prism's own
// read already failed on it, and that failure makes it ineligible; nor is a disk whose
// eligibility sysfs settles (contentIrrelevant). A disk on which Prism's detector found
// something is asked all the same: libblkid's failure on it is a read problem (Readable),
// which no wipe grant overrides, where the detector's finding (NoSignatures) is one a grant
// does override; and its signature list, which a grant's author reads, names all both found.
func libblkidSignatures(ctx context.Context, exec hostexec.Executor, host sysfs.Host, disks []sysfs.BlockDevice, files []*os.File) ([][]blkid.Signature, []error) {
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
		if (files == nil || files[i] != nil) && !contentIrrelevant(disks[i]) {
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

// contentIrrelevant reports a disk whose eligibility sysfs already settles whatever is on it:
// read-only, removable, below the minimum size, or held by a stacked device, none of which a
// wipe grant overrides. What libblkid would find on it changes nothing (Prism's own detector
// still lists what it finds), and probing a blank disk costs libblkid about fifty reads, so
// such disks are not asked. A partitioned disk is asked: a wipe grant overrides NoPartitions,
// so whether libblkid can read it (Readable, which no grant overrides) must be known. A
// missing /dev/disk/by-id link does not count: udev may publish one before the next inventory.
func contentIrrelevant(d sysfs.BlockDevice) bool {
	return d.ReadOnly || d.Removable || d.SizeBytes < MinimumDeviceBytes || len(d.Holders) > 0
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
