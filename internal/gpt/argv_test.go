package gpt

import (
	"reflect"
	"strings"
	"testing"
)

func TestCreatePartitionArgv(t *testing.T) {
	slot0 := NewPartition{Number: 1, StartBytes: mib, SizeBytes: 2 * gib, Name: "prism-db-00", TypeGUID: CephBlockDBTypeGUID}
	cache := NewPartition{Number: 4, StartBytes: mib + 6*gib, SizeBytes: 6142 * mib, Name: "prism-cache", TypeGUID: LinuxFilesystemTypeGUID}
	for _, tc := range []struct {
		name string
		dev  string
		ss   int64
		p    NewPartition
		want []string
		err  string
	}{
		{"slot on 512-byte sectors", "/dev/nvme0n1", 512, slot0,
			[]string{"sgdisk", "--new=1:2048:4196351", "--change-name=1:prism-db-00", "--typecode=1:30cd0809-c2b2-499c-8879-2d6b78529876", "/dev/nvme0n1"}, ""},
		{"slot on 4096-byte sectors", "/dev/nvme0n1", 4096, slot0,
			[]string{"sgdisk", "--new=1:256:524543", "--change-name=1:prism-db-00", "--typecode=1:30cd0809-c2b2-499c-8879-2d6b78529876", "/dev/nvme0n1"}, ""},
		{"cache", "/host/dev/loop3", 512, cache,
			[]string{"sgdisk", "--new=4:12584960:25163775", "--change-name=4:prism-cache", "--typecode=4:0fc63daf-8483-4772-8e79-3d69d8477de4", "/host/dev/loop3"}, ""},
		{"unaligned start", "/dev/sda", 4096, NewPartition{Number: 1, StartBytes: 512, SizeBytes: gib, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "not whole 4096-byte sectors"},
		{"unaligned size", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: mib, SizeBytes: gib + 1, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "not whole 512-byte sectors"},
		{"number 0", "/dev/sda", 512, NewPartition{Number: 0, StartBytes: mib, SizeBytes: gib, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "partition number 0"},
		{"number 129", "/dev/sda", 512, NewPartition{Number: 129, StartBytes: mib, SizeBytes: gib, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "partition number 129"},
		{"start 0", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: 0, SizeBytes: gib, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "not a byte range"},
		{"overflow", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: mib, SizeBytes: 1 << 62, Name: "x", TypeGUID: CephBlockDBTypeGUID}, nil, "not a byte range"},
		{"no name", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: mib, SizeBytes: gib, TypeGUID: CephBlockDBTypeGUID}, nil, "empty partition name"},
		{"long name", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: mib, SizeBytes: gib, Name: strings.Repeat("a", 37), TypeGUID: CephBlockDBTypeGUID}, nil, "36"},
		{"bad type", "/dev/sda", 512, NewPartition{Number: 1, StartBytes: mib, SizeBytes: gib, Name: "x", TypeGUID: "8300"}, nil, "not a GUID"},
		{"bad sector size", "/dev/sda", 0, slot0, nil, "sector size 0"},
		{"relative device", "sda", 512, slot0, nil, "not a clean absolute path"},
		{"option-like device", "--zap-all", 512, slot0, nil, "not a clean absolute path"},
		{"unclean device", "/dev/../dev/sda", 512, slot0, nil, "not a clean absolute path"},
	} {
		got, err := CreatePartitionArgv(tc.dev, tc.ss, tc.p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q, %v\nwant %q", tc.name, got, err, tc.want)
		}
	}
}

func TestCreateTableArgv(t *testing.T) {
	got, err := CreateTableArgv("/dev/nvme0n1", Table{})
	if want := []string{"sgdisk", "--clear", "/dev/nvme0n1"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("empty device: %q, %v", got, err)
	}
	// Never over an existing table, even an empty GPT or a dos table: --clear destroys it.
	for _, tab := range []Table{
		{Label: LabelGPT, SectorSize: 512},
		{Label: LabelDOS, SectorSize: 512, Partitions: []Partition{{Number: 1}}},
	} {
		if got, err := CreateTableArgv("/dev/nvme0n1", tab); err == nil || got != nil {
			t.Errorf("%s table: got %q, want a refusal", tab.Label, got)
		}
	}
	if _, err := CreateTableArgv("", Table{}); err == nil {
		t.Error("no device: want an error")
	}
}

func TestWipeRereadForgetSettleArgv(t *testing.T) {
	wipe, err := WipeArgvs("/dev/sdb")
	if want := [][]string{{"wipefs", "--all", "/dev/sdb"}, {"sgdisk", "--zap-all", "/dev/sdb"}}; err != nil || !reflect.DeepEqual(wipe, want) {
		t.Errorf("WipeArgvs = %q, %v", wipe, err)
	}
	if _, err := WipeArgvs("dev/sdb"); err == nil {
		t.Error("WipeArgvs(relative): want an error")
	}
	for _, tc := range []struct {
		name string
		got  func() ([]string, error)
		want []string
	}{
		{"reread", func() ([]string, error) { return RereadArgv("/dev/sdb", 4) }, []string{"partx", "--update", "--nr", "1:4", "/dev/sdb"}},
		{"reread 0", func() ([]string, error) { return RereadArgv("/dev/sdb", 0) }, nil},
		{"reread 129", func() ([]string, error) { return RereadArgv("/dev/sdb", 129) }, nil},
		{"reread no dev", func() ([]string, error) { return RereadArgv("", 4) }, nil},
		{"forget", func() ([]string, error) { return ForgetPartitionsArgv("/dev/sdb", 7) }, []string{"partx", "--delete", "--nr", "1:7", "/dev/sdb"}},
		{"forget 0", func() ([]string, error) { return ForgetPartitionsArgv("/dev/sdb", 0) }, nil},
		{"settle", func() ([]string, error) { return SettleArgv(), nil }, []string{"udevadm", "settle", "--timeout=30"}},
	} {
		got, err := tc.got()
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: got %q, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if got := ReadTableArgv("/dev/sdb"); !reflect.DeepEqual(got, []string{"sfdisk", "--json", "/dev/sdb"}) {
		t.Errorf("ReadTableArgv = %q", got)
	}
}
