package sysfs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClassReads(t *testing.T) {
	root := t.TempDir()
	put := func(rel, content string) {
		p := filepath.Join(root, "sys/class/block", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("nvme0n1/ro", "0\n")
	put("nvme0n1/queue/logical_block_size", "4096\n")
	put("nvme0n1/nvme0n1p2/partition", "2\n")
	put("nvme0n1/nvme0n1p2/start", "2048\n")
	put("nvme0n1/nvme0n1p2/size", "4096\n")
	put("nvme0n1/nvme0n1p2/dev", "259:3\n")
	put("nvme0n1/nvme0n1p2/holders/dm-0", "")
	put("nvme0n1/queue/notapartition", "x") // a directory entry without "partition": skipped
	h := Host{Root: root}
	if v, ok := h.ClassInt("nvme0n1", "queue/logical_block_size"); !ok || v != 4096 {
		t.Errorf("logical_block_size %d %t", v, ok)
	}
	if _, ok := h.ClassInt("nvme0n1", "missing"); ok {
		t.Error("a missing attribute read as ok")
	}
	if _, ok := h.ClassInt("../etc", "ro"); ok {
		t.Error("a name with a slash read as ok")
	}
	ps, err := h.KernelPartitions("nvme0n1")
	if err != nil || !reflect.DeepEqual(ps, map[int]KernelPartition{2: {Start: 2048, Size: 4096, Dev: "259:3"}}) {
		t.Errorf("partitions %+v, %v", ps, err)
	}
	if hs, err := h.ClassHolders("nvme0n1", "nvme0n1p2"); err != nil || !reflect.DeepEqual(hs, []string{"dm-0"}) {
		t.Errorf("holders %q, %v", hs, err)
	}
	if hs, err := h.ClassHolders("nvme0n1"); err != nil || hs != nil {
		t.Errorf("no holders dir: %q, %v", hs, err)
	}
	if _, err := (Host{Root: t.TempDir()}).KernelPartitions("nvme0n1"); err == nil {
		t.Error("a host without /sys/class/block: want an error, so that callers keep the inventory's view")
	}
}
