package provision

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// IdentityError says the device open under a planned device's name is not the device the
// inventory read or the plan was made for. The partitions are then Refused: nothing is
// written until an inventory and a plan agree with the device again.
type IdentityError struct{ msg string }

func (e *IdentityError) Error() string { return e.msg }

// checkIdentity compares the device open as f (a block device; under allowFiles a file whose
// kernel attributes the fixture host keeps under /sys/class/block/<name>) with the
// inventory's record of it (its identity and diskseq) and with the plan's identity. The kernel
// hands a free name to the next device that appears (a loop device bound to another file, an
// NVMe namespace after a hot swap) and a by-id name is only as unique as the serial behind it:
// only what the device reports of itself tells them apart. A host root without
// /sys/class/block (the demo's fixture nodes) has no kernel attributes to read.
func (r Runner) checkIdentity(f statter, path string, dev prismv1.Device, plan *prismv1.DeviceIdentity) error {
	record, planned := dev.Identity, plan
	if (record == nil && planned == nil) || !r.hasClassBlock() {
		return nil
	}
	read, err := r.identityNow(f, dev.Name)
	if err != nil {
		return fmt.Errorf("reading the identity of %s (it cannot be told apart from another device): %w", path, err)
	}
	now := read.API()
	if d := record.Differs(now); d != "" {
		return &IdentityError{fmt.Sprintf("%s is not the device the inventory read: it reports %s (the inventory read %s); waiting for the next inventory", path, d, record)}
	}
	if d := planned.Differs(now.Stable()); d != "" {
		return &IdentityError{fmt.Sprintf("%s is not the device this plan was made for: it reports %s (planned: %s); Prism writes no other device under the plan's name (if the drive was replaced on purpose, follow docs/runbooks/replace-fast-device.md)", path, d, planned)}
	}
	return nil
}

// statter is an open device: *os.File, or a test's fake.
type statter interface {
	Stat() (os.FileInfo, error)
}

// identityNow reads the identity of the device open as f: through /sys/dev/block/M:m for a
// block device (the number the open file has, not the name, which may have moved on), else
// (allowFiles) under /sys/class/block/<name>.
func (r Runner) identityNow(f statter, name string) (sysfs.Identity, error) {
	fi, err := f.Stat()
	if err != nil {
		return sysfs.Identity{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
		return r.sysfs().IdentityOf(unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
	}
	if !r.allowFiles {
		return sysfs.Identity{}, fmt.Errorf("%s is not a block device", fi.Name())
	}
	return r.sysfs().IdentityByName(name)
}

// ambiguous says why the inventory does not name one device by stablePath ("" when it does):
// two records with that name, or another record with the same identity. udev gives two drives
// with the same model and serial (cloned serials: some USB bridges, virtual disks, OEM
// firmware) the same by-id link, and points it at whichever came last.
func ambiguous(devices []prismv1.Device, stablePath string) string {
	var named []prismv1.Device
	for _, d := range devices {
		if d.StablePath == stablePath {
			named = append(named, d)
		}
	}
	if len(named) > 1 {
		var ids []string
		for _, d := range named {
			ids = append(ids, fmt.Sprintf("%s (%s)", d.Path, d.Identity.String()))
		}
		return fmt.Sprintf("%s names %d devices: %s; Prism writes none of them until each has a name of its own", stablePath, len(named), strings.Join(ids, " and "))
	}
	if len(named) == 0 {
		return ""
	}
	key := named[0].Identity.Stable().Key()
	if key == "" {
		return ""
	}
	i := slices.IndexFunc(devices, func(d prismv1.Device) bool {
		return d.StablePath != stablePath && d.Identity.Stable().Key() == key
	})
	if i < 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s) reports the same identity as %s (%s); Prism writes neither until they can be told apart",
		named[0].Path, named[0].Identity, devices[i].Path, devices[i].Identity)
}

// linkGone says whether the stable link is missing where udev keeps its links: the device the
// inventory found under it has left (or udev is removing the link), and its kernel name may
// already belong to another device. Without /dev/disk/by-id (no udev: fixture trees, test
// hosts) there is no link to check, and the identity check decides.
func (r Runner) linkGone(stablePath string) (bool, error) {
	root := r.HostRoot
	if root == "" {
		root = "/"
	}
	if _, err := os.Lstat(filepath.Join(root, filepath.Dir(stablePath))); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	_, err := os.Lstat(filepath.Join(root, stablePath))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return false, err
}
