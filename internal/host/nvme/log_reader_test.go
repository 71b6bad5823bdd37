package nvme

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordedLogReader(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "nvme3"), 0o755)
	os.WriteFile(filepath.Join(dir, "nvme3", "log-ca.bin"), []byte("0123456789abcdef"), 0o644)
	r := RecordedLogReader{Dir: dir}

	b, err := r.Log(ctx, "nvme3", 0xCA, 8)
	if err != nil || string(b) != "01234567" {
		t.Fatalf("got %q, %v; want the first 8 bytes", b, err)
	}
	if b = append(b, 'x'); string(b[:8]) != "01234567" {
		t.Fatal("append changed the page") // capacity is clipped to length
	}
	cases := []struct {
		ctrl   string
		id     uint8
		length int
		want   string
	}{
		{"nvme3", 0xCA, 20, "16 bytes, want 20"},
		{"nvme3", 0xCA, 6, "positive multiple of 4"},
		{"nvme3", 0xCA, 0, "positive multiple of 4"},
		{"nvme3", 0xCA, 2 << 20, "positive multiple of 4"},
		{"../nvme3", 0xCA, 8, "invalid controller name"},
		{"nvme3", 0x02, 8, "log-02.bin"},
	}
	for _, c := range cases {
		if _, err := r.Log(ctx, c.ctrl, c.id, c.length); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %#02x %d: err = %v, want %q", c.ctrl, c.id, c.length, err, c.want)
		}
	}
	if _, err := r.Log(ctx, "nvme3", 0x02, 8); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing page: %v, want not-exist", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Log(cctx, "nvme3", 0xCA, 8); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestLogFileName(t *testing.T) {
	for id, want := range map[uint8]string{0x02: "log-02.bin", 0xC0: "log-c0.bin", 0xCA: "log-ca.bin"} {
		if got := LogFileName(id); got != want {
			t.Errorf("%#02x: %s, want %s", id, got, want)
		}
	}
}

// Every fixture directory reads through the LogReader interface.
func TestRecordedFixturesViaInterface(t *testing.T) {
	var lr LogReader = recordedLogs
	for dir, id := range map[string]uint8{
		"intel-optane-900p-ssdped1d280ga": LogIDSMART,
		"wdc-wus4bb019d4m9e7":             LogIDOCPSMART,
		"intel-dc-p3600-ssdpedme016t4f":   LogIDIntelSMARTAdd,
	} {
		if b, err := lr.Log(context.Background(), dir, id, 512); err != nil || len(b) != 512 {
			t.Errorf("%s: %d bytes, %v", dir, len(b), err)
		}
	}
}
