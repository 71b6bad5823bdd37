package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Udev returns the udev database record of a block device, or an empty record when udev
// has none (a host without udev, or a device udev has not processed yet).
func (h Host) Udev(major, minor uint32) (UdevRecord, error) {
	file := h.path("run", "udev", "data", fmt.Sprintf("b%d:%d", major, minor))
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return UdevRecord{Properties: map[string]string{}}, nil
	}
	if err != nil {
		return UdevRecord{Properties: map[string]string{}}, err
	}
	rec, err := ParseUdevData(data)
	if err != nil {
		return rec, fmt.Errorf("run/udev/data/b%d:%d: %w", major, minor, err)
	}
	return rec, nil
}

// ByIDLinks maps kernel device names to their /dev/disk/by-id link names, read from
// <root>/dev/disk/by-id. Partition links (-partN) are left out.
func (h Host) ByIDLinks() (map[string][]string, error) {
	dir := h.path("dev", "disk", "by-id")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	links := map[string][]string{}
	for _, e := range entries {
		if strings.Contains(e.Name(), "-part") {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // not a symlink: not a udev link
		}
		dev := filepath.Base(target)
		links[dev] = append(links[dev], e.Name())
	}
	for _, l := range links {
		sort.Strings(l)
	}
	return links, nil
}

// StablePath picks the /dev/disk/by-id path Prism uses to name a device. Human-readable
// model_serial links come first (nvme-MODEL_SERIAL, ata-, scsi-), then wwn-, then EUI/NGUID
// links; ties break alphabetically, so the choice is stable across restarts.
func StablePath(byIDNames []string) string {
	best, bestRank := "", 99
	for _, n := range byIDNames {
		r := linkRank(n)
		if r < bestRank || (r == bestRank && n < best) {
			best, bestRank = n, r
		}
	}
	if best == "" {
		return ""
	}
	return "/dev/disk/by-id/" + best
}

func linkRank(name string) int {
	switch {
	case strings.Contains(name, "-part"):
		return 98
	case strings.HasPrefix(name, "nvme-eui."), strings.HasPrefix(name, "nvme-nvme."), strings.HasPrefix(name, "nvme-uuid."):
		return 3
	case strings.HasPrefix(name, "wwn-"):
		return 2
	case strings.HasPrefix(name, "nvme-"), strings.HasPrefix(name, "ata-"), strings.HasPrefix(name, "scsi-"), strings.HasPrefix(name, "virtio-"), strings.HasPrefix(name, "usb-"):
		return 1
	default:
		return 4
	}
}
