package sysfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attribute layouts are the kernel's (Linux 6.x): an NVMe namespace has wwid beside its
// dev and its controller's serial under device/; a SCSI disk has both under device/; a
// virtio disk has serial at the top; a loop device has loop/backing_file; every disk has
// diskseq since 5.15.
func TestIdentityOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  Identity
		err   string
	}{
		{"nvme namespace", map[string]string{"dev": "259:0\n", "wwid": "eui.0025385b71b07e2f\n", "device/serial": "S4EWNX0R123456  \n", "diskseq": "9\n"},
			Identity{WWID: "eui.0025385b71b07e2f", Serial: "S4EWNX0R123456", DiskSeq: 9}, ""},
		{"scsi disk", map[string]string{"dev": "8:0\n", "device/wwid": "naa.5000c500a1b2c3d4   \n", "device/serial": "ZA1ABC23\n", "diskseq": "1\n"},
			Identity{WWID: "naa.5000c500a1b2c3d4", Serial: "ZA1ABC23", DiskSeq: 1}, ""},
		{"virtio disk", map[string]string{"dev": "254:0\n", "serial": "PRISM-E2E-QLC\n", "diskseq": "3\n"},
			Identity{Serial: "PRISM-E2E-QLC", DiskSeq: 3}, ""},
		{"loop device", map[string]string{"dev": "7:3\n", "loop/backing_file": "/var/tmp/a.img\n", "diskseq": "41\n"},
			Identity{BackingFile: "/var/tmp/a.img", DiskSeq: 41}, ""},
		{"an old kernel without diskseq", map[string]string{"dev": "7:3\n", "loop/backing_file": "/var/tmp/a.img\n"},
			Identity{BackingFile: "/var/tmp/a.img"}, ""},
		{"diskseq that is not a number", map[string]string{"dev": "7:3\n", "diskseq": "x\n"}, Identity{}, `diskseq: "x" is not a number`},
		{"no device under the number", map[string]string{}, Identity{}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "sys/dev/block/7:3")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for rel, content := range tc.files {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Host{Root: root}.IdentityOf(7, 3)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("IdentityOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// DiskOf follows /sys/dev/block/M:m as the kernel lays it out (a relative link to the
// partition's directory inside its disk's) and refuses a number that names a whole disk.
func TestDiskOfNamesThePartitionsDisk(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "sys", "devices", "virtual", "block", "loop3")
	for _, f := range []struct{ path, text string }{
		{filepath.Join(disk, "dev"), "7:3\n"},
		{filepath.Join(disk, "loop3p1", "dev"), "259:4\n"},
		{filepath.Join(disk, "loop3p1", "partition"), "1\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(root, "sys", "dev", "block")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"7:3": "../../devices/virtual/block/loop3", "259:4": "../../devices/virtual/block/loop3/loop3p1"} {
		if err := os.Symlink(target, filepath.Join(links, link)); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Root: root}
	if got, err := h.DiskOf(259, 4); err != nil || got != "7:3" {
		t.Fatalf("DiskOf(259:4) = %q, %v; want 7:3", got, err)
	}
	if got, err := h.DiskOf(7, 3); err == nil {
		t.Fatalf("DiskOf(7:3), a whole disk = %q, want an error", got)
	}
	if _, err := h.DiskOf(259, 9); err == nil {
		t.Fatal("DiskOf of a number the kernel does not have: want an error")
	}
}
