// Package inventory turns what a host exposes (sysfs, udev, on-disk signatures, NVMe
// Identify) into Prism's Device records, each with a tier and its eligibility. It reads
// through an injected root and never writes to a device.
package inventory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/drivedb"
	"github.com/prism-storage/prism/internal/host/blkid"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/signature"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/workpool"
)

// Options say where and how to take the inventory.
type Options struct {
	Host sysfs.Host
	// Identifier reads NVMe Identify data; nil skips it (sysfs still gives model and serial).
	Identifier nvme.Identifier
	// DB is the drive model database; drivedb.Default() when nil.
	DB *drivedb.DB
	// IncludeLoop reports loop devices too (tests and demos on machines without spare disks).
	IncludeLoop bool
	// SignatureReaders is how many disks' signatures are read at once, each with its own
	// 1.1 MiB buffer; 0 picks up to maxSignatureReaders by the number of CPUs, for a one-shot
	// inventory. The agent, which re-inventories every few minutes in the background, uses
	// 1 so that an inventory does not grow its heap by 1.1 MiB per reader (up to 9 MiB).
	SignatureReaders int
	// Logs reads the Endurance Group Information log (09h) of NVMe drives that have endurance
	// groups, for their rated endurance; nil skips it.
	Logs nvme.GroupLogReader
	// ATA reads ATA IDENTIFY (smartctl) for an ATA drive whose model only shows in cut SCSI
	// INQUIRY forms (behind a SAS HBA or a USB bridge); nil leaves such a model as it is.
	ATA ATAReader
	// Probe runs libblkid's probe (wipefs) on the disks besides Prism's detector; nil skips it
	// (fixture hosts in unit tests). The agent and the CLI set it.
	Probe hostexec.Executor
	// ProbeInProcess asks libblkid in this process (blkid.ProbeFile, on the file descriptor
	// Prism's detector reads) instead of through a wipefs child, for the same disks and with
	// the same answer (decision 0034). It takes effect only with Probe set and in a binary
	// built with libblkid (blkid.InProcess); otherwise the wipefs child runs.
	ProbeInProcess bool
	// Openers finds the processes that hold a disk or one of its partitions open, which then
	// count as its holders (diskUsers); nil skips it (fixture hosts in unit tests). The agent
	// sets it to the host's procfs.
	Openers *procfs.Proc
}

// Report is one inventory of a host.
type Report struct {
	Devices []prismv1.Device
	// Warnings are problems that do not make a device ineligible (Identify unavailable...).
	Warnings []string
	// Debug are facts for a debug log, each said once per inventory: a host without NVMe
	// character devices (a fixture tree, a container without /dev) is no per-drive problem.
	Debug []string
}

// Take inventories every whole disk of the host, in BlockDevices order. It reads the
// disks' signatures several at a time (see readSignatures) and does the rest one disk at
// a time.
func Take(ctx context.Context, opts Options) (Report, error) {
	if opts.DB == nil {
		opts.DB = drivedb.Default()
	}
	disks, err := opts.Host.BlockDevices(opts.IncludeLoop)
	if err != nil {
		return Report{}, err
	}
	byID, err := opts.Host.ByIDLinks()
	if err != nil {
		return Report{}, fmt.Errorf("reading /dev/disk/by-id: %w", err)
	}
	users, usersErrs := diskUsers(ctx, opts.Openers, opts.Host, disks)
	// Open every disk first (cheap), then let libblkid probe the ones that opened while
	// Prism's own detector reads them. In process (ProbeInProcess), each reader asks
	// libblkid right after the detector, on the same file descriptor, so libblkid reads
	// from the page cache the detector filled. Otherwise one wipefs process runs beside the
	// reads; a disk nobody can open (a root disk an LSM guards, a card reader without media)
	// does not fail the whole probe.
	files, sigs := openDisks(opts.Host, disks)
	inProcess := blkid.InProcess && opts.ProbeInProcess && opts.Probe != nil
	var probed [][]blkid.Signature
	var probeErrs []error
	probeDone := make(chan struct{})
	if inProcess {
		close(probeDone)
	} else {
		go func() {
			defer close(probeDone)
			probed, probeErrs = libblkidSignatures(ctx, opts.Probe, opts.Host, disks, files)
		}()
	}
	readSignatures(opts.Host, disks, files, sigs, opts.SignatureReaders, inProcess)
	<-probeDone
	// Closed only now: while Prism holds a disk open, the pages either reader fetched stay
	// in the disk's page cache for the other (the kernel drops a block device's cache
	// when its last opener closes it), so libblkid and Prism read each range once.
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
	if !inProcess {
		for i := range disks {
			sigs[i].libblkid, sigs[i].libblkidErr = probed[i], probeErrs[i]
		}
	}
	var rep Report
	var noCharDevice []string
	for i, disk := range disks {
		d, warnings, missing := describe(ctx, opts, disk, byID[disk.Name], sigs[i], users[disk.Name], usersErrs[disk.Name])
		rep.Devices = append(rep.Devices, d)
		rep.Warnings = append(rep.Warnings, warnings...)
		if missing {
			noCharDevice = append(noCharDevice, disk.NVMeController)
		}
	}
	if len(noCharDevice) > 0 {
		rep.Debug = append(rep.Debug, fmt.Sprintf("no NVMe Identify for %s: no controller character device under %s (models and serials from sysfs; no NPWG)",
			strings.Join(noCharDevice, ", "), filepath.Join(opts.Host.Root, "dev")))
	}
	return rep, nil
}

// maxSignatureReaders bounds how many devices have their signatures read at once. Fewer
// run on a machine with fewer CPUs (GOMAXPROCS, at least 2): each reader is an OS thread
// blocked in pread with its own ~1 MiB buffer, and on a 2-CPU VM eight readers took a
// one-shot inventory of 8 loop devices from 14.2 ms (two readers) to 16.6 ms.
const maxSignatureReaders = 8

// signatures is what signature.DetectPath and libblkid returned for one device.
type signatures struct {
	found []signature.Signature
	err   error
	// nonZeroAt is the first non-zero byte of the head and tail (-1: both zero), zeroErr
	// the error reading them; not read for a device whose content is irrelevant.
	nonZeroAt   int64
	zeroErr     error
	libblkid    []blkid.Signature
	libblkidErr error
}

// openDisks opens every disk read-only (never O_EXCL: DetectPath's rule). A disk that does
// not open gets its error in sigs and a nil file.
func openDisks(host sysfs.Host, disks []sysfs.BlockDevice) ([]*os.File, []signatures) {
	files, sigs := make([]*os.File, len(disks)), make([]signatures, len(disks))
	for i := range disks {
		f, err := os.OpenFile(host.DevicePath(disks[i].Name), os.O_RDONLY, 0)
		if err != nil {
			sigs[i].err = fmt.Errorf("signature: %w", err)
			continue
		}
		files[i] = f
		// Start every disk's reads now: they overlap the work on the disks before them.
		signature.Prefetch(f, disks[i].SizeBytes)
	}
	return files, sigs
}

// readSignatures reads the on-disk signatures of every disk that opened, several at a time
// (the reads mostly wait on the devices: a seek on a hard disk, a queue on a loop device);
// the caller closes the files. With libblkid, each reader then asks libblkid in process
// about the disk it just read, as libblkidSignatures would through wipefs: the same disks
// (not the ones contentIrrelevant leaves out), one after the other on the same descriptor
// (libblkid moves its file offset; the detector only maps and preads). Result i belongs to
// disks[i], so the report keeps the disks' order whatever order the reads finish in.
func readSignatures(host sysfs.Host, disks []sysfs.BlockDevice, files []*os.File, out []signatures, readers int, libblkid bool) {
	read := func(i int) {
		if files[i] == nil {
			return
		}
		path := host.DevicePath(disks[i].Name)
		out[i].found, out[i].err = signature.DetectFile(files[i], path)
		out[i].nonZeroAt = -1
		if !contentIrrelevant(disks[i]) {
			// The size the open file has, as DetectFile reads it (a fixture's file is small).
			if size, err := files[i].Seek(0, io.SeekEnd); err != nil {
				out[i].zeroErr = err
			} else {
				out[i].nonZeroAt, out[i].zeroErr = signature.FirstNonZero(files[i], size, signature.ZeroSpan)
			}
		}
		if libblkid && !contentIrrelevant(disks[i]) {
			out[i].libblkid, out[i].libblkidErr = blkid.ProbeFile(files[i], path)
		}
	}
	workers := min(maxSignatureReaders, max(2, runtime.GOMAXPROCS(0)), len(disks))
	if libblkid && !slices.ContainsFunc(disks, func(d sysfs.BlockDevice) bool { return d.Rotational }) {
		// With libblkid in process, one reader took 10 % less CPU time than two for 8 loop
		// devices, in the same wall time (docs/benchmarks.md, 2026-11-26): fewer threads
		// for the Go runtime to hand blocked cgo calls between, and one set of libblkid's
		// buffers. On solid-state disks each disk's reads wait microseconds; a hard disk's
		// wait for seeks, which several readers overlap, so hosts with any keep them.
		workers = 1
	}
	if readers > 0 {
		workers = min(readers, len(disks))
	}
	workpool.Each(len(disks), workers, read)
}

func describe(ctx context.Context, opts Options, disk sysfs.BlockDevice, byIDNames []string, sigs signatures, users []string, usersErr error) (d prismv1.Device, warnings []string, noCharDevice bool) {
	problems := append([]string(nil), disk.Problems...)
	if usersErr != nil {
		problems = append(problems, fmt.Sprintf("finding the processes that hold it open: %v", usersErr))
	}
	udev, err := opts.Host.Udev(disk.Major, disk.Minor)
	if err != nil {
		problems = append(problems, err.Error())
	}
	d = prismv1.Device{
		Name:                   disk.Name,
		Path:                   "/dev/" + disk.Name,
		Serial:                 firstOf(disk.Serial, udev.Properties["ID_SERIAL_SHORT"]),
		Firmware:               firstOf(disk.Firmware, udev.Properties["ID_REVISION"]),
		SizeBytes:              disk.SizeBytes,
		Rotational:             disk.Rotational,
		ReadOnly:               disk.ReadOnly,
		Removable:              disk.Removable,
		Transport:              transport(disk, udev.Properties["ID_BUS"]),
		LogicalBlockSizeBytes:  int32(disk.LogicalBlockSize),
		PhysicalBlockSizeBytes: int32(disk.PhysicalBlockSize),
		OptimalIOSizeBytes:     disk.OptimalIOSize,
		Partitions:             disk.Partitions,
		Holders:                holders(disk.Holders, users),
	}
	d.StablePath = sysfs.StablePath(append(udevByID(udev.Symlinks), byIDNames...))
	d.Identity = disk.Identity.API()

	var id identified
	if disk.NVMeController != "" && opts.Identifier != nil {
		var w, failed []string
		var err error
		id, w, failed, err = identify(ctx, opts.Identifier, disk)
		warnings, problems = append(warnings, w...), append(problems, failed...)
		noCharDevice = errors.Is(err, nvme.ErrNoCharDevice)
		d.Serial = firstOf(d.Serial, id.serial)
		d.Firmware = firstOf(d.Firmware, id.firmware)
	}
	mc := chooseModel(disk, udev.Properties, id.model)
	if mc.maybeCut && opts.ATA != nil {
		if full, err := ataModel(ctx, opts.ATA, disk.Name); err == nil {
			mc = modelChoice{text: full, source: modelATAIdentify}
		} else {
			warnings = append(warnings, fmt.Sprintf("%s: only the 16-character SCSI INQUIRY model %q is visible and ATA IDENTIFY (smartctl) failed: %v", disk.Name, mc.text, err))
		}
	}
	d.Model = mc.text
	ev := prismv1.DeviceEvidence{ModelSource: mc.source, ModelMaybeCut: mc.maybeCut}
	gatherEvidence(ctx, opts, disk, id, &d, &ev, &warnings)

	if sigs.err != nil {
		problems = append(problems, fmt.Sprintf("reading signatures of %s: %v", d.Path, sigs.err))
	}
	if sigs.libblkidErr != nil {
		problems = append(problems, fmt.Sprintf("libblkid's probe of %s failed (it cannot be proven empty): %v", d.Path, sigs.libblkidErr))
	}
	for _, s := range sigs.found {
		d.Signatures = append(d.Signatures, prismv1.DeviceSignature{Kind: s.Kind.API(), Name: s.Name, OffsetBytes: s.Offset})
	}
	mergeLibblkid(&d, sigs.libblkid)
	if sigs.zeroErr != nil {
		problems = append(problems, fmt.Sprintf("reading the first and last MiB of %s (it cannot be proven empty): %v", d.Path, sigs.zeroErr))
	} else if sigs.nonZeroAt >= 0 && len(d.Signatures) == 0 {
		// A signature explains the bytes it found; without one, the bytes themselves say
		// the device holds something no probe knows.
		d.NonZeroAtBytes = &sigs.nonZeroAt
	}

	var entry drivedb.Entry
	known := false
	if !mc.maybeCut {
		entry, known = opts.DB.Lookup(d.Model, uint64(max(d.SizeBytes, 0)))
	}
	classify(&d, entry, known, mc.maybeCut)
	vid, ssvid := firstID(disk.PCIVendor, id.vid), firstID(disk.PCISubsystemVendor, id.ssvid)
	if known {
		d.Vendor, ev.VendorSource = entry.Vendor, "drive-database"
		d.RatedEndurance = ratedEndurance(entry)
		if d.InternalWriteUnitBytes == 0 && entry.IndirectionUnitBytes > 0 {
			d.InternalWriteUnitBytes = int64(entry.IndirectionUnitBytes)
			d.InternalWriteUnitSource = "drive-database"
		}
	} else {
		inquiryVendor := firstOf(udev.Properties["ID_VENDOR"], disk.Vendor)
		if udev.Properties["ID_BUS"] == "usb" {
			inquiryVendor = "" // a USB bridge answers the INQUIRY with its own name, not the drive maker's
		}
		d.Vendor, ev.VendorSource = deviceVendor(d.Model, disk.NVMeController != "", vid, ssvid, inquiryVendor)
		d.InferredTier = infer(&d, &ev)
		if d.InferredTier != nil {
			d.TierReason += fmt.Sprintf("; its evidence points to %s (%s confidence), which only selectors with inferredTiers: Accept use", d.InferredTier.Tier, d.InferredTier.Confidence)
		}
	}
	if !emptyEvidence(&ev) {
		d.Evidence = &ev
	}
	d.Eligibility = Evaluate(&d, problems)
	return d, warnings, noCharDevice
}

// maxHolders is the API's limit on a device's holders.
const maxHolders = 64

// holders are the devices stacked on a disk, then the processes that hold it open, within
// the API's limit (one is enough to make the disk fail NoHolders).
func holders(stacked, users []string) []string {
	if len(users) == 0 {
		return stacked
	}
	all := append(slices.Clone(stacked), users...)
	return all[:min(len(all), maxHolders)]
}

// identified is what NVMe Identify says about a namespace and its controller.
type identified struct {
	model, serial, firmware string
	vid, ssvid              uint16
	enduranceGroups         bool
	ns                      *nvme.Namespace
}

// identify reads NVMe Identify data: the model strings as the drive reports them, the PCI
// vendor IDs, and the namespace's granularities (NPWG reveals a QLC drive's indirection unit).
// A controller without a character device is no warning: its error is returned for Take to
// say once. A page the drive fills oddly, or a device that refuses the ioctl (ErrNotNVMe), is
// a warning, the same at every inventory. A read that fails is a problem (every controller
// must answer both Identify commands): without the pages the drive's model and evidence are
// missing, so its tier could change from one inventory to the next, and the record must not
// count as a new fact about the drive (the Readable filter makes it partial). The endurance
// group log is optional, and a drive that refuses it does so every time: its failure stays a
// warning.
func identify(ctx context.Context, id nvme.Identifier, disk sysfs.BlockDevice) (out identified, warnings, problems []string, err error) {
	raw, err := id.Controller(ctx, disk.NVMeController)
	if errors.Is(err, nvme.ErrNoCharDevice) {
		return out, nil, nil, err
	}
	if errors.Is(err, nvme.ErrNotNVMe) { // the device refuses the ioctl itself, every time
		return out, []string{fmt.Sprintf("%s: identify controller %s: %v", disk.Name, disk.NVMeController, err)}, nil, nil
	}
	if err != nil {
		// One problem per device: without the controller page the namespace page will not come either.
		return out, nil, []string{fmt.Sprintf("%s: NVMe identify controller %s failed (model, PCI IDs and granularities unknown): %v", disk.Name, disk.NVMeController, err)}, nil
	}
	if ctrl, err := nvme.ParseIdentifyController(raw); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: %v", disk.Name, err))
	} else {
		out.model, out.serial, out.firmware = ctrl.Model, ctrl.Serial, ctrl.Firmware
		out.vid, out.ssvid, out.enduranceGroups = ctrl.VendorID, ctrl.SubsystemVendorID, ctrl.EnduranceGroups()
	}
	if disk.NSID == 0 {
		return out, warnings, nil, nil
	}
	raw, err = id.Namespace(ctx, disk.NVMeController, disk.NSID)
	if errors.Is(err, nvme.ErrNoCharDevice) { // a recording without the namespace's page
		return out, warnings, nil, nil
	}
	if err != nil {
		return out, warnings, []string{fmt.Sprintf("%s: NVMe identify namespace %d failed (granularities unknown): %v", disk.Name, disk.NSID, err)}, nil
	}
	ns, err := nvme.ParseIdentifyNamespace(raw)
	if err != nil {
		return out, append(warnings, fmt.Sprintf("%s: %v", disk.Name, err)), nil, nil
	}
	out.ns = &ns
	return out, warnings, nil, nil
}

// gatherEvidence fills what the hardware says: PCI IDs and medium markers, the namespace's
// granularities (and from NPWG the internal write unit), and the endurance group's estimate.
func gatherEvidence(ctx context.Context, opts Options, disk sysfs.BlockDevice, id identified, d *prismv1.Device, ev *prismv1.DeviceEvidence, warnings *[]string) {
	vid, ssvid := firstID(disk.PCIVendor, id.vid), firstID(disk.PCISubsystemVendor, id.ssvid)
	ev.PCIVendorID, ev.PCIDeviceID, ev.PCISubsystemVendorID = hex4(vid), hex4(disk.PCIDevice), hex4(ssvid)
	if name, ok := drivedb.PCISCMDevice(vid, disk.PCIDevice); ok {
		ev.Markers = append(ev.Markers, fmt.Sprintf("PCI device %04x:%04x is %q in pci.ids %s", vid, disk.PCIDevice, name, drivedb.PCIIDsVersion()))
	}
	ns := id.ns
	if ns == nil {
		return
	}
	lba := uint64(ns.LBASize())
	if npwg, ok := ns.PreferredWriteGranularity(); ok {
		ev.PreferredWriteGranularityBytes = int64(npwg)
		if npwg > lba {
			d.InternalWriteUnitBytes = int64(npwg)
			d.InternalWriteUnitSource = "nvme-npwg"
		}
	}
	if npdg, ok := ns.PreferredDeallocateGranularity(); ok {
		ev.PreferredDeallocateGranularityBytes = int64(npdg)
	}
	if nows, ok := ns.OptimalWriteSize(); ok {
		ev.OptimalWriteSizeBytes = int64(nows)
	}
	if opts.Logs != nil && id.enduranceGroups && ns.ENDGID != 0 {
		est, err := enduranceEstimate(ctx, opts.Logs, disk.NVMeController, ns.ENDGID)
		switch {
		case err != nil:
			*warnings = append(*warnings, fmt.Sprintf("%s: endurance group %d log: %v", disk.Name, ns.ENDGID, err))
		case est > 0:
			ev.EnduranceEstimateTBW = decimal(float64(est) / 1e12)
		}
	}
}

func firstID(ids ...uint16) uint16 {
	for _, v := range ids {
		if v != 0 {
			return v
		}
	}
	return 0
}

func ratedEndurance(e drivedb.Entry) *prismv1.RatedEndurance {
	if e.RatedDWPD == 0 && e.RatedTBW == 0 {
		return nil
	}
	r := &prismv1.RatedEndurance{WarrantyYears: int32(e.WarrantyYears), Source: e.Source}
	if e.RatedDWPD > 0 {
		r.DWPD = strconv.FormatFloat(e.RatedDWPD, 'f', -1, 64)
	}
	if e.RatedTBW > 0 {
		r.TBWTerabytes = strconv.FormatFloat(e.RatedTBW, 'f', -1, 64)
	}
	return r
}

func transport(disk sysfs.BlockDevice, idBus string) string {
	switch {
	case disk.NVMeController != "" || strings.HasPrefix(disk.Name, "nvme"):
		if disk.NVMeTransport != "" && disk.NVMeTransport != "pcie" {
			return "nvme-" + disk.NVMeTransport
		}
		return "nvme"
	case strings.HasPrefix(disk.Name, "loop"):
		return "loop"
	case strings.HasPrefix(disk.Name, "vd"):
		return "virtio"
	case idBus == "ata":
		return "sata"
	case idBus != "":
		return idBus
	}
	return ""
}

// udevByID keeps the by-id names among udev's symlinks.
func udevByID(symlinks []string) []string {
	var names []string
	for _, s := range symlinks {
		if dir, name := filepath.Split(s); dir == "disk/by-id/" {
			names = append(names, name)
		}
	}
	return names
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
