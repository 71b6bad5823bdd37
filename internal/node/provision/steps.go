package provision

import (
	"fmt"
	"strings"

	"github.com/prism-storage/prism/internal/host/gpt"
)

// StepKind names what a step does to the device.
type StepKind string

// Step kinds, in the order they run. The first four run with the device held open
// exclusively, each after a fresh observation; the last two tell the kernel and udev.
const (
	// StepForgetPartitions: partx --delete, so the kernel drops the partitions of a device
	// about to be wiped.
	StepForgetPartitions StepKind = "ForgetPartitions"
	// StepWipeSignatures: wipefs --all --force (granted devices only; --force because Prism
	// holds the device exclusively itself, which is what wipefs's own check would test).
	StepWipeSignatures StepKind = "WipeSignatures"
	// StepZeroRegions: zero byte ranges: a granted device's GPT area and the heads and tails
	// of the partitions to be created (granted devices only).
	StepZeroRegions StepKind = "ZeroRegions"
	// StepWriteTable: write the whole planned GPT (both copies and the protective MBR).
	StepWriteTable StepKind = "WriteTable"
	// StepReread: partx --update, so the kernel sees the partitions.
	StepReread StepKind = "RereadPartitions"
	// StepSettle: udevadm settle, so the -partN links exist. Optional: it changes nothing.
	StepSettle StepKind = "SettleUdev"
)

// Region is a byte range of the device.
type Region struct {
	What          string
	Offset, Bytes int64
}

// Step is one action of a Decision.
type Step struct {
	Kind StepKind
	// Table is what WriteTable writes.
	Table gpt.Layout
	// Regions are what ZeroRegions zeroes.
	Regions []Region
	// MaxNumber is the upper bound of ForgetPartitions and Reread.
	MaxNumber int
}

// WritesDevice reports whether the step changes the device or its partitions (run with the
// device held exclusively, after a fresh observation).
func (s Step) WritesDevice() bool {
	return s.Kind != StepReread && s.Kind != StepSettle
}

// Mutates reports whether the step changes the device or the kernel's view of it.
func (s Step) Mutates() bool { return s.Kind != StepSettle }

// Optional steps may fail without failing the device (udevadm may be absent).
func (s Step) Optional() bool { return s.Kind == StepSettle }

// Argv is the command line of a step that runs a host tool on the device at dev; nil for the
// steps Prism carries out itself (ZeroRegions, WriteTable).
func (s Step) Argv(dev string) []string {
	var argv []string
	var err error
	switch s.Kind {
	case StepWipeSignatures:
		argv, err = gpt.WipeSignaturesArgv(dev)
	case StepForgetPartitions:
		argv, err = gpt.ForgetPartitionsArgv(dev, s.MaxNumber)
	case StepReread:
		argv, err = gpt.RereadArgv(dev, s.MaxNumber)
	case StepSettle:
		argv = gpt.SettleArgv()
	}
	if err != nil {
		return nil
	}
	return argv
}

// String is the step for messages and logs.
func (s Step) String() string {
	switch s.Kind {
	case StepWriteTable:
		var ps []string
		for _, e := range s.Table.Entries {
			ps = append(ps, fmt.Sprintf("%d %q sectors %d-%d", e.Number, e.Name, e.FirstLBA, e.LastLBA))
		}
		return fmt.Sprintf("%s (disk GUID %s; partitions %s)", s.Kind, s.Table.DiskGUID, strings.Join(ps, ", "))
	case StepZeroRegions:
		var rs []string
		for _, r := range s.Regions {
			rs = append(rs, fmt.Sprintf("%s: %d bytes at %d", r.What, r.Bytes, r.Offset))
		}
		return fmt.Sprintf("%s (%s)", s.Kind, strings.Join(rs, "; "))
	}
	return string(s.Kind)
}
