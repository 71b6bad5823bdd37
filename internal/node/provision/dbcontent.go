package provision

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/lvm"
)

// maxDBFound is the API's limit on PartitionStatus.DBFound.
const maxDBFound = 256

// dbContents fills in what each DB slot holds (PartitionStatus.DBContent): its volume's
// content when the volume is Ready (an OSD's DB label is on the LV, the partition only holds
// Prism's PV), else what obs found in the partition's range. A slot whose content could not
// be read is left without one, which the operator takes as in use: it never hands a slot it
// has not seen empty to another data device.
func (r Runner) dbContents(ctx context.Context, fd prismv1.FastDevicePlan, obs Observation, parts []prismv1.PartitionStatus) {
	for _, s := range fd.Slots {
		i := slices.IndexFunc(parts, func(p prismv1.PartitionStatus) bool { return p.Number == s.Partition.Number })
		if i < 0 {
			continue
		}
		var found []string
		if v := parts[i].Volume; v != nil && v.State == prismv1.DBVolumeReady {
			c, err := r.volumeContent(ctx, fd.StablePath, s.Index)
			if err != nil {
				logf.FromContext(ctx).Info("Could not read a DB slot's volume; the slot counts as in use", "device", fd.StablePath, "partition", s.Partition.Number, "error", err.Error())
				continue
			}
			found = c.Found
		} else if c, ok := obs.Content[int(s.Partition.Number)]; ok {
			found = c.Found
		} else {
			continue
		}
		parts[i].DBContent, parts[i].DBFound = prismv1.DBSlotEmpty, ""
		if len(found) > 0 {
			parts[i].DBContent, parts[i].DBFound = prismv1.DBSlotInUse, prismv1.Truncate(strings.Join(found, ", "), maxDBFound)
		}
	}
}

// volumeContent probes a DB slot's logical volume whole: libblkid and Prism's detector. The
// volume is opened as the kernel names it (/dev/dm-N, found by its device-mapper name under
// /sys/class/block), not by /dev/<vg>/<lv>: that link is udev's or LVM's, and was seen gone
// once ceph-volume had run in Rook's prepare pod (the e2e chain, 2026-11-26). Its bytes are
// not asked to be zeros: an OSD's DB removed with ceph-volume's zap leaves RocksDB's old blocks
// behind its wiped head.
func (r Runner) volumeContent(ctx context.Context, fast string, index int32) (Content, error) {
	vg, lv, err := prismv1.DBVolumeNames(fast, index)
	if err != nil {
		return Content{}, err
	}
	host := r.sysfs()
	dm, err := host.DeviceMapper(lvm.DMName(vg, lv))
	if err != nil {
		return Content{}, err
	}
	path := host.DevicePath(dm)
	f, err := os.Open(path)
	if err != nil {
		return Content{}, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return Content{}, fmt.Errorf("size of %s: %w", path, err)
	}
	return r.content(ctx, f, path, 0, size)
}
