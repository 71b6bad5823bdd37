// Package gpt is Prism's GPT: a pure encoder and reader of the table Prism writes itself
// (Layout, ReadDisk; decision 0018), and the host's partitioning tools behind one small
// package, in the style of TopoLVM's lvmd/command: sfdisk reads a table as JSON (the
// independent check of what Prism wrote), wipefs wipes a granted device, partx tells the
// kernel, udevadm waits for the links.
//
// The tools' part only builds argv slices and parses output, except ReadTable, which runs
// sfdisk through an injected hostexec.Executor. Nothing runs a shell; nothing here opens a
// device for writing.
package gpt

import (
	"fmt"
	"strings"
)

// Partition type GUIDs Prism writes.
const (
	// CephBlockDBTypeGUID is ceph-disk's "ceph block.db" type, so that Ceph tools and people
	// recognise a DB slot by its type.
	CephBlockDBTypeGUID = "30cd0809-c2b2-499c-8879-2d6b78529876"
	// LinuxFilesystemTypeGUID is "Linux filesystem data", used for the cache partition.
	LinuxFilesystemTypeGUID = "0fc63daf-8483-4772-8e79-3d69d8477de4"
)

// Table labels sfdisk reports.
const (
	LabelGPT = "gpt"
	LabelDOS = "dos"
)

// MaxPartitionNumber is the highest partition number a table of 128 entries holds.
const MaxPartitionNumber = 128

// Table is a device's partition table as sfdisk reports it. The zero Table (Label "") is a
// device without a recognised partition table.
type Table struct {
	// Label is the table type: "gpt", "dos", ... or "" when the device has none.
	Label string
	// ID is the disk GUID (gpt) or disk identifier (dos).
	ID string
	// SectorSize is the logical sector size sfdisk used, in bytes.
	SectorSize int64
	// FirstLBA and LastLBA bound the sectors partitions may use (gpt only; 0 otherwise).
	FirstLBA, LastLBA int64
	// Partitions are sorted by number.
	Partitions []Partition
}

// Partition is one partition table entry.
type Partition struct {
	// Number is the partition number (1-based), the N of /dev/sdaN and -partN.
	Number int
	// StartBytes and SizeBytes are the partition's position on the device.
	StartBytes, SizeBytes int64
	// Name is the GPT partition name (empty on dos tables).
	Name string
	// TypeGUID is the partition type in lower case: a GUID on gpt, a hex byte on dos ("83").
	TypeGUID string
	// UUID is the GPT unique partition GUID, in lower case.
	UUID string
}

// HasTable reports whether the device has a recognised partition table.
func (t Table) HasTable() bool { return t.Label != "" }

// Partition returns the partition with the given number.
func (t Table) Partition(number int) (Partition, bool) {
	for _, p := range t.Partitions {
		if p.Number == number {
			return p, true
		}
	}
	return Partition{}, false
}

// EndBytes is the first byte after the partition.
func (p Partition) EndBytes() int64 { return p.StartBytes + p.SizeBytes }

func (p Partition) String() string {
	return fmt.Sprintf("partition %d %q (start %s, size %s, type %s)", p.Number, p.Name, FormatBytes(p.StartBytes), FormatBytes(p.SizeBytes), p.TypeGUID)
}

func checkSectorSize(ss int64) error {
	if ss < 512 || ss > 65536 || ss&(ss-1) != 0 {
		return fmt.Errorf("sector size %d: want a power of two from 512 to 65536", ss)
	}
	return nil
}

// FormatBytes renders a byte count as MiB when it is a whole number of MiB, else in bytes.
func FormatBytes(n int64) string {
	const mib = 1 << 20
	if n%mib == 0 {
		return fmt.Sprintf("%d MiB", n/mib)
	}
	return fmt.Sprintf("%d bytes", n)
}

// isGUID reports whether s is a GUID in the 8-4-4-4-12 hex form.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}
