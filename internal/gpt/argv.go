package gpt

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"unicode/utf16"
)

// NewPartition is one GPT partition to create.
type NewPartition struct {
	Number                int
	StartBytes, SizeBytes int64
	// Name is the GPT partition name (at most 36 UTF-16 code units).
	Name string
	// TypeGUID is the partition type GUID.
	TypeGUID string
}

// CreatePartitionArgv is
//
//	sgdisk --new=N:START:END --change-name=N:NAME --typecode=N:GUID <dev>
//
// with START and END (inclusive) in sectors of sectorSize. sgdisk writes the table once, at the
// end, so the partition appears with its name and type or not at all. sgdisk keeps a start
// that is already aligned (every Prism start is a whole MiB), on 512 and 4096 byte sectors.
func CreatePartitionArgv(dev string, sectorSize int64, p NewPartition) ([]string, error) {
	if err := checkDevice(dev); err != nil {
		return nil, err
	}
	if err := checkSectorSize(sectorSize); err != nil {
		return nil, err
	}
	if p.Number < 1 || p.Number > MaxPartitionNumber {
		return nil, fmt.Errorf("partition number %d: want 1 to %d", p.Number, MaxPartitionNumber)
	}
	if p.StartBytes <= 0 || p.SizeBytes <= 0 || p.SizeBytes > (1<<62)-p.StartBytes {
		return nil, fmt.Errorf("partition %d: start %d and size %d bytes are not a byte range", p.Number, p.StartBytes, p.SizeBytes)
	}
	if p.StartBytes%sectorSize != 0 || p.SizeBytes%sectorSize != 0 {
		return nil, fmt.Errorf("partition %d: start %d and size %d bytes are not whole %d-byte sectors", p.Number, p.StartBytes, p.SizeBytes, sectorSize)
	}
	if err := checkName(p.Name); err != nil {
		return nil, fmt.Errorf("partition %d: %w", p.Number, err)
	}
	if !isGUID(p.TypeGUID) {
		return nil, fmt.Errorf("partition %d: type %q is not a GUID", p.Number, p.TypeGUID)
	}
	n := strconv.Itoa(p.Number)
	start := p.StartBytes / sectorSize
	end := (p.StartBytes+p.SizeBytes)/sectorSize - 1
	return []string{
		"sgdisk",
		"--new=" + n + ":" + strconv.FormatInt(start, 10) + ":" + strconv.FormatInt(end, 10),
		"--change-name=" + n + ":" + p.Name,
		"--typecode=" + n + ":" + p.TypeGUID,
		dev,
	}, nil
}

// CreateTableArgv is `sgdisk --clear <dev>`: a fresh, empty GPT. sgdisk --clear destroys any
// table present, so it is refused unless current (the device's table as read) is empty.
func CreateTableArgv(dev string, current Table) ([]string, error) {
	if err := checkDevice(dev); err != nil {
		return nil, err
	}
	if current.HasTable() {
		return nil, fmt.Errorf("%s already has a %s partition table with %d partitions: not replacing it", dev, current.Label, len(current.Partitions))
	}
	return []string{"sgdisk", "--clear", dev}, nil
}

// WipeArgvs wipes a device the policy allows Prism to wipe, in order:
//
//	wipefs --all <dev>      every signature libblkid knows (filesystems, LVM, RAID, partition tables)
//	sgdisk --zap-all <dev>  both GPT headers and entry arrays and the protective MBR
//
// wipefs runs first because it opens the device exclusively and so fails (EBUSY) when the
// device or any of its partitions is mounted or held, before anything is destroyed; sgdisk
// --zap-all does not check.
func WipeArgvs(dev string) ([][]string, error) {
	if err := checkDevice(dev); err != nil {
		return nil, err
	}
	return [][]string{{"wipefs", "--all", dev}, {"sgdisk", "--zap-all", dev}}, nil
}

// RereadArgv is `partx --update --nr 1:<maxNumber> <dev>`: the kernel learns the partitions
// 1..maxNumber as they are on disk (added, or resized in place when in use). The explicit
// range matters: without it partx (util-linux 2.38) only walks 1..max(the kernel's highest
// partition, the number of partitions on disk), so it misses partition 3 of a table holding
// 1 and 3. partx also exits 0 when adding a partition fails, so callers must check the kernel
// view afterwards.
func RereadArgv(dev string, maxNumber int) ([]string, error) {
	if err := checkDevice(dev); err != nil {
		return nil, err
	}
	if maxNumber < 1 || maxNumber > MaxPartitionNumber {
		return nil, fmt.Errorf("partition range 1:%d: want an upper bound from 1 to %d", maxNumber, MaxPartitionNumber)
	}
	return []string{"partx", "--update", "--nr", "1:" + strconv.Itoa(maxNumber), dev}, nil
}

// ForgetPartitionsArgv is `partx --delete --nr 1:<maxNumber> <dev>`: the kernel drops the
// partitions it still lists after a wipe (partx --update never removes a partition that is no
// longer on disk). It fails for a partition that is in use. partx exits non-zero when the
// kernel lists no partition at all, so use it only when it lists some.
func ForgetPartitionsArgv(dev string, maxNumber int) ([]string, error) {
	if err := checkDevice(dev); err != nil {
		return nil, err
	}
	if maxNumber < 1 {
		return nil, fmt.Errorf("partition range 1:%d: want an upper bound of at least 1", maxNumber)
	}
	return []string{"partx", "--delete", "--nr", "1:" + strconv.Itoa(maxNumber), dev}, nil
}

// SettleTimeoutSeconds bounds udevadm settle.
const SettleTimeoutSeconds = 30

// SettleArgv is `udevadm settle --timeout=30`: wait until udev has processed the events of
// the new partitions, so their /dev/disk/by-id/...-partN links exist. Run it only when
// udevadm exists (the agent image may not carry it; then nothing waits for the links).
func SettleArgv() []string {
	return []string{"udevadm", "settle", "--timeout=" + strconv.Itoa(SettleTimeoutSeconds)}
}

// checkDevice accepts a clean absolute path: the argv element must name a device, never be
// taken for an option.
func checkDevice(dev string) error {
	if dev == "" {
		return errors.New("no device path")
	}
	if !filepath.IsAbs(dev) || filepath.Clean(dev) != dev {
		return fmt.Errorf("device path %q is not a clean absolute path", dev)
	}
	return nil
}

func checkName(name string) error {
	if name == "" {
		return errors.New("empty partition name")
	}
	for _, r := range name {
		if r == 0 {
			return fmt.Errorf("partition name %q contains NUL", name)
		}
	}
	if n := len(utf16.Encode([]rune(name))); n > 36 {
		return fmt.Errorf("partition name %q is %d UTF-16 code units, GPT holds 36", name, n)
	}
	return nil
}
