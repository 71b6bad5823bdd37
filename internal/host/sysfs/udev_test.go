package sysfs

import (
	"reflect"
	"strings"
	"testing"
)

// Format of systemd-udevd's database (src/libsystemd/sd-device/device-private.c, device_update_db):
// S: symlinks, E: properties, plus I:/G:/Q:/V:/W: bookkeeping lines.
const udevNVMe = `S:disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE751000AB375AGN
S:disk/by-id/nvme-eui.5cd2e4dd2d6b0100
S:disk/by-path/pci-0000:5e:00.0-nvme-1
W:4
I:9381412
E:ID_SERIAL_SHORT=PHKE751000AB375AGN
E:ID_WWN=eui.5cd2e4dd2d6b0100
E:ID_MODEL=INTEL SSDPE21K375GA
E:ID_SERIAL=INTEL SSDPE21K375GA_PHKE751000AB375AGN
E:ID_PATH=pci-0000:5e:00.0-nvme-1
G:systemd
Q:systemd
V:1
`

func TestParseUdevData(t *testing.T) {
	rec, err := ParseUdevData([]byte(udevNVMe))
	if err != nil {
		t.Fatal(err)
	}
	wantLinks := []string{
		"disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE751000AB375AGN",
		"disk/by-id/nvme-eui.5cd2e4dd2d6b0100",
		"disk/by-path/pci-0000:5e:00.0-nvme-1",
	}
	if !reflect.DeepEqual(rec.Symlinks, wantLinks) {
		t.Errorf("symlinks = %q", rec.Symlinks)
	}
	if rec.Properties["ID_MODEL"] != "INTEL SSDPE21K375GA" || rec.Properties["ID_SERIAL_SHORT"] != "PHKE751000AB375AGN" {
		t.Errorf("properties = %v", rec.Properties)
	}
	if len(rec.Properties) != 5 {
		t.Errorf("want 5 properties, got %d", len(rec.Properties))
	}
}

func TestParseUdevDataErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"no colon":      {"S:disk/by-id/a\nbogus\n", "line 2"},
		"empty symlink": {"S:\n", "line 1: empty symlink"},
		"property":      {"E:NOEQUALS\n", `line 1: property "NOEQUALS"`},
		"empty key":     {"E:=x\n", "line 1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseUdevData([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v does not mention %q", err, tc.want)
			}
		})
	}
}

func TestParseUdevDataCRLFAndBlankLines(t *testing.T) {
	rec, err := ParseUdevData([]byte("\r\nE:ID_BUS=ata\r\n\nS:disk/by-id/ata-X\r\n"))
	if err != nil || rec.Properties["ID_BUS"] != "ata" || len(rec.Symlinks) != 1 || rec.Symlinks[0] != "disk/by-id/ata-X" {
		t.Fatalf("got %+v, %v", rec, err)
	}
}

func FuzzParseUdevData(f *testing.F) {
	f.Add([]byte(udevNVMe))
	f.Add([]byte("E:=\nS:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := ParseUdevData(data)
		if err != nil {
			return
		}
		for _, l := range rec.Symlinks {
			if l == "" {
				t.Fatal("accepted an empty symlink")
			}
		}
		for k := range rec.Properties {
			if k == "" {
				t.Fatal("accepted an empty property key")
			}
		}
	})
}
