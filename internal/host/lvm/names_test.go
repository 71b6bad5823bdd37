package lvm

import (
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestDBVolumeNames checks the API's slot volume names against LVM's naming rules.
func TestDBVolumeNames(t *testing.T) {
	long := "/dev/disk/by-id/nvme-" + strings.Repeat("X", 490)
	for _, tc := range []struct {
		path    string
		index   int32
		vg, lv  string
		wantErr bool
	}{
		{"/dev/disk/by-id/nvme-PRISMTEST_FAST", 0, "prism-db-49bd38895b20-00", "prism-db-00", false},
		{"/dev/disk/by-id/nvme-PRISMTEST_FAST", 1, "prism-db-49bd38895b20-01", "prism-db-01", false},
		{"/dev/disk/by-id/nvme-PRISMTEST_FAST", 126, "prism-db-49bd38895b20-126", "prism-db-126", false},
		{"", 0, "", "", true},
		{"/dev/disk/by-id/x", -1, "", "", true},
	} {
		vg, lv, err := prismv1.DBVolumeNames(tc.path, tc.index)
		if (err != nil) != tc.wantErr || vg != tc.vg || lv != tc.lv {
			t.Errorf("DBVolumeNames(%q, %d) = %q, %q, %v; want %q, %q, error %v", tc.path, tc.index, vg, lv, err, tc.vg, tc.lv, tc.wantErr)
		}
	}
	// Every name is valid, also for paths LVM could not take as they are; different devices
	// and slots get different VGs; the same inputs the same names, every time.
	seen := map[string]string{}
	for _, p := range []string{"/dev/disk/by-id/nvme-INTEL_SSDPF21Q800GB_PHAL1234@x:y#z", "/dev/disk/by-path/pci-0000:3b:00.0-nvme-1", long, "/dev/disk/by-id/-lead"} {
		for i := int32(0); i <= 126; i++ {
			vg, lv, err := prismv1.DBVolumeNames(p, i)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckVGName(vg); err != nil {
				t.Error(err)
			}
			if err := CheckLVName(lv); err != nil {
				t.Error(err)
			}
			if again, _, _ := prismv1.DBVolumeNames(p, i); again != vg {
				t.Fatalf("not stable: %q then %q", vg, again)
			}
			if prev, ok := seen[vg]; ok {
				t.Fatalf("%q for %s and %s", vg, prev, p)
			}
			seen[vg] = p
		}
	}
}

func TestLVPath(t *testing.T) {
	if got := LVPath("prism-db-49bd38895b20-00", "prism-db-00"); got != "/dev/prism-db-49bd38895b20-00/prism-db-00" {
		t.Fatal(got)
	}
	if got := prismv1.DBVolumePath("/dev/disk/by-id/nvme-PRISMTEST_FAST", 0); got != LVPath("prism-db-49bd38895b20-00", "prism-db-00") {
		t.Fatalf("DBVolumePath = %q", got)
	}
	if got := prismv1.DBVolumePath("", 0); got != "" {
		t.Fatalf("DBVolumePath without a stable path = %q", got)
	}
}

func TestCheckNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		vgOK bool
		lvOK bool
	}{
		{"prism-db-49bd38895b20-00", true, true},
		{"a+b_c.d-e", true, true},
		{"", false, false},
		{".", false, false},
		{"..", false, false},
		{"-x", false, false},
		{"a b", false, false},
		{"a/b", false, false},
		{"é", false, false},
		{strings.Repeat("a", 127), true, true},
		{strings.Repeat("a", 128), false, false},
		{"snapshot1", true, false},
		{"pvmove0", true, false},
		{"x_tmeta", true, false},
		{"x_rimage_0", true, false},
	} {
		if err := CheckVGName(tc.name); (err == nil) != tc.vgOK {
			t.Errorf("CheckVGName(%q) = %v, want ok %v", tc.name, err, tc.vgOK)
		}
		if err := CheckLVName(tc.name); (err == nil) != tc.lvOK {
			t.Errorf("CheckLVName(%q) = %v, want ok %v", tc.name, err, tc.lvOK)
		}
	}
}

func TestCheckTag(t *testing.T) {
	for tag, ok := range map[string]bool{
		TagDBSlot: true,
		TagPartUUID("8F3C1E52-6A0B-4C1D-9E2F-0123456789AB"): true,
		"owner=someone!:#&":       true,
		"":                        false,
		"-x":                      false,
		"a,b":                     false,
		"a b":                     false,
		"a@b":                     false,
		strings.Repeat("t", 1024): true,
		strings.Repeat("t", 1025): false,
	} {
		if err := CheckTag(tag); (err == nil) != ok {
			t.Errorf("CheckTag(%q) = %v, want ok %v", tag, err, ok)
		}
	}
}

func TestDMName(t *testing.T) {
	for _, tc := range []struct{ vg, lv, want string }{
		{"prism-db-ce47c0db9445-00", "prism-db-00", "prism--db--ce47c0db9445--00-prism--db--00"},
		{"vg", "lv", "vg-lv"},
		{"ceph-1a2b", "osd-block-3c4d", "ceph--1a2b-osd--block--3c4d"},
	} {
		if got := DMName(tc.vg, tc.lv); got != tc.want {
			t.Errorf("DMName(%q, %q) = %q, want %q", tc.vg, tc.lv, got, tc.want)
		}
	}
}
