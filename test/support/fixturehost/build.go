package fixturehost

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/host/smart"
)

// contents are minimal on-disk headers, enough for signature detection to see what a real
// tool would have written there (magic numbers at their real offsets).
var contents = map[string]func() []byte{
	"":      func() []byte { return nil },
	"empty": func() []byte { return nil },
	"gpt": func() []byte {
		b := make([]byte, 1024)
		b[446+4] = 0xEE // protective MBR entry
		b[510], b[511] = 0x55, 0xAA
		copy(b[512:], "EFI PART")
		binary.LittleEndian.PutUint32(b[512+8:], 0x00010000) // revision 1.0
		binary.LittleEndian.PutUint32(b[512+12:], 92)        // header size
		binary.LittleEndian.PutUint64(b[512+24:], 1)         // my LBA
		binary.LittleEndian.PutUint64(b[512+72:], 2)         // partition entries start at LBA 2
		binary.LittleEndian.PutUint32(b[512+80:], 128)       // number of entries
		binary.LittleEndian.PutUint32(b[512+84:], 128)       // entry size
		binary.LittleEndian.PutUint32(b[512+88:], crc32.ChecksumIEEE(make([]byte, 128*128)))
		binary.LittleEndian.PutUint32(b[512+16:], crc32.ChecksumIEEE(b[512:512+92]))
		return b
	},
	"ext4": func() []byte {
		b := make([]byte, 2048)
		binary.LittleEndian.PutUint16(b[1024+56:], 0xEF53)
		binary.LittleEndian.PutUint32(b[1024+96:], 0x2c2) // incompat: filetype, extents, flex_bg, 64bit
		binary.LittleEndian.PutUint32(b[1024+100:], 0x7b) // ro_compat: sparse_super, large_file, huge_file, dir_nlink, extra_isize
		binary.LittleEndian.PutUint32(b[1024+92:], 0x3c)  // compat: dir_index, resize_inode, ext_attr, has_journal
		return b
	},
	"xfs": func() []byte {
		b := make([]byte, 512)
		copy(b, "XFSB")
		return b
	},
	"lvm2": func() []byte {
		b := make([]byte, 1024)
		copy(b[512:], "LABELONE")
		binary.LittleEndian.PutUint64(b[512+8:], 1) // sector number of the label
		copy(b[512+24:], "LVM2 001")
		return b
	},
	"bluestore": func() []byte {
		return []byte("bluestore block device\n5c1a1d0e-6c61-4f4b-9a44-1b7e0e0e4d10\n")
	},
}

// Build writes the node's host root under dir and returns it, with recorded Identify data
// (when the devices name any) under dir/identify/<controller>/, recorded NVMe log pages under
// dir/logs/<controller>/ and recorded smartctl reports under dir/logs/<disk>/.
func Build(n Node, dir, identifyFixtures string) error {
	nvmeIndex, scsiIndex := 0, 0
	for _, d := range n.Devices {
		major, minor := 259, nvmeIndex
		if d.Bus != "nvme" {
			major, minor = 8, 16*scsiIndex
			scsiIndex++
		} else {
			nvmeIndex++
		}
		if err := writeDevice(dir, identifyFixtures, d, major, minor); err != nil {
			return fmt.Errorf("device %s: %w", d.Name, err)
		}
	}
	return nil
}

func writeDevice(root, identifyFixtures string, d Device, major, minor int) error {
	blk := filepath.Join(root, "sys", "block", d.Name)
	files := map[string]string{
		"dev":                       fmt.Sprintf("%d:%d", major, minor),
		"size":                      strconv.FormatInt(d.SizeBytes/512, 10),
		"ro":                        "0",
		"removable":                 "0",
		"queue/rotational":          boolDigit(d.Rotational),
		"queue/logical_block_size":  strconv.FormatInt(or512(d.LogicalBlockSize), 10),
		"queue/physical_block_size": strconv.FormatInt(or512(d.PhysicalBlockSize), 10),
		"queue/minimum_io_size":     strconv.FormatInt(or512(max(d.MinimumIOSize, d.PhysicalBlockSize)), 10),
		"queue/optimal_io_size":     strconv.FormatInt(d.OptimalIOSize, 10),
		// The kernel's 17 stat fields; field 7 is sectors written.
		"stat": fmt.Sprintf("0 0 0 0 0 0 %d 0 0 0 0 0 0 0 0 0 0", d.SectorsWritten),
	}
	for i, p := range d.Partitions {
		files[p+"/partition"] = strconv.Itoa(i + 1)
	}
	for _, h := range d.Holders {
		files["holders/"+h] = ""
	}
	ctrl := ""
	if d.Bus == "nvme" {
		i := strings.LastIndex(d.Name, "n") // nvme0n1: controller nvme0, namespace 1
		ctrl, files["nsid"] = d.Name[:i], d.Name[i+1:]
		cdir := filepath.Join(root, "sys", "class", "nvme", ctrl)
		model, serial, firmware := d.Model, d.Serial, d.Firmware
		if c := d.IDCtrl; c != nil {
			// The kernel's sysfs attributes come from Identify Controller.
			model, serial, firmware = firstNonEmpty(model, c.MN), firstNonEmpty(serial, c.SN), firstNonEmpty(firmware, c.FR)
		}
		if err := writeFiles(cdir, map[string]string{"model": model, "serial": serial, "firmware_rev": firmware, "transport": "pcie"}); err != nil {
			return err
		}
		if err := symlink(filepath.Join("..", "..", "class", "nvme", ctrl), filepath.Join(blk, "device")); err != nil {
			return err
		}
	} else {
		in := inquiry(d)
		files["device/model"] = in.Product
		files["device/vendor"] = in.Vendor
		files["device/rev"] = in.Revision
	}
	if err := writeFiles(blk, files); err != nil {
		return err
	}
	link := byIDName(d)
	if !d.NoByID {
		if err := symlink(filepath.Join("..", "..", d.Name), filepath.Join(root, "dev", "disk", "by-id", link)); err != nil {
			return err
		}
	}
	if d.Udev != UdevNone {
		if err := writeFiles(filepath.Join(root, "run", "udev", "data"), map[string]string{
			fmt.Sprintf("b%d:%d", major, minor): udevData(d, link),
		}); err != nil {
			return err
		}
	}
	if err := writeEvidence(root, d, ctrl); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "dev", d.Name), contents[d.Content](), 0o644); err != nil {
		return err
	}
	if d.Logs != "" && ctrl != "" {
		dir := filepath.Join(identifyFixtures, "logs", d.Logs)
		pages, err := filepath.Glob(filepath.Join(dir, "log-*.bin"))
		if err != nil || len(pages) == 0 {
			return fmt.Errorf("log fixture %s: no log-*.bin pages in %s", d.Logs, dir)
		}
		for _, page := range pages {
			data, err := os.ReadFile(page)
			if err != nil {
				return err
			}
			if err := writeFiles(filepath.Join(root, "logs", ctrl), map[string]string{filepath.Base(page): string(data)}); err != nil {
				return err
			}
		}
	}
	if d.Smartctl != "" {
		data, err := os.ReadFile(filepath.Join(smartctlFixtures(identifyFixtures), d.Smartctl, smart.RecordedFileName))
		if err != nil {
			return fmt.Errorf("smartctl fixture %s: %w", d.Smartctl, err)
		}
		if err := writeFiles(filepath.Join(root, "logs", d.Name), map[string]string{smart.RecordedFileName: string(data)}); err != nil {
			return err
		}
	}
	if d.Identify != "" && ctrl != "" {
		for _, f := range []string{"id-ctrl.bin", "id-ns-1.bin"} {
			data, err := os.ReadFile(filepath.Join(identifyFixtures, d.Identify, f))
			if err != nil {
				return fmt.Errorf("identify fixture %s: %w", d.Identify, err)
			}
			if err := writeFiles(filepath.Join(root, "identify", ctrl), map[string]string{f: string(data)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// inquiry is the SCSI INQUIRY of a non-NVMe disk: the fixture's, or vendor ATA (SCSI/ATA
// translation) and the model's first 16 characters.
func inquiry(d Device) Inquiry {
	if d.Inquiry != nil {
		return *d.Inquiry
	}
	return Inquiry{Vendor: firstNonEmpty(d.Vendor, "ATA"), Product: scsiModel(d), Revision: d.Firmware}
}

func underscores(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), " ", "_") }

// udevEnc escapes as udev's ID_*_ENC properties do (spaces as \x20).
func udevEnc(s string) string { return strings.ReplaceAll(s, " ", `\x20`) }

// byIDName is the link udev's rules (60-persistent-storage.rules) create from model and serial.
func byIDName(d Device) string {
	model := underscores(d.Model)
	switch d.Udev {
	case UdevSCSIID:
		in := inquiry(d)
		return "scsi-S" + underscores(in.Vendor) + "_" + underscores(in.Product) + "_" + d.Serial
	case UdevUSBID:
		in := inquiry(d)
		return "usb-" + underscores(in.Vendor) + "_" + underscores(in.Product) + "_" + d.Serial + "-0:0"
	}
	switch d.Bus {
	case "nvme":
		return "nvme-" + model + "_" + d.Serial
	case "ata":
		return "ata-" + model + "_" + d.Serial
	case "virtio":
		return "virtio-" + d.Serial
	default:
		return d.Bus + "-" + model + "_" + d.Serial
	}
}

func udevData(d Device, link string) string {
	var b strings.Builder
	if !d.NoByID {
		fmt.Fprintf(&b, "S:disk/by-id/%s\n", link)
	}
	switch d.Udev {
	case UdevATAID:
		fmt.Fprintf(&b, "E:ID_ATA=1\nE:ID_TYPE=disk\nE:ID_BUS=ata\n")
		fmt.Fprintf(&b, "E:ID_MODEL=%s\nE:ID_MODEL_ENC=%s\n", underscores(d.Model), udevEnc(d.Model))
		fmt.Fprintf(&b, "E:ID_REVISION=%s\nE:ID_SERIAL=%s_%s\nE:ID_SERIAL_SHORT=%s\n", d.Firmware, underscores(d.Model), d.Serial, d.Serial)
		return b.String()
	case UdevSCSIID, UdevUSBID:
		in := inquiry(d)
		bus := map[string]string{UdevSCSIID: "scsi", UdevUSBID: "usb"}[d.Udev]
		if d.Udev == UdevSCSIID {
			fmt.Fprintf(&b, "E:ID_SCSI=1\n")
		}
		fmt.Fprintf(&b, "E:ID_VENDOR=%s\nE:ID_VENDOR_ENC=%s\n", underscores(in.Vendor), udevEnc(in.Vendor))
		fmt.Fprintf(&b, "E:ID_MODEL=%s\nE:ID_MODEL_ENC=%s\n", underscores(in.Product), udevEnc(in.Product))
		fmt.Fprintf(&b, "E:ID_REVISION=%s\nE:ID_TYPE=disk\nE:ID_SERIAL_SHORT=%s\nE:ID_BUS=%s\n", in.Revision, d.Serial, bus)
		return b.String()
	}
	fmt.Fprintf(&b, "E:ID_MODEL=%s\n", strings.ReplaceAll(d.Model, " ", "_"))
	fmt.Fprintf(&b, "E:ID_MODEL_ENC=%s\n", strings.ReplaceAll(d.Model, " ", `\x20`))
	fmt.Fprintf(&b, "E:ID_SERIAL_SHORT=%s\n", d.Serial)
	fmt.Fprintf(&b, "E:ID_SERIAL=%s_%s\n", strings.ReplaceAll(d.Model, " ", "_"), d.Serial)
	if d.Firmware != "" {
		fmt.Fprintf(&b, "E:ID_REVISION=%s\n", d.Firmware)
	}
	if d.Bus != "nvme" {
		fmt.Fprintf(&b, "E:ID_BUS=%s\n", d.Bus)
	}
	return b.String()
}

// scsiModel is the 16-character INQUIRY model the SCSI layer shows in sysfs for ATA disks;
// the full model comes from udev, as on a real host.
func scsiModel(d Device) string {
	if len(d.Model) > 16 {
		return d.Model[:16]
	}
	return d.Model
}

func writeFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content+newlineFor(name, content)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// newlineFor ends sysfs attributes with a newline as the kernel does; binary files stay as they are.
func newlineFor(name, content string) string {
	if strings.HasSuffix(name, ".bin") || strings.HasPrefix(filepath.Base(name), "b") && strings.Contains(name, ":") || content == "" {
		return ""
	}
	return "\n"
}

func symlink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	_ = os.Remove(link)
	return os.Symlink(target, link)
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func or512(v int64) int64 {
	if v == 0 {
		return 512
	}
	return v
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
