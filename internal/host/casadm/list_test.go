package casadm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseListReal(t *testing.T) {
	want := List{Caches: []Cache{{
		ID: 1, Disk: "/dev/disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE0000000000AAAA",
		Status: Status{State: StateRunning}, WritePolicy: "wb", Mode: "wb",
		Cores: []Core{{ID: 1, Disk: "/dev/disk/by-id/wwn-0x5000000000000001", Status: Status{State: StateActive}, Device: "/dev/cas1-1"}},
	}}}
	for _, name := range []string{"list_o_csv_b.txt", "list_o_csv.txt"} {
		tr := readTranscript(t, name)
		got, err := ParseList(strings.NewReader(tr.stdout))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n%+v\nwant\n%+v", name, got, want)
		}
		// Without -b casadm could not resolve the links here (see stderr),
		// so it printed by-id paths in both.
		if !IsByID(got.Caches[0].Disk) || !IsByID(got.Caches[0].Cores[0].Disk) {
			t.Errorf("%s: want by-id paths", name)
		}
		if got.CSV() != tr.stdout {
			t.Errorf("%s: CSV()\n%s\nwant\n%s", name, got.CSV(), tr.stdout)
		}
	}
}

func TestParseListNoCaches(t *testing.T) {
	tr := readTranscript(t, "list_none.txt")
	got, err := ParseList(strings.NewReader(tr.stdout))
	if err != nil || len(got.Caches) != 0 || len(got.Pool) != 0 || tr.rc != 0 {
		t.Fatalf("%+v, %v", got, err)
	}
	if got.CSV() != tr.stdout {
		t.Errorf("CSV() = %q", got.CSV())
	}
}

func TestParseListConstructed(t *testing.T) {
	tr := readTranscript(t, "list_constructed.txt")
	got, err := ParseList(strings.NewReader(tr.stdout))
	if err != nil {
		t.Fatal(err)
	}
	want := List{
		Pool: []Core{{ID: -1, Disk: "/dev/sdd", Status: Status{State: StateDetached}}},
		Caches: []Cache{
			{ID: 1, Disk: "/dev/nvme0n1p3", Status: Status{StateFlushing, 45.2}, WritePolicy: "wb->wt", Mode: "wt", Cores: []Core{
				{ID: 1, Disk: "/dev/sda", Status: Status{StateFlushing, 100}, Device: "/dev/cas1-1"},
				{ID: 2, Disk: "/dev/disk/by-id/wwn-0x5000000000000002", Status: Status{State: StateInactive}},
			}},
			{ID: 2, Disk: "/dev/nvme1n1p3", Status: Status{State: StateIncomplete}, WritePolicy: "wo", Mode: "wo", Cores: []Core{
				{ID: 0, Disk: "/dev/sdb", Status: Status{State: StateActive}, Device: "/dev/cas2-0"},
			}},
			{ID: 3, Disk: "/dev/nvme2n1p1", Status: Status{State: StateStandby}, WritePolicy: "-", Device: "/dev/cas-cache-3"},
			{ID: 4, Status: Status{State: StateStandbyDetached}, WritePolicy: "-"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if got.CSV() != tr.stdout {
		t.Errorf("CSV()\n%s\nwant\n%s", got.CSV(), tr.stdout)
	}
}

func TestParseListErrors(t *testing.T) {
	const h = "type,id,disk,status,write policy,device\n"
	for in, want := range map[string]string{
		"":                                         "empty output: no header",
		"type,id,disk,status,device\n":             `line 1: missing column "write policy"`,
		h + "cache,0,/dev/a,Running,wb,-\n":        `line 2, column 2 (id): invalid id "0": want 1-16384`,
		h + "cache,x,/dev/a,Running,wb,-\n":        `line 2, column 2 (id): invalid id "x"`,
		h + "cache,1,/dev/a,Running,xx,-\n":        `line 2, column 5 (write policy): invalid write policy "xx"`,
		h + "cache,1,/dev/a,Running,xx->wt,-\n":    `line 2, column 5 (write policy): invalid write policy "xx->wt"`,
		h + "cache,1,/dev/a,,wb,-\n":               `line 2, column 4 (status): empty status`,
		h + "cache,1,/dev/a,Flushing (x %),wb,-\n": `line 2, column 4 (status): invalid flushing status "Flushing (x %)"`,
		h + "core,1,/dev/b,Active,-,-\n":           `line 2, column 1 (type): core line before any cache or core pool line`,
		h + "cache,1,/dev/a,Running,wb,-\ncore,4096,/dev/b,Active,-,-\n": `line 3, column 2 (id): invalid id "4096": want 0-4095`,
		h + "cache,1,/dev/a,Running,wb,-\ncore,1,/dev/b,Active,wb,-\n":   `line 3, column 5 (write policy): want - on a core line, got "wb"`,
		h + "cache,1,/dev/a,Running,wb,-\ncore,1,-,Active,-,-\n":         `line 3, column 3 (disk): missing core device`,
		h + "core pool,-,-,-,-,-\ncore,1,/dev/b,Detached,-,-\n":          `line 3, column 2 (id): want - for a core in the pool, got "1"`,
		h + "core pool,1,-,-,-,-\n":                                      `line 2, column 2 (id): want - on a core pool line, got "1"`,
		h + "volume,1,/dev/a,Running,wb,-\n":                             `line 2, column 1 (type): unknown type "volume"`,
		h + "cache,1,/dev/a,Running,wb\n":                                `line 2: 5 fields, the header has 6`,
		h + "cache,1,\"/dev/a,Running,wb,-\n":                            `line 2, column 3 (disk): unterminated quote`,
		"type,id,id\n":                                                   `line 1, column 3 (id): column appears twice`,
	} {
		_, err := ParseList(strings.NewReader(in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseList(%q) = %v\nwant %s", in, err, want)
		}
	}
}

func TestParseListQuotedPath(t *testing.T) {
	l := List{Caches: []Cache{{ID: 7, Disk: `/dev/disk/by-id/odd,"name"`, Status: Status{State: StateRunning}, WritePolicy: "wt", Mode: "wt"}}}
	got, err := ParseList(strings.NewReader(l.CSV()))
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Errorf("%+v, %v", got, err)
	}
}
