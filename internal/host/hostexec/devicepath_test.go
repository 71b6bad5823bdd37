package hostexec

import (
	"strings"
	"testing"
)

func TestCheckDevicePath(t *testing.T) {
	for _, tc := range []struct {
		dev, wantErr string
	}{
		{"/dev/nvme0n1", ""},
		{"/dev/disk/by-id/nvme-X_Y-part1", ""},
		{"", "no device path"},
		{"-rf", "not a clean absolute path"},
		{"dev/sda", "not a clean absolute path"},
		{"/dev/../etc/passwd", "not a clean absolute path"},
		{"/dev/sda/", "not a clean absolute path"},
		{"//dev/sda", "not a clean absolute path"},
	} {
		err := CheckDevicePath(tc.dev)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckDevicePath(%q) = %v, want %q", tc.dev, err, tc.wantErr)
		}
	}
}
