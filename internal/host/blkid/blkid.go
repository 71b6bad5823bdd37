// Package blkid puts libblkid's low-level probe behind argv builders and parsers: `wipefs
// --no-act --json` lists every signature libblkid finds on a device, at every offset, and
// `blkid --probe` names the content of a byte range (a partition that is not a device node
// yet). Both are util-linux tools; both only read. Prism asks them, beside its own detector
// (internal/host/signature), before it writes a device: a device is empty only when neither finds
// anything.
package blkid

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
)

// Signature is one thing libblkid found.
type Signature struct {
	// Device is the device's base name as wipefs prints it (several devices in one call).
	Device string
	// Type is libblkid's name: "ext4", "LVM2_member", "gpt", "PMBR", "ceph_bluestore", ...
	Type string
	// Offset is where its magic is, in bytes from the start of what was probed.
	Offset int64
	// Usage is libblkid's class ("filesystem", "raid", "crypto", "other"), when known.
	Usage string
}

func (s Signature) String() string { return fmt.Sprintf("%s at byte %d", s.Type, s.Offset) }

// WipefsArgv is `wipefs --no-act --json <dev>...`: every signature of each device, changing
// nothing.
func WipefsArgv(devs ...string) ([]string, error) {
	if len(devs) == 0 {
		return nil, errors.New("wipefs: no device")
	}
	for _, dev := range devs {
		if err := hostexec.CheckDevicePath(dev); err != nil {
			return nil, err
		}
	}
	return append([]string{"wipefs", "--no-act", "--json"}, devs...), nil
}

// ParseWipefs parses WipefsArgv's output. wipefs prints nothing at all for a device without
// signatures on some versions, and an empty list on others.
func ParseWipefs(out []byte) ([]Signature, error) {
	if strings.TrimSpace(string(out)) == "" {
		return nil, nil
	}
	var doc struct {
		Signatures *[]struct {
			Device string  `json:"device"`
			Offset *string `json:"offset"`
			Type   *string `json:"type"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("wipefs output: %w", err)
	}
	if doc.Signatures == nil {
		return nil, errors.New("wipefs output: no \"signatures\" list")
	}
	var sigs []Signature
	for i, s := range *doc.Signatures {
		if s.Type == nil || *s.Type == "" || s.Offset == nil {
			return nil, fmt.Errorf("wipefs output: signatures[%d] lacks a type or an offset", i)
		}
		off, err := strconv.ParseInt(*s.Offset, 0, 64)
		if err != nil || off < 0 {
			return nil, fmt.Errorf("wipefs output: signatures[%d].offset %q is not a byte offset", i, *s.Offset)
		}
		sigs = append(sigs, Signature{Device: s.Device, Type: *s.Type, Offset: off})
	}
	return sigs, nil
}

// ProbeArgv is `blkid --probe --output export [--offset O --size S] <dev>`: libblkid's
// low-level probe of the device, or of the size bytes at offset. size 0 probes the whole device.
func ProbeArgv(dev string, offset, size int64) ([]string, error) {
	if err := hostexec.CheckDevicePath(dev); err != nil {
		return nil, err
	}
	if offset < 0 || size < 0 || (offset > 0 && size == 0) {
		return nil, fmt.Errorf("probe range offset %d size %d", offset, size)
	}
	argv := []string{"blkid", "--probe", "--output", "export"}
	if size > 0 {
		argv = append(argv, "--offset", strconv.FormatInt(offset, 10), "--size", strconv.FormatInt(size, 10))
	}
	return append(argv, dev), nil
}

// Exit codes of blkid --probe (blkid(8)).
const (
	ExitNothingFound = 2
	ExitAmbivalent   = 8
)

// ErrAmbivalent is blkid's answer for content it cannot name because several prober match:
// something is there.
var ErrAmbivalent = errors.New("blkid: ambivalent probing result (more than one format matches)")

// ParseProbe parses ProbeArgv's export output: KEY=value lines. It returns the content type
// (TYPE, or PTTYPE for a partition table), with its USAGE, or nothing when both are absent.
func ParseProbe(out []byte) ([]Signature, error) {
	vals := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ToUpper(k) != k {
			return nil, fmt.Errorf("blkid output line %d %q is not KEY=value", i+1, line)
		}
		vals[k] = v
	}
	var sigs []Signature
	if t := vals["TYPE"]; t != "" {
		off, _ := strconv.ParseInt(vals["SBMAGIC_OFFSET"], 10, 64)
		sigs = append(sigs, Signature{Type: t, Offset: off, Usage: vals["USAGE"]})
	}
	if t := vals["PTTYPE"]; t != "" {
		off, _ := strconv.ParseInt(vals["PTMAGIC_OFFSET"], 10, 64)
		sigs = append(sigs, Signature{Type: t, Offset: off, Usage: "partition table"})
	}
	if unnamed := unnamedKeys(vals); len(sigs) == 0 && len(unnamed) > 0 {
		return nil, fmt.Errorf("blkid found something (%s) but named no TYPE or PTTYPE", strings.Join(unnamed, ", "))
	}
	return sigs, nil
}

// unnamedKeys are the keys that describe content: not the device's name, nor the entry of
// the partition that holds it.
func unnamedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		if k != "DEVNAME" && !strings.HasPrefix(k, "PART_ENTRY_") {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// Kind is the StorageNode API's family for a libblkid type.
func Kind(typ string) prismv1.SignatureKind {
	switch typ {
	case "gpt", "dos", "PMBR", "atari", "bsd", "mac", "sgi", "sun", "solaris", "unixware", "aix", "ultrix":
		return prismv1.SignaturePartitionTable
	case "LVM2_member", "LVM1_member":
		return prismv1.SignatureLVM
	case "linux_raid_member", "isw_raid_member", "ddf_raid_member", "adaptec_raid_member", "lsi_mega_raid_member", "nvidia_raid_member", "promise_fasttrack_raid_member", "silicon_medley_raid_member", "via_raid_member", "jmicron_raid_member", "hpt37x_raid_member", "hpt45x_raid_member":
		return prismv1.SignatureRAID
	case "swap", "swsuspend":
		return prismv1.SignatureSwap
	case "ceph_bluestore":
		return prismv1.SignatureCephBlueStore
	}
	return prismv1.SignatureOther
}

// ParseProbeValues turns one result of libblkid's low-level probe into a Signature: the
// values of TYPE (or PTTYPE), SBMAGIC_OFFSET (or PTMAGIC_OFFSET) and SBMAGIC (or PTMAGIC)
// as blkid_probe_lookup_value returns them. The first two are NUL-terminated strings (a
// name, a decimal byte offset), the magic is raw bytes; magicLen is its length, the range
// the probe hides before it looks again. Device is left empty.
func ParseProbeValues(typ, offset, magic []byte) (s Signature, magicLen int, err error) {
	t := strings.TrimRight(string(typ), "\x00")
	if t == "" || strings.ContainsFunc(t, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return Signature{}, 0, fmt.Errorf("libblkid type %q is not a name", typ)
	}
	o := strings.TrimRight(string(offset), "\x00")
	off, err := strconv.ParseInt(o, 10, 64)
	if err != nil || off < 0 {
		return Signature{}, 0, fmt.Errorf("libblkid %s: magic offset %q is not a byte offset", t, o)
	}
	if len(magic) == 0 {
		return Signature{}, 0, fmt.Errorf("libblkid %s at byte %d: no magic", t, off)
	}
	return Signature{Type: t, Offset: off}, len(magic), nil
}
