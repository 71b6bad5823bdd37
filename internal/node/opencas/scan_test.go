package opencas

import (
	"encoding/binary"
	"os"
	"path/filepath"
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
