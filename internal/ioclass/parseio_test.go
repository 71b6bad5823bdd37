package ioclass

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseIO(t *testing.T) {
	got, err := ParseIO("size=64KiB, dir=write,comm=bstore_kv_sync,lba=123,core=1,pid=4242,wlth=2,direct,metadata=false,directory=/var/lib/ceph/,file=osd.0.log,filesize=1M,fileoffset=4k")
	if err != nil {
		t.Fatal(err)
	}
	want := IO{Size: 65536, Write: true, Comm: "bstore_kv_sync", LBA: 123, CoreID: 1, PID: 4242, WLTH: 2, Direct: true,
		HasFile: true, Dir: "/var/lib/ceph", FileName: "osd.0.log", Extension: "log", FileSize: 1 << 20, FileOffset: 4096}
	if got != want {
		t.Errorf("ParseIO:\n%+v\nwant\n%+v", got, want)
	}
	again, err := ParseIO(got.String())
	if err != nil || again != got {
		t.Errorf("round trip through %q: %+v, %v", got.String(), again, err)
	}
	for in, want := range map[string]IO{
		"":                   {},
		"size=4096":          {Size: 4096},
		"size=1M,dir=r":      {Size: 1 << 20},
		"metadata":           {Metadata: true},
		"ext=log":            {Extension: "log", HasFile: true},
		"file=archive":       {FileName: "archive", HasFile: true},
		"ext=gz,file=a.tar":  {Extension: "gz", FileName: "a.tar", HasFile: true},
		"size=2GiB,dir=w,,,": {Size: 2 << 30, Write: true},
	} {
		got, err := ParseIO(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseIO(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestParseIOErrorsNameTheKey(t *testing.T) {
	for in, want := range map[string]string{
		"size=abc":            `key "size": invalid size "abc"`,
		"size=99999999999G":   `key "size": invalid size`,
		"dir=sideways":        `key "dir": invalid direction "sideways"`,
		"lba=-1":              `key "lba": invalid number "-1"`,
		"core=4096":           `key "core": invalid number "4096": want 0-4095`,
		"pid=x":               `key "pid": invalid number "x"`,
		"direct=maybe":        `key "direct": invalid flag value "maybe"`,
		"directory=var/lib":   `key "directory": invalid directory "var/lib": want an absolute path`,
		"file=a/b":            `key "file": invalid file name "a/b"`,
		"color=red":           `unknown key "color" (want one of size, dir, comm`,
		"size=1,size=2":       `key "size" given twice`,
		"comm":                `key "comm": needs a value (comm=...)`,
		"filesize=1,offset=2": `unknown key "offset"`,
	} {
		_, err := ParseIO(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIO(%q) = %v, want %q", in, err, want)
		}
	}
}
