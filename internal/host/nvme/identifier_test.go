package nvme

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRecordedIdentifierRejectsEscapes(t *testing.T) {
	r := RecordedIdentifier{Dir: "testdata"}
	for _, name := range []string{"", ".", "..", "../testdata", "a/b"} {
		if _, err := r.Controller(context.Background(), name); err == nil || !strings.Contains(err.Error(), "invalid controller name") {
			t.Errorf("%q: err = %v", name, err)
		}
	}
}

func TestRecordedIdentifierWrongSize(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "nvme9"), 0o755)
	os.WriteFile(filepath.Join(dir, "nvme9", "id-ctrl.bin"), []byte("short"), 0o644)
	if _, err := (RecordedIdentifier{Dir: dir}).Controller(context.Background(), "nvme9"); err == nil {
		t.Fatal("want size error")
	}
}

func TestDeviceIdentifierNotNVMe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ioctl path is Linux-only")
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	// A regular file stands in for a non-device path.
	os.WriteFile(filepath.Join(root, "dev", "nvme0"), make([]byte, 8), 0o644)
	d := DeviceIdentifier{Root: root}
	if _, err := d.Controller(context.Background(), "nvme0"); !errors.Is(err, ErrNotNVMe) {
		t.Errorf("regular file: %v, want ErrNotNVMe", err)
	}
	if _, err := d.Controller(context.Background(), "nvme1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want not-exist", err)
	}
	if _, err := d.Controller(context.Background(), "nvme1"); !errors.Is(err, ErrNoCharDevice) {
		t.Errorf("missing: %v, want ErrNoCharDevice", err)
	}
	// /dev/null is a real character device that does not speak NVMe: ENOTTY.
	if _, err := IdentifyController(context.Background(), "/dev/null"); !errors.Is(err, ErrNotNVMe) {
		t.Errorf("/dev/null: %v, want ErrNotNVMe", err)
	}
	if _, err := IdentifyNamespace(context.Background(), "/dev/null", 0); err == nil {
		t.Error("nsid 0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IdentifyController(ctx, "/dev/null"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled ctx: %v", err)
	}
}

// TestRealDevice identifies the first NVMe controller of this machine, read-only.
func TestRealDevice(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("NVMe passthrough is Linux-only")
	}
	ctrls, _ := filepath.Glob("/dev/nvme[0-9]*")
	var ctrl string
	for _, c := range ctrls {
		if !strings.Contains(filepath.Base(c)[4:], "n") { // nvme0, not nvme0n1
			ctrl = c
			break
		}
	}
	if ctrl == "" {
		t.Skip("no NVMe controller (/dev/nvmeN) on this machine")
	}
	if os.Geteuid() != 0 {
		t.Skipf("identifying %s needs root", ctrl)
	}
	b, err := IdentifyController(context.Background(), ctrl)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseIdentifyController(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s fw %s vid %#04x ver %s nn %d", ctrl, c.Model, c.Firmware, c.VendorID, c.Version, c.NumberOfNamespaces)
	if c.NumberOfNamespaces == 0 {
		return
	}
	nb, err := IdentifyNamespace(context.Background(), ctrl, 1)
	if err != nil {
		t.Logf("namespace 1: %v", err)
		return
	}
	n, err := ParseIdentifyNamespace(nb)
	if errors.Is(err, ErrInactiveNamespace) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ns1: %d blocks of %d B", n.Size, n.LBASize())
}
