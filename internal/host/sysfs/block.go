// Package sysfs reads block devices from a host's /sys, /run/udev and /dev through an
// injected root directory, so that fixture trees and demos work like real hosts.
// It only reads; it never opens a device for writing.
package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// BlockDevice is one whole disk as /sys/block describes it.
type BlockDevice struct {
	Name         string
	Major, Minor uint32
	SizeBytes    int64
	Rotational   bool
	ReadOnly     bool
	Removable    bool

	LogicalBlockSize  int64
	PhysicalBlockSize int64
	MinimumIOSize     int64
	OptimalIOSize     int64

	Model, Vendor, Serial, Firmware string

	// Identity is what the kernel reports of the device itself (IdentityOf reads the same
	// attributes by device number).
	Identity Identity

	// NVMeController is the controller (nvme0) behind an NVMe namespace, for Identify.
	NVMeController string
	// NVMeTransport is the controller's transport (pcie, tcp, rdma, fc, loop).
	NVMeTransport string
	// NSID is the NVMe namespace id.
	NSID uint32
	// PCIVendor, PCIDevice and PCISubsystemVendor are the NVMe controller's PCI IDs (the
	// controller's device/vendor, device/device, device/subsystem_vendor); 0 when unknown.
	PCIVendor, PCIDevice, PCISubsystemVendor uint16

	Partitions []string
	Holders    []string

	// Problems are attributes that could not be read or parsed; the device is still reported.
	Problems []string
}

// Host reads a host through a root directory ("/" on a real node).
type Host struct {
	Root string
}

func (h Host) path(parts ...string) string {
	return filepath.Join(append([]string{h.Root}, parts...)...)
}

// Virtual reports whether a kernel block device name is a virtual or stacked device that
// the inventory leaves out: RAM disks, device-mapper, md, optical, floppy, network block
// devices, and (unless asked for) loop devices.
func Virtual(name string, includeLoop bool) bool {
	for _, p := range []string{"ram", "zram", "dm-", "md", "sr", "fd", "nbd", "cas", "rbd", "drbd", "zd"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasPrefix(name, "loop") && !includeLoop
}

// BlockDevices lists the whole disks under <root>/sys/block, sorted by name.
func (h Host) BlockDevices(includeLoop bool) ([]BlockDevice, error) {
	entries, err := os.ReadDir(h.path("sys", "block"))
	if err != nil {
		return nil, fmt.Errorf("listing block devices: %w", err)
	}
	var devs []BlockDevice
	for _, e := range entries {
		if Virtual(e.Name(), includeLoop) {
			continue
		}
		if d, ok := h.readBlockDevice(e.Name()); ok {
			devs = append(devs, d)
		}
	}
	sort.Slice(devs, func(i, j int) bool { return NaturalLess(devs[i].Name, devs[j].Name) })
	return devs, nil
}

// readBlockDevice reads one device's attributes; false means an unbound loop device or a
// hidden multipath path, which BlockDevices leaves out.
func (h Host) readBlockDevice(name string) (BlockDevice, bool) {
	r := attrReader{dir: h.path("sys", "block", name), rel: filepath.Join("sys", "block", name)}
	d := BlockDevice{Name: name}
	if dev := r.str("dev"); dev != "" {
		if _, err := fmt.Sscanf(dev, "%d:%d", &d.Major, &d.Minor); err != nil {
			r.problem("dev", fmt.Errorf("%q is not major:minor", dev))
		}
	}
	// size is always in 512-byte sectors, whatever the logical block size.
	if sectors := r.int("size"); sectors > math.MaxInt64/512 {
		r.problem("size", fmt.Errorf("%d sectors overflow a byte count", sectors))
	} else {
		d.SizeBytes = sectors * 512
	}
	if strings.HasPrefix(name, "loop") && d.SizeBytes == 0 {
		// An unbound loop device has no backing file: skip its other attributes too.
		return d, false
	}
	if r.optional("hidden") == "1" {
		// A path of a multipath namespace (nvmeXcYnZ), hidden behind the nvmeXnY users see: no
		// /dev node, no by-id link, the same drive listed twice. lsblk leaves it out too.
		return d, false
	}
	d.Rotational = r.int("queue/rotational") == 1
	d.ReadOnly = r.int("ro") == 1
	d.Removable = r.int("removable") == 1
	d.LogicalBlockSize = r.int("queue/logical_block_size")
	d.PhysicalBlockSize = r.int("queue/physical_block_size")
	d.MinimumIOSize = r.int("queue/minimum_io_size")
	d.OptimalIOSize = r.int("queue/optimal_io_size")
	d.Model = r.optional("device/model")
	d.Vendor = r.optional("device/vendor")
	d.Serial = r.optional("device/serial")
	d.Firmware = firstNonEmpty(r.optional("device/firmware_rev"), r.optional("device/rev"))
	d.Identity = Identity{WWID: firstNonEmpty(r.optional("wwid"), r.optional("device/wwid")),
		Serial: firstNonEmpty(d.Serial, r.optional("serial")), BackingFile: r.optional("loop/backing_file")}
	if seq := r.optional("diskseq"); seq != "" {
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil {
			d.Identity.DiskSeq = n
		} else {
			r.problem("diskseq", fmt.Errorf("%q is not a number", seq))
		}
	}
	if strings.HasPrefix(name, "nvme") {
		h.readNVMe(&d, &r)
	}
	d.Partitions = h.partitions(name)
	d.Holders = h.children(name, "holders")
	d.Problems = r.problems
	return d, true
}

func (h Host) readNVMe(d *BlockDevice, r *attrReader) {
	d.NVMeTransport = r.optional("device/transport")
	if nsid := r.optional("nsid"); nsid != "" {
		if n, err := strconv.ParseUint(nsid, 10, 32); err == nil {
			d.NSID = uint32(n)
		} else {
			r.problem("nsid", fmt.Errorf("%q is not a namespace id", nsid))
		}
	} else if _, after, ok := strings.Cut(strings.TrimPrefix(d.Name, "nvme"), "n"); ok {
		if n, err := strconv.ParseUint(after, 10, 32); err == nil {
			d.NSID = uint32(n)
		}
	}
	// device links to the controller (nvme0) or, with native multipath, to the subsystem.
	target, err := os.Readlink(filepath.Join(r.dir, "device"))
	if err != nil {
		r.problem("device", err)
		return
	}
	base := filepath.Base(target)
	pci := "device/device/"
	if strings.HasPrefix(base, "nvme-subsys") {
		entries, _ := os.ReadDir(filepath.Join(r.dir, "device"))
		for _, e := range entries {
			if isController(e.Name()) {
				d.NVMeController = e.Name()
				break
			}
		}
		pci = "device/" + d.NVMeController + "/device/"
	} else {
		d.NVMeController = base
	}
	if d.NVMeController == "" {
		return
	}
	d.PCIVendor = r.pciID(pci + "vendor")
	d.PCIDevice = r.pciID(pci + "device")
	d.PCISubsystemVendor = r.pciID(pci + "subsystem_vendor")
}

// pciID reads a PCI ID attribute ("0x8086"); 0 when absent (NVMe over fabrics has no PCI
// function) or malformed.
func (r *attrReader) pciID(attr string) uint16 {
	s := r.optional(attr)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16)
	if err != nil {
		r.problem(attr, fmt.Errorf("%q is not a PCI ID", s))
		return 0
	}
	return uint16(v)
}

// isController reports whether a name is an NVMe controller (nvme0), not a namespace (nvme0n1).
func isController(name string) bool {
	rest, ok := strings.CutPrefix(name, "nvme")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.Atoi(rest)
	return err == nil
}

// partitions lists the partitions of a disk: the entries of /sys/block/<name> with a
// partition attribute. The kernel names a partition after its disk (sda1, nvme0n1p1,
// mmcblk0p1), so only entries that start with the disk's name are checked; the two dozen
// attributes and directories beside them (queue, holders, size...) are never stat'ed.
func (h Host) partitions(name string) []string {
	entries, err := os.ReadDir(h.path("sys", "block", name))
	if err != nil {
		return nil
	}
	var parts []string
	for _, e := range entries {
		if len(e.Name()) <= len(name) || !strings.HasPrefix(e.Name(), name) {
			continue
		}
		if _, err := os.Stat(h.path("sys", "block", name, e.Name(), "partition")); err == nil {
			parts = append(parts, e.Name())
		}
	}
	return parts
}

func (h Host) children(name, sub string) []string {
	entries, err := os.ReadDir(h.path("sys", "block", name, sub))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// attrReader reads sysfs attributes of one device and collects problems instead of failing,
// so one unreadable attribute never hides the device.
type attrReader struct {
	dir, rel string
	problems []string
}

func (r *attrReader) problem(attr string, err error) {
	r.problems = append(r.problems, fmt.Sprintf("%s/%s: %v", r.rel, attr, err))
}

// str reads a required attribute.
func (r *attrReader) str(attr string) string {
	b, err := readAttr(filepath.Join(r.dir, attr))
	if err != nil {
		r.problem(attr, unwrapPathError(err))
		return ""
	}
	return strings.TrimSpace(string(b))
}

// optional reads an attribute that some devices lack.
func (r *attrReader) optional(attr string) string {
	b, err := readAttr(filepath.Join(r.dir, attr))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem(attr, unwrapPathError(err))
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r *attrReader) int(attr string) int64 {
	s := r.str(attr)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		r.problem(attr, fmt.Errorf("%q is not a non-negative integer", s))
		return 0
	}
	return n
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// DevicePath is the device node of a kernel block device under the root.
func (h Host) DevicePath(name string) string { return h.path("dev", name) }

// NaturalLess orders kernel names as people do: nvme2n1 before nvme10n1.
func NaturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
