package provision

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/lvm"
	"github.com/prism-storage/prism/internal/node/dbvolume"
)

// LVM steps cut short (decision 0039). Before pvcreate Prism records on the host, in
// IntentDir, that it makes the PV of the partition with a given GUID, naming the PV UUID and
// VG it gives it. A partition holding LVM's bytes alone (lvm.ReadHead) with such a record is
// Prism's own pvcreate or vgcreate cut short, which the volume phase makes again.

// lvmMember is libblkid's name for an LVM physical volume.
const lvmMember = "LVM2_member"

// intentPath is the record of the partition with GUID partUUID.
func (r Runner) intentPath(partUUID string) string {
	return filepath.Join(r.IntentDir, "lvm-intent", strings.ToLower(partUUID))
}

func intentRecord(partUUID, vg string) ([]byte, error) {
	pv, err := lvm.PVUUID(partUUID)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "partuuid %s\npv %s\nvg %s\n", strings.ToLower(partUUID), pv, vg), nil
}

// recordIntent writes the record before pvcreate, durably: a temporary file synced, renamed
// over the record, and the directory synced. A crash leaves the whole record or none, and
// pvcreate runs only once it is on disk. Rewriting it for a pvcreate run again is harmless.
func (r Runner) recordIntent(partUUID, vg string) error {
	data, err := intentRecord(partUUID, vg)
	if err != nil {
		return err
	}
	path := r.intentPath(partUUID)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("recording the intent to make a PV: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return fmt.Errorf("recording the intent to make a PV: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("recording the intent to make a PV in %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// hasIntent reports whether Prism recorded making this partition's PV for the slot's VG.
func (r Runner) hasIntent(partUUID, vg string) bool {
	if r.IntentDir == "" || partUUID == "" {
		return false
	}
	want, err := intentRecord(partUUID, vg)
	if err != nil {
		return false
	}
	got, err := os.ReadFile(r.intentPath(partUUID))
	return err == nil && bytes.Equal(got, want)
}

// tornHead is what the slot's partition holds of LVM when it may be Prism's own LVM cut short:
// Prism's intent recorded, nothing holds or mounts the partition, the probes find nothing but
// LVM2_member, the first MiB holds LVM's bytes alone and the last MiB is zeros. nil otherwise,
// or when the partition cannot be read (the slot is then refused as before).
func (r Runner) tornHead(slot dbvolume.Slot, c Content, holders, mounts []string) *lvm.Head {
	if !r.hasIntent(slot.PartUUID, slot.VG) || len(holders) > 0 || len(mounts) > 0 ||
		slices.ContainsFunc(c.Found, func(f string) bool { return f != lvmMember }) {
		return nil
	}
	f, err := hostexec.OpenDirect(r.partitionPath(slot.Partition))
	if err != nil {
		return nil
	}
	defer f.Close()
	h, err := readTornHead(f)
	if err != nil {
		return nil
	}
	return &h
}

// partitionPath is the partition's device node (slot.Partition is /dev/<name>) under the host root.
func (r Runner) partitionPath(partition string) string {
	return r.sysfs().DevicePath(strings.TrimPrefix(partition, "/dev/"))
}

// readTornHead reads the partition open as f: its head through lvm.ReadHead, its tail zeros.
// It reads with O_DIRECT, through a second open of the very device f has open (HeldPath), so
// the bytes come from the device, as LVM (which reads with O_DIRECT) sees them, and not from
// a page cache filled before another writer changed them (hostexec.DirectReader).
func readTornHead(held *os.File) (lvm.Head, error) {
	f, err := hostexec.OpenDirect(hostexec.HeldPath(held))
	if err != nil {
		return lvm.Head{}, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return lvm.Head{}, err
	}
	if size < 2*lvm.HeadSize {
		return lvm.Head{}, fmt.Errorf("%s: %d bytes, too small for a DB slot", f.Name(), size)
	}
	head, tail := make([]byte, lvm.HeadSize), make([]byte, lvm.HeadSize)
	rd := hostexec.DirectReader{F: f}
	if _, err := rd.ReadAt(head, 0); err != nil {
		return lvm.Head{}, err
	}
	if _, err := rd.ReadAt(tail, size-lvm.HeadSize); err != nil {
		return lvm.Head{}, err
	}
	if slices.ContainsFunc(tail, func(b byte) bool { return b != 0 }) {
		return lvm.Head{}, fmt.Errorf("%s: the last MiB is not zeros", held.Name())
	}
	return lvm.ReadHead(head)
}

// clearHead zeroes the first lvm.HeadSize bytes of the slot's partition, Prism's vgcreate cut
// short (dbvolume.ClearHead). The partition is opened exclusively (the kernel refuses while
// anything holds or mounts it) and read again through that handle: only a head that still holds
// the same LVM bytes of Prism's PV is zeroed, in one write, then synced. A crash leaves the
// head as it was or zeros, both of which the next pass resumes from.
func (r Runner) clearHead(slot dbvolume.Slot, want lvm.Head) error {
	path := r.partitionPath(slot.Partition)
	dev, err := r.opener()(path, true)
	if err != nil {
		return err
	}
	defer dev.Close()
	f, ok := dev.(*os.File)
	if !ok {
		return fmt.Errorf("%s: not a device file", path)
	}
	got, err := readTornHead(f)
	if err != nil {
		return fmt.Errorf("%s: reading it again before zeroing its LVM head: %w", path, err)
	}
	if got != want {
		return fmt.Errorf("%s: its LVM head changed since it was read (%+v, then %+v)", path, want, got)
	}
	if _, err := f.WriteAt(make([]byte, lvm.HeadSize), 0); err != nil {
		return err
	}
	return f.Sync()
}
