package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Identity is what the kernel reports of a block device itself, as opposed to the name it
// gave it: a kernel name (/dev/loop3, /dev/nvme1n1) is handed to the next device that
// appears once the last one is gone, and a /dev/disk/by-id name is only as unique as the
// serials behind it.
type Identity struct {
	// WWID is the device's world-wide identifier: an NVMe namespace's EUI-64, NGUID or
	// UUID (its wwid attribute: "eui.…", "nvme.…"), a SCSI disk's VPD page 83 name ("naa.…").
	WWID string
	// Serial is the serial number the device reports to the kernel (an NVMe controller's,
	// a SCSI disk's VPD page 80, a virtio disk's).
	Serial string
	// BackingFile is a loop device's backing file, as the kernel has it.
	BackingFile string
	// DiskSeq is the kernel's sequence number for this disk (Linux 5.15 on), new for every
	// device the kernel creates and every medium a loop device is bound to, so a reused name
	// never carries the same number; 0 when the kernel has none.
	DiskSeq uint64
}

// Empty says whether the kernel reported nothing that identifies the device.
func (id Identity) Empty() bool { return id == Identity{} }

// API is the identity as the StorageNode reports it (nil for nothing).
func (id Identity) API() *prismv1.DeviceIdentity {
	if id.Empty() {
		return nil
	}
	return &prismv1.DeviceIdentity{WWID: id.WWID, Serial: id.Serial, BackingFile: id.BackingFile, DiskSeq: int64(min(id.DiskSeq, math.MaxInt64))}
}

// IdentityOf reads the identity of the block device major:minor through
// /sys/dev/block/M:m, the device that number names now. Attributes a device lacks are left
// empty; one that exists but cannot be read is an error (the device cannot be told apart).
func (h Host) IdentityOf(major, minor uint32) (Identity, error) {
	dir := h.path("sys", "dev", "block", fmt.Sprintf("%d:%d", major, minor))
	return readIdentity(dir)
}

// IdentityByName reads the identity of the whole disk name under /sys/class/block.
func (h Host) IdentityByName(name string) (Identity, error) {
	if name == "" || strings.Contains(name, "/") {
		return Identity{}, fmt.Errorf("bad device name %q", name)
	}
	return readIdentity(h.path("sys", "class", "block", name))
}

func readIdentity(dir string) (Identity, error) {
	var id Identity
	var err error
	read := func(attrs ...string) string {
		for _, a := range attrs {
			b, e := readAttr(filepath.Join(dir, a))
			if errors.Is(e, fs.ErrNotExist) {
				continue
			}
			if e != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w", a, unwrapPathError(e)))
				return ""
			}
			if v := strings.TrimSpace(string(b)); v != "" {
				return v
			}
		}
		return ""
	}
	if _, e := readAttr(filepath.Join(dir, "dev")); e != nil {
		return id, fmt.Errorf("%s: %w", dir, unwrapPathError(e))
	}
	id.WWID = read("wwid", "device/wwid")
	id.Serial = read("device/serial", "serial")
	id.BackingFile = read("loop/backing_file")
	if s := read("diskseq"); s != "" {
		n, e := strconv.ParseUint(s, 10, 64)
		if e != nil {
			err = errors.Join(err, fmt.Errorf("diskseq: %q is not a number", s))
		}
		id.DiskSeq = n
	}
	return id, err
}

// DiskOf is the device number ("major:minor") of the whole disk the partition major:minor
// belongs to now: the parent of /sys/dev/block/M:m. An error when the number names no
// partition.
func (h Host) DiskOf(major, minor uint32) (string, error) {
	dir, err := filepath.EvalSymlinks(h.path("sys", "dev", "block", fmt.Sprintf("%d:%d", major, minor)))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err != nil {
		return "", fmt.Errorf("%d:%d is not a partition: %w", major, minor, err)
	}
	b, err := readAttr(filepath.Join(filepath.Dir(dir), "dev"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
