package gpt

import (
	"reflect"
	"testing"
)

func TestWipeRereadForgetSettleArgv(t *testing.T) {
	wipe, err := WipeSignaturesArgv("/dev/sdb")
	if want := []string{"wipefs", "--all", "--force", "/dev/sdb"}; err != nil || !reflect.DeepEqual(wipe, want) {
		t.Errorf("WipeSignaturesArgv = %q, %v", wipe, err)
	}
	for _, bad := range []string{"dev/sdb", "--all", "/dev/../sdb", ""} {
		if _, err := WipeSignaturesArgv(bad); err == nil {
			t.Errorf("WipeSignaturesArgv(%q): want an error", bad)
		}
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
