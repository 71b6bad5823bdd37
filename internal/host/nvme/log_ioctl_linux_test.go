//go:build linux

package nvme

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestGetLogCDW(t *testing.T) {
	tests := []struct {
		id           uint8
		length       int
		cdw10, cdw11 uint32
	}{
		// 512 B = 128 dwords, NUMD = 127 = 0x7f in CDW10 31:16; RAE is bit 15.
		{0x02, 512, 0x007f_8002, 0},
		{0xCA, 4, 0x0000_80ca, 0},
		// 1 MiB = 262,144 dwords, NUMD = 262,143 = 0x3ffff: NUMDL 0xffff, NUMDU 0x3.
		{0xC0, 1 << 20, 0xffff_80c0, 3},
	}
	for _, tt := range tests {
		c10, c11 := getLogCDW(tt.id, tt.length)
		if c10 != tt.cdw10 || c11 != tt.cdw11 {
			t.Errorf("%#02x/%d: cdw10 %#x cdw11 %#x, want %#x %#x", tt.id, tt.length, c10, c11, tt.cdw10, tt.cdw11)
		}
	}
	// Log 09h for endurance group 1: the group is the Log Specific Identifier, CDW11 31:16.
	if c10, c11 := getLogCDWSpecific(LogIDEnduranceGroup, 1, 512); c10 != 0x007f_8009 || c11 != 0x0001_0000 {
		t.Errorf("log 09h group 1: cdw10 %#x cdw11 %#x, want 0x7f8009 0x10000", c10, c11)
	}
}

func TestGetLogPageNotNVMe(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	os.WriteFile(filepath.Join(root, "dev", "nvme0"), make([]byte, 8), 0o644)
	d := DeviceLogReader{Root: root}
	ctx := context.Background()
	if _, err := d.Log(ctx, "nvme0", LogIDSMART, 512); !errors.Is(err, ErrNotNVMe) {
		t.Errorf("regular file: %v, want ErrNotNVMe", err)
	}
	if _, err := d.Log(ctx, "nvme1", LogIDSMART, 512); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v, want not-exist", err)
	}
	if _, err := d.Log(ctx, "..", LogIDSMART, 512); err == nil {
		t.Error("escaping name accepted")
	}
	// /dev/null is a character device that does not speak NVMe: ENOTTY.
	if _, err := GetLogPage(ctx, "/dev/null", NSIDAll, LogIDSMART, 512); !errors.Is(err, ErrNotNVMe) {
		t.Errorf("/dev/null: %v, want ErrNotNVMe", err)
	}
	if _, err := GetLogPage(ctx, "/dev/null", NSIDAll, LogIDSMART, 510); err == nil {
		t.Error("length not a dword multiple accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GetLogPage(cctx, "/dev/null", NSIDAll, LogIDSMART, 512); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}
