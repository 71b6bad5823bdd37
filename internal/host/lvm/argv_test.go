package lvm

import (
	"slices"
	"testing"
)

func TestReportArgv(t *testing.T) {
	for _, tc := range []struct {
		got  []string
		want []string
	}{
		{PVsArgv(), []string{"pvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "pv_name,pv_uuid,pv_major,pv_minor,dev_size,pv_size,vg_name,vg_uuid,pv_tags,pv_missing"}},
		{VGsArgv(), []string{"vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "vg_name,vg_uuid,pv_count,lv_count,vg_size,vg_free,vg_extent_size,vg_missing_pv_count,vg_tags"}},
		{LVsArgv(), []string{"lvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "lv_name,lv_uuid,vg_name,lv_path,lv_size,lv_attr,lv_tags"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestWriteArgv(t *testing.T) {
	tags := []string{TagDBSlot, TagPartUUID("8f3c1e52-6a0b-4c1d-9e2f-0123456789ab")}
	must := func(argv []string, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return argv
	}
	for _, tc := range []struct {
		got, want []string
	}{
		{must(PVCreateArgv("/dev/nvme0n1p1", "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab")), []string{"pvcreate", "--uuid", "8f3c1e-526a-0b4c-1d9e-2f01-2345-6789ab", "--norestorefile", "/dev/nvme0n1p1"}},
		{must(VGCreateArgv("prism-db-49bd38895b20-00", "/dev/nvme0n1p1", tags...)), []string{"vgcreate",
			"--addtag", "prism.storage.io/db-slot", "--addtag", "prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab",
			"prism-db-49bd38895b20-00", "/dev/nvme0n1p1"}},
		{must(LVCreateArgv("prism-db-49bd38895b20-00", "prism-db-00", tags...)), []string{"lvcreate", "--name", "prism-db-00", "--extents", "100%FREE",
			"--addtag", "prism.storage.io/db-slot", "--addtag", "prism.storage.io/partuuid=8f3c1e52-6a0b-4c1d-9e2f-0123456789ab",
			"prism-db-49bd38895b20-00"}},
		{must(LVActivateArgv("prism-db-49bd38895b20-00", "prism-db-00")), []string{"lvchange", "--activate", "y", "prism-db-49bd38895b20-00/prism-db-00"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
		if slices.Contains(tc.got, "--yes") || slices.Contains(tc.got, "--force") || slices.Contains(tc.got, "-y") || slices.Contains(tc.got, "-f") {
			t.Errorf("%q answers LVM's wipe questions itself", tc.got)
		}
	}
	for name, err := range map[string]error{
		"relative device":   second(PVCreateArgv("nvme0n1p1", pvUUID)),
		"option as device":  second(PVCreateArgv("--yes", pvUUID)),
		"short PV UUID":     second(PVCreateArgv("/dev/sda1", "8f3c1e-526a")),
		"PV UUID as option": second(PVCreateArgv("/dev/sda1", "--yes-526a-0b4c-1d9e-2f01-2345-6789ab")),
		"undashed PV UUID":  second(PVCreateArgv("/dev/sda1", "8f3c1e526a0b4c1d9e2f0123456789ab")),
		"unclean device":    second(VGCreateArgv("vg", "/dev/../dev/sda1")),
		"bad VG name":       second(VGCreateArgv("-vg", "/dev/sda1")),
		"bad tag":           second(VGCreateArgv("vg", "/dev/sda1", "a b")),
		"bad LV name":       second(LVCreateArgv("vg", "snapshot0")),
		"bad LV tag":        second(LVCreateArgv("vg", "lv", "")),
		"activate bad VG":   second(LVActivateArgv("..", "lv")),
		"activate bad LV":   second(LVActivateArgv("vg", "a/b")),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func second(_ []string, err error) error { return err }
