package inventory

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/signature"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// More disks than signature readers: the report must still list them in BlockDevices
// order, each with its own signatures, run after run, however many readers read them.
func TestTakeOrderWithConcurrentReads(t *testing.T) {
	contents := []string{"empty", "gpt", "ext4", "xfs", "lvm2", "bluestore"}
	n := fixturehost.Node{Name: "many"}
	for i := range 3*maxSignatureReaders + 1 {
		n.Devices = append(n.Devices, fixturehost.Device{
			Name: fmt.Sprintf("nvme%dn1", i), Model: "Test NVMe", Serial: fmt.Sprintf("S%03d", i), Bus: "nvme",
			SizeBytes: 1 << 40, Content: contents[i%len(contents)], Source: "test",
		})
	}
	root := t.TempDir()
	if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	host := sysfs.Host{Root: root}
	disks, err := host.BlockDevices(false)
	if err != nil {
		t.Fatal(err)
	}
	var want []prismv1.Device
	for _, disk := range disks {
		sigs, err := signature.DetectPath(host.DevicePath(disk.Name))
		if err != nil {
			t.Fatal(err)
		}
		d := prismv1.Device{Name: disk.Name}
		for _, s := range sigs {
			d.Signatures = append(d.Signatures, prismv1.DeviceSignature{Kind: s.Kind.API(), Name: s.Name, OffsetBytes: s.Offset})
		}
		want = append(want, d)
	}
	for i := range 6 {
		readers := []int{0, 1, 3}[i%3] // the default, the agent's one reader, and a few
		rep, err := Take(context.Background(), Options{Host: host, SignatureReaders: readers})
		if err != nil {
			t.Fatal(err)
		}
		var got []prismv1.Device
		for _, d := range rep.Devices {
			got = append(got, prismv1.Device{Name: d.Name, Signatures: d.Signatures})
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d readers: got  %+v\nwant %+v", readers, got, want)
		}
	}
	if want[2].Name != "nvme2n1" || want[10].Name != "nvme10n1" {
		t.Errorf("BlockDevices order: %s at 2, %s at 10", want[2].Name, want[10].Name)
	}
}

// BenchmarkTake measures inventory.Take on each fixture node without process start-up:
// sysfs, the udev database, recorded Identify pages, the drive database and signature
// detection on the fixture's small device files.
func BenchmarkTake(b *testing.B) {
	nodes, err := fixturehost.LoadAll(filepath.Join(repo, fixturehost.NodesDir))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range nodes {
		b.Run(n.Name, func(b *testing.B) {
			root := b.TempDir()
			if err := fixturehost.Build(n, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
				b.Fatal(err)
			}
			opts := Options{Host: sysfs.Host{Root: root}, Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(root, "identify")}}
			if _, err := Take(context.Background(), opts); err != nil { // parses the drive database once
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Take(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(n.Devices)), "devices")
		})
	}
}
