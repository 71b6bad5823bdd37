package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDeviceMapperFindsTheKernelName(t *testing.T) {
	root := t.TempDir()
	for name, dm := range map[string]string{"dm-0": "ceph--1a-osd--block--2b\n", "dm-2": "prism--db--0a--00-prism--db--00\n"} {
		dir := filepath.Join(root, "sys", "class", "block", name, "dm")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "name"), []byte(dm), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A disk is no device-mapper device, whatever it holds.
	if err := os.MkdirAll(filepath.Join(root, "sys", "class", "block", "nvme0n1"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := Host{Root: root}
	if got, err := h.DeviceMapper("prism--db--0a--00-prism--db--00"); err != nil || got != "dm-2" {
		t.Errorf("got %q, %v; want dm-2", got, err)
	}
	if _, err := h.DeviceMapper("prism--db--0a--01-prism--db--01"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an inactive LV: %v, want os.ErrNotExist", err)
	}
	if _, err := (Host{Root: t.TempDir()}).DeviceMapper("x"); err == nil {
		t.Error("no /sys/class/block: no error")
	}
}
