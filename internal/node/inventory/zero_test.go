package inventory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// Issue 29 case 4: a device whose first bytes are not zero but carry no signature libblkid or
// Prism knows (plain dm-crypt, raw application data, a wiped table over old data) holds data.
// Before, it was eligible, and a policy handed it to Rook as a capacity device.
func TestUnexplainedBytesMakeADeviceIneligible(t *testing.T) {
	n := fixturehost.Node{Name: "zero"}
	for _, c := range []struct{ name, content string }{{"nvme0n1", "empty"}, {"nvme1n1", "empty"}, {"nvme2n1", "empty"}, {"nvme3n1", "ext4"}} {
		n.Devices = append(n.Devices, fixturehost.Device{Name: c.name, Model: "Test NVMe", Serial: "S-" + c.name, Bus: "nvme",
			SizeBytes: 1 << 40, Content: c.content, Source: "test"})
	}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	host := sysfs.Host{Root: root}
	put := func(name string, off int64, b []byte) {
		f, err := os.OpenFile(host.DevicePath(name), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	put("nvme1n1", 4096+3, []byte("random application data"))
	put("nvme2n1", 3<<20, []byte{0xff}) // the fixture's file ends there: only the tail
	rep, err := Take(context.Background(), Options{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"nvme0n1": -1, "nvme1n1": 4096 + 3, "nvme3n1": -1}
	for _, d := range rep.Devices {
		at, failed := int64(-1), ""
		if d.NonZeroAtBytes != nil {
			at = *d.NonZeroAtBytes
		}
		for _, r := range d.Eligibility.Reasons {
			if r.Filter == prismv1.FilterZeroHeadAndTail {
				failed = r.Message
			}
		}
		switch {
		case d.Name == "nvme2n1":
			if d.NonZeroAtBytes == nil || !strings.Contains(failed, "no known format explains") {
				t.Errorf("%s: a byte in the last MiB: nonZeroAt %v, reason %q", d.Name, d.NonZeroAtBytes, failed)
			}
		case at != want[d.Name]:
			t.Errorf("%s: nonZeroAtBytes %d, want %d", d.Name, at, want[d.Name])
		case (at >= 0) != (failed != ""):
			t.Errorf("%s: nonZeroAt %d but ZeroHeadAndTail %q", d.Name, at, failed)
		}
	}
}
