package inventory

import (
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// pagesIdentifier answers Identify with the given pages for every controller.
type pagesIdentifier struct{ ctrl, ns []byte }

func (p pagesIdentifier) Controller(context.Context, string) ([]byte, error) { return p.ctrl, nil }
func (p pagesIdentifier) Namespace(context.Context, string, uint32) ([]byte, error) {
	if p.ns == nil {
		return nil, errors.New("no namespace page")
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

func TestIdentifyFailureIsAWarningNotAnIneligibility(t *testing.T) {
	root := p5316Node(t)
	id := nvme.RecordedIdentifier{Dir: filepath.Join(root, "nothing-recorded")}
	rep, err := Take(context.Background(), Options{Host: sysfs.Host{Root: root}, Identifier: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "identify controller nvme0") {
		t.Fatalf("warnings = %q", rep.Warnings)
	}
	if !rep.Devices[0].Eligibility.Eligible {
		t.Fatalf("identify is optional; the device must stay eligible: %+v", rep.Devices[0].Eligibility)
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
