package opencas

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestScanPartition follows the by-id link under the host root as udev makes it (relative)
// and finds Open CAS metadata (the OCF superblock magic at byte 4), or nothing on zeros.
func TestScanPartition(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dev/disk/by-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(root, "dev/nvme0n1p3")
	img := make([]byte, 4<<20)
	if err := os.WriteFile(dev, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../nvme0n1p3", filepath.Join(root, part)); err != nil {
		t.Fatal(err)
	}
	sigs, err := ScanPartition(root, part)
	if err != nil || len(sigs) != 0 || sigs == nil {
		t.Fatalf("zeros: %v %v", sigs, err)
	}
	binary.LittleEndian.PutUint32(img[4:], 0x187e1ca6)
	if err := os.WriteFile(dev, img, 0o644); err != nil {
		t.Fatal(err)
	}
	sigs, err = ScanPartition(root, part)
	if err != nil || len(sigs) != 1 || sigs[0].Kind != prismv1.SignatureOpenCAS {
		t.Fatalf("metadata: %v %v", sigs, err)
	}
	if _, err := ScanPartition(root, "/dev/disk/by-id/missing"); err == nil {
		t.Error("a missing partition scanned")
	}
	if _, err := ScanPartition(root, "/dev/nvme0n1p3"); err == nil {
		t.Error("a kernel name accepted")
	}
}

// A start runs only while the partition's path names the partition that was scanned: a name
// given to another device meanwhile refuses it.
func TestCheckPinnedRefusesAPathThatMovedOn(t *testing.T) {
	dir := t.TempDir()
	part := filepath.Join(dir, "part")
	if err := os.WriteFile(part, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	pin, err := os.Open(part)
	if err != nil {
		t.Fatal(err)
	}
	defer pin.Close()
	if err := checkPinned(pin, part); err != nil {
		t.Fatalf("the path still names the pinned partition: %v", err)
	}
	if err := os.Rename(part, part+".gone"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, []byte("someone's data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := checkPinned(pin, part); err == nil || !strings.Contains(err.Error(), "no longer names the partition that was scanned") {
		t.Fatalf("the path names another file now: %v, want a refusal", err)
	}
}
