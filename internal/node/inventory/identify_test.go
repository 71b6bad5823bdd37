package inventory

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// pagesIdentifier answers Identify with the given pages for every controller; a page it
// lacks fails as an ioctl that returns EIO would.
type pagesIdentifier struct{ ctrl, ns []byte }

func (p pagesIdentifier) Controller(context.Context, string) ([]byte, error) {
	if p.ctrl == nil {
		return nil, errors.New("nvme: identify controller: input/output error")
	}
	return p.ctrl, nil
}

func (p pagesIdentifier) Namespace(context.Context, string, uint32) ([]byte, error) {
	if p.ns == nil {
		return nil, errors.New("nvme: identify namespace: input/output error")
	}
	return p.ns, nil
}

// namespacePage builds an Identify Namespace page per the NVMe base specification: a 4 KiB
// LBA format, and (when npwg > 0) NSFEAT bit 4 with the 0's-based preferred write granularity.
func namespacePage(blocks uint64, npwg uint16) []byte {
	b := make([]byte, nvme.IdentifySize)
	binary.LittleEndian.PutUint64(b[0:], blocks)
	binary.LittleEndian.PutUint64(b[8:], blocks)
	if npwg > 0 {
		b[24] = 1 << 4
		binary.LittleEndian.PutUint16(b[64:], npwg)
	}
	binary.LittleEndian.PutUint32(b[128:], 12<<16) // LBA format 0: 4096-byte data, no metadata
	return b
}

func controllerPage(model string) []byte {
	b := make([]byte, nvme.IdentifySize)
	copy(b[4:24], strings.Repeat(" ", 20))
	copy(b[4:], "SERIAL0001")
	copy(b[24:64], strings.Repeat(" ", 40))
	copy(b[24:], model)
	copy(b[64:72], "FW000001")
	return b
}

func p5316Node(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	n := fixturehost.Node{Name: "n", Devices: []fixturehost.Device{{
		Name: "nvme0n1", Model: "INTEL SSDPF2NV153TZ", Serial: "PHAC0001", Bus: "nvme",
		SizeBytes: 15362991415296, Source: "test",
	}}}
	if err := fixturehost.Build(n, root, ""); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestInternalWriteUnitFromNPWGBeatsDatabase(t *testing.T) {
	root := p5316Node(t)
	// NPWG 15 with 4 KiB blocks = 64 KiB, what a P5316 on recent firmware reports.
	id := pagesIdentifier{ctrl: controllerPage("INTEL SSDPF2NV153TZ"), ns: namespacePage(3750730326, 15)}
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: id})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Devices[0]
	if d.InternalWriteUnitBytes != 65536 || d.InternalWriteUnitSource != "nvme-npwg" {
		t.Fatalf("internal write unit = %d from %q, want 65536 from nvme-npwg", d.InternalWriteUnitBytes, d.InternalWriteUnitSource)
	}
}

func TestInternalWriteUnitFallsBackToDatabase(t *testing.T) {
	root := p5316Node(t)
	// No NSFEAT bit 4: the drive does not publish NPWG, so the database's figure applies.
	id := pagesIdentifier{ctrl: controllerPage("INTEL SSDPF2NV153TZ"), ns: namespacePage(3750730326, 0)}
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: id})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Devices[0]
	if d.InternalWriteUnitSource != "drive-database" || d.InternalWriteUnitBytes == 0 {
		t.Fatalf("internal write unit = %d from %q, want the drive database's figure", d.InternalWriteUnitBytes, d.InternalWriteUnitSource)
	}
}

// A failed Identify read leaves the record without the drive's model and evidence, which can
// change its tier (inferredTiers: Accept, a model only Identify gives): the record is partial,
// so a planned drive keeps its place and a new one is not taken on it.
func TestIdentifyReadFailureMakesTheRecordPartial(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   pagesIdentifier
		want string
	}{
		{"controller", pagesIdentifier{}, "nvme0n1: NVMe identify controller nvme0 failed"},
		{"namespace", pagesIdentifier{ctrl: controllerPage("INTEL SSDPF2NV153TZ")}, "nvme0n1: NVMe identify namespace 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: p5316Node(t)}, Identifier: tc.id})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Devices[0]
			why, partial := d.PartialRecord()
			if !partial || !strings.Contains(why, tc.want) || !strings.Contains(why, "input/output error") {
				t.Fatalf("partial %v (%q), want a Readable reason with %q and the error", partial, why, tc.want)
			}
			if d.Eligibility.Eligible {
				t.Fatalf("a drive whose Identify failed must not be taken: %+v", d.Eligibility)
			}
		})
	}
}

// notNVMe refuses the admin ioctl as a device that is no NVMe controller does (ENOTTY).
type notNVMe struct{}

func (notNVMe) Controller(context.Context, string) ([]byte, error) {
	return nil, fmt.Errorf("nvme: identify controller: %w", nvme.ErrNotNVMe)
}
func (notNVMe) Namespace(context.Context, string, uint32) ([]byte, error) {
	return nil, nvme.ErrNotNVMe
}

// A device that refuses the ioctl itself does so at every inventory: a warning, as a page that
// does not parse.
func TestIdentifyRefusedAsNotNVMeIsAWarning(t *testing.T) {
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: p5316Node(t)}, Identifier: notNVMe{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "not an NVMe device") {
		t.Fatalf("warnings = %q", rep.Warnings)
	}
	if !rep.Devices[0].Eligibility.Eligible {
		t.Fatalf("%+v", rep.Devices[0].Eligibility)
	}
}

// A page the drive fills oddly is the same at every inventory: a warning, not a partial record.
func TestIdentifyPageThatDoesNotParseIsAWarning(t *testing.T) {
	bad := controllerPage("INTEL SSDPF2NV153TZ")
	bad[30] = 0x01 // a non-printable byte in the model
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: p5316Node(t)}, Identifier: pagesIdentifier{ctrl: bad, ns: namespacePage(3750730326, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "non-printable byte") {
		t.Fatalf("warnings = %q, want the parse error", rep.Warnings)
	}
	if d := rep.Devices[0]; !d.Eligibility.Eligible || d.Model != "INTEL SSDPF2NV153TZ" {
		t.Fatalf("the model comes from sysfs and the drive stays eligible: model %q, %+v", d.Model, d.Eligibility)
	}
}

// A recording with nothing for a controller stands for a host without its character device.
func TestNothingRecordedIsNoProblemOfTheDrive(t *testing.T) {
	root := p5316Node(t)
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "nothing-recorded")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 || len(rep.Debug) != 1 || !strings.Contains(rep.Debug[0], "nvme0") {
		t.Fatalf("warnings %q, debug %q: want one debug line naming nvme0", rep.Warnings, rep.Debug)
	}
	if !rep.Devices[0].Eligibility.Eligible {
		t.Fatalf("%+v", rep.Devices[0].Eligibility)
	}
}

// A host root without /dev/nvmeN (a fixture tree) is said once, as a debug fact, not as one
// warning per drive.
func TestNoCharDeviceIsOneDebugLineNotWarnings(t *testing.T) {
	root := p5316Node(t)
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: nvme.DeviceIdentifier{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Fatalf("warnings = %q, want none", rep.Warnings)
	}
	if len(rep.Debug) != 1 || !strings.Contains(rep.Debug[0], "nvme0") || !strings.Contains(rep.Debug[0], filepath.Join(root, "dev")) {
		t.Fatalf("debug = %q, want one line naming nvme0 and %s/dev", rep.Debug, root)
	}
}
