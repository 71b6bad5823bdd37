package blkid

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The testdata files are the real tools' output (util-linux 2.38.1, Debian 12) on a loop
// device: ext4, a GPT with one partition, and the device after zeroing.
func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseWipefs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []Signature
	}{
		{"wipefs-ext4.json", []Signature{{Device: "loop0", Type: "ext4", Offset: 0x438}}},
		{"wipefs-gpt.json", []Signature{{Device: "loop0", Type: "gpt", Offset: 0x200}, {Device: "loop0", Type: "gpt", Offset: 0xc7ffe00}, {Device: "loop0", Type: "PMBR", Offset: 0x1fe}}},
		{"wipefs-empty.json", nil},
	} {
		got, err := ParseWipefs(read(t, tc.file))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.file, got, err, tc.want)
		}
	}
	if got, err := ParseWipefs(nil); err != nil || got != nil {
		t.Errorf("no output: %+v, %v", got, err)
	}
	for _, bad := range []string{`{`, `{}`, `{"signatures":[{"offset":"0x10"}]}`, `{"signatures":[{"type":"ext4","offset":"ten"}]}`, `{"signatures":[{"type":"ext4","offset":"-1"}]}`, `[]`} {
		if got, err := ParseWipefs([]byte(bad)); err == nil {
			t.Errorf("%s: %+v, want an error", bad, got)
		}
	}
}

func TestParseProbe(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []Signature
		err       string
	}{
		{"ext4", string(read(t, "blkid-ext4.export")), []Signature{{Type: "ext4", Usage: "filesystem"}}, ""},
		{"gpt", string(read(t, "blkid-gpt.export")), []Signature{{Type: "gpt", Usage: "partition table"}}, ""},
		{"nothing (exit 2, no output)", "", nil, ""},
		{"a partition's entry alone", "DEVNAME=/dev/sda1\nPART_ENTRY_SCHEME=gpt\nPART_ENTRY_NAME=x\n", nil, ""},
		{"content without a name", "DEVNAME=/dev/sda\nUUID=1234\n", nil, "named no TYPE"},
		{"not KEY=value", "DEVNAME=/dev/sda\nhello\n", nil, "not KEY=value"},
		{"lower-case key", "type=ext4\n", nil, "not KEY=value"},
	} {
		got, err := ParseProbe([]byte(tc.out))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %+v, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestArgv(t *testing.T) {
	if got, _ := WipefsArgv("/dev/sdb"); !reflect.DeepEqual(got, []string{"wipefs", "--no-act", "--json", "/dev/sdb"}) {
		t.Errorf("WipefsArgv = %q", got)
	}
	if got, _ := WipefsArgv("/dev/sdb", "/dev/sdc"); !reflect.DeepEqual(got, []string{"wipefs", "--no-act", "--json", "/dev/sdb", "/dev/sdc"}) {
		t.Errorf("WipefsArgv of two = %q", got)
	}
	if _, err := WipefsArgv(); err == nil {
		t.Error("WipefsArgv(): want an error")
	}
	if got, _ := ProbeArgv("/dev/sdb", 0, 0); !reflect.DeepEqual(got, []string{"blkid", "--probe", "--output", "export", "/dev/sdb"}) {
		t.Errorf("ProbeArgv whole = %q", got)
	}
	if got, _ := ProbeArgv("/dev/sdb", 1048576, 4096); !reflect.DeepEqual(got, []string{"blkid", "--probe", "--output", "export", "--offset", "1048576", "--size", "4096", "/dev/sdb"}) {
		t.Errorf("ProbeArgv range = %q", got)
	}
	for _, bad := range []func() error{
		func() error { _, err := WipefsArgv("--all"); return err },
		func() error { _, err := ProbeArgv("sdb", 0, 0); return err },
		func() error { _, err := ProbeArgv("/dev/sdb", -1, 10); return err },
		func() error { _, err := ProbeArgv("/dev/sdb", 10, 0); return err },
	} {
		if bad() == nil {
			t.Error("want an error")
		}
	}
}

func FuzzParseWipefs(f *testing.F) {
	for _, name := range []string{"wipefs-ext4.json", "wipefs-gpt.json", "wipefs-empty.json"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sigs, err := ParseWipefs(data)
		if err != nil {
			return
		}
		for _, s := range sigs {
			if s.Type == "" || s.Offset < 0 {
				t.Fatalf("%+v", s)
			}
		}
	})
}

func FuzzParseProbe(f *testing.F) {
	for _, name := range []string{"blkid-ext4.export", "blkid-gpt.export"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sigs, err := ParseProbe(data)
		if err != nil {
			return
		}
		for _, s := range sigs {
			if s.Type == "" {
				t.Fatalf("%+v", s)
			}
		}
	})
}

// The values are as blkid_probe_lookup_value returns them for libblkid 2.38: names and
// offsets NUL-terminated, the length counting the NUL; magics raw.
func TestParseProbeValues(t *testing.T) {
	for _, tc := range []struct {
		name            string
		typ, off, magic string
		want            Signature
		wantLen         int
		err             string
	}{
		{"ext4", "ext4\x00", "1080\x00", "\x53\xef", Signature{Type: "ext4", Offset: 1080}, 2, ""},
		{"gpt", "gpt\x00", "512\x00", "EFI PART", Signature{Type: "gpt", Offset: 512}, 8, ""},
		{"backup gpt", "gpt\x00", "6442450432\x00", "EFI PART", Signature{Type: "gpt", Offset: 6442450432}, 8, ""},
		{"LVM", "LVM2_member\x00", "536\x00", "LVM2 001", Signature{Type: "LVM2_member", Offset: 536}, 8, ""},
		{"swap", "swap\x00", "4086\x00", "SWAPSPACE2", Signature{Type: "swap", Offset: 4086}, 10, ""},
		{"magic with NUL bytes", "zfs_member\x00", "135168\x00", "\x0c\xb1\xba\x00\x00\x00\x00\x00", Signature{Type: "zfs_member", Offset: 135168}, 8, ""},
		{"without NUL", "xfs", "0", "XFSB", Signature{Type: "xfs", Offset: 0}, 4, ""},
		{"no type", "", "0\x00", "x", Signature{}, 0, "not a name"},
		{"type of NULs", "\x00\x00", "0\x00", "x", Signature{}, 0, "not a name"},
		{"type with a space", "ex t4\x00", "0\x00", "x", Signature{}, 0, "not a name"},
		{"no offset", "ext4\x00", "", "x", Signature{}, 0, "not a byte offset"},
		{"hex offset", "ext4\x00", "0x438\x00", "x", Signature{}, 0, "not a byte offset"},
		{"negative offset", "ext4\x00", "-1\x00", "x", Signature{}, 0, "not a byte offset"},
		{"offset beyond int64", "ext4\x00", "9223372036854775808\x00", "x", Signature{}, 0, "not a byte offset"},
		{"no magic", "ext4\x00", "1080\x00", "", Signature{}, 0, "no magic"},
	} {
		got, n, err := ParseProbeValues([]byte(tc.typ), []byte(tc.off), []byte(tc.magic))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %+v, %d, %v; want error %q", tc.name, got, n, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || n != tc.wantLen {
			t.Errorf("%s: %+v, %d, %v; want %+v, %d", tc.name, got, n, err, tc.want, tc.wantLen)
		}
	}
}

func FuzzParseProbeValues(f *testing.F) {
	f.Add([]byte("ext4\x00"), []byte("1080\x00"), []byte("\x53\xef"))
	f.Add([]byte("gpt\x00"), []byte("512\x00"), []byte("EFI PART"))
	f.Add([]byte("LVM2_member\x00"), []byte("536\x00"), []byte("LVM2 001"))
	f.Fuzz(func(t *testing.T, typ, off, magic []byte) {
		s, n, err := ParseProbeValues(typ, off, magic)
		if err != nil {
			return
		}
		// A result the probe loop can use: a name, a place, and a range to hide that is
		// not empty (an empty one would find the same magic again).
		if s.Type == "" || strings.ContainsAny(s.Type, " \x00\n") || s.Offset < 0 || n != len(magic) || n <= 0 {
			t.Fatalf("%q %q %q: %+v, %d", typ, off, magic, s, n)
		}
	})
}
