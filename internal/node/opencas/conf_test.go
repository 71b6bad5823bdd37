package opencas

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func ourConf(id int) (*ConfCache, []ConfCore) {
	cc := &ConfCache{ID: id, Device: part, Mode: "wb", Params: []ConfParam{{"ioclass_file", IOClassFilePath(id)}, {"cache_line_size", "4"}}}
	return cc, []ConfCore{
		{CacheID: id, CoreID: 1, Device: q1, Params: []ConfParam{{"lazy_startup", "true"}}},
		{CacheID: id, CoreID: 2, Device: q2, Params: []ConfParam{{"lazy_startup", "true"}}},
	}
}

// TestMergeShippedConf: Open CAS's own opencas.conf keeps every line; ours are added in
// their sections and parse back as opencas.py reads them.
func TestMergeShippedConf(t *testing.T) {
	shipped, err := os.ReadFile("testdata/opencas.conf")
	if err != nil {
		t.Fatal(err)
	}
	cc, cores := ourConf(1)
	got := MergeConf(string(shipped), 1, part, cc, cores)
	for _, l := range strings.Split(string(shipped), "\n") {
		if !strings.Contains(got, l) {
			t.Errorf("line %q dropped", l)
		}
	}
	c, err := ParseConf(got)
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	want := Conf{Version: "version=19.3.0", Caches: []ConfCache{*cc}, Cores: cores}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("parsed %+v\nwant %+v", c, want)
	}
	if again := MergeConf(got, 1, part, cc, cores); again != got {
		t.Errorf("not idempotent:\n%s", again)
	}
	// Our cache line sits in [caches], before [cores].
	if i, j := strings.Index(got, "1\t"+part), strings.Index(got, "\n[cores]"); i < 0 || i > j {
		t.Errorf("cache line misplaced:\n%s", got)
	}
}

// TestMergeKeepsForeignLines: another cache's lines stay; our stale lines (an old cache id
// of the partition) go with their cores.
func TestMergeKeepsForeignLines(t *testing.T) {
	existing := "version=20.3\n[caches]\n7\t/dev/disk/by-id/other-part1\twt  # admin's cache\n" +
		"5\t" + part + "\twb\n[cores]\n7\t1\t/dev/disk/by-id/wwn-0x7\n5\t1\t" + q1 + "\n5\t2\t" + q3 + "\n"
	cc, cores := ourConf(1)
	got := MergeConf(existing, 1, part, cc, cores)
	c, err := ParseConf(got)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Caches) != 2 || c.Caches[0].ID != 7 || c.Caches[1].ID != 1 || len(c.Cores) != 3 || c.Cores[0].CacheID != 7 {
		t.Errorf("merged:\n%s", got)
	}
	if !strings.Contains(got, "# admin's cache") || !strings.HasPrefix(got, "version=20.3\n") {
		t.Errorf("foreign text changed:\n%s", got)
	}
	// Removing ours leaves theirs.
	gone := MergeConf(got, 1, part, nil, nil)
	if c, _ := ParseConf(gone); len(c.Caches) != 1 || c.Caches[0].ID != 7 || len(c.Cores) != 1 {
		t.Errorf("after removal:\n%s", gone)
	}
}

// TestParseConfQuirks: opencas.py's rules.
func TestParseConfQuirks(t *testing.T) {
	for text, bad := range map[string]bool{
		"[caches]\n1\t" + part + "\twb\n":                                                 true,  // no version line
		"version=1\n[caches]\n1\t" + part + "\tWB\tIOCLASS_FILE=/ETC/X.CSV\n":             false, // lower-cased
		"version=1\n[caches]\n1\t" + part + "\n":                                          true,  // too few columns
		"version=1\n[caches]\n1\ta b c d e\n":                                             true,  // too many
		"version=1\n[caches]\n1\t" + part + "\twb\tlazy_startup=maybe\n":                  true,
		"version=1\n[caches]\n1\t" + part + "\twb\tcache_line_size=4,cache_line_size=8\n": true,
		"version=1\n[cores]\n1\t1\t" + q1 + "\tlazy_startup=true # c\n":                   false,
		"version=1\n[cores]\n1\t4096\t" + q1 + "\n":                                       true,
	} {
		c, err := ParseConf(text)
		if (err != nil) != bad {
			t.Errorf("%q: %v", text, err)
		}
		if err == nil && len(c.Caches) == 1 && c.Caches[0].Params[0].Value != "/etc/x.csv" {
			t.Errorf("%q: extra fields not lower-cased: %+v", text, c.Caches[0].Params)
		}
	}
	// Why Prism's IO class file path is lower-case: opencas.py would read anything else wrong.
	if p := IOClassFilePath(12); p != strings.ToLower(p) {
		t.Errorf("%s is not lower-case", p)
	}
}

func FuzzMergeConf(f *testing.F) {
	shipped, _ := os.ReadFile("testdata/opencas.conf")
	f.Add(string(shipped))
	f.Add("")
	f.Add("version=1\n[caches]\n1\t" + part + "\twb\n[cores]\n1\t1\t" + q1 + "\n")
	f.Add("version=1\n[cores]\n3\t1\t/dev/disk/by-id/x\n[caches]\n3\t/dev/disk/by-id/y\twt\n# tail")
	f.Add("no version\n[caches]\n")
	f.Fuzz(func(t *testing.T, existing string) {
		cc, cores := ourConf(1)
		got := MergeConf(existing, 1, part, cc, cores)
		if again := MergeConf(got, 1, part, cc, cores); again != got {
			t.Fatalf("not idempotent:\n%q\n%q", got, again)
		}
		before, err := ParseConf(existing)
		if err != nil {
			return
		}
		after, err := ParseConf(got)
		if err != nil {
			t.Fatalf("a valid conf became invalid: %v\n%q\n%q", err, existing, got)
		}
		ours := 0
		for _, c := range after.Caches {
			if c.ID == 1 {
				ours++
				if !reflect.DeepEqual(c, *cc) {
					t.Fatalf("our cache line: %+v", c)
				}
			}
		}
		if ours != 1 {
			t.Fatalf("%d lines of cache 1", ours)
		}
		for _, c := range before.Caches {
			if c.ID != 1 && c.Device != part && !containsCache(after.Caches, c) {
				t.Fatalf("foreign cache %+v dropped", c)
			}
		}
	})
}

func containsCache(cs []ConfCache, c ConfCache) bool {
	for _, x := range cs {
		if reflect.DeepEqual(x, c) {
			return true
		}
	}
	return false
}

func FuzzParseConf(f *testing.F) {
	shipped, _ := os.ReadFile("testdata/opencas.conf")
	f.Add(string(shipped))
	f.Add("version=1\n[caches]\n1 a wb ioclass_file=x,lazy_startup=true\n[cores]\n1 1 b\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseConf(text)
		if err != nil {
			return
		}
		for _, x := range c.Caches {
			if x.ID < 1 || x.ID > 16384 || x.Device == "" {
				t.Fatalf("accepted %+v", x)
			}
		}
		for _, x := range c.Cores {
			if x.CoreID < 0 || x.CoreID > 4095 {
				t.Fatalf("accepted %+v", x)
			}
		}
	})
}

// TestMergeConfSettlesWithTwoCaches: a node with two fast devices runs two caches, and the
// agent merges each cache's lines in turn on every pass. The second round must leave the file
// as the first round wrote it (merging moved each cache to the end in turn, so opencas.conf
// was rewritten on every pass), with both caches and their cores in it.
func TestMergeConfSettlesWithTwoCaches(t *testing.T) {
	const part2 = "/dev/disk/by-id/nvme-OTHER_FAST-part7"
	cc1, cores1 := ourConf(1)
	cc2 := &ConfCache{ID: 2, Device: part2, Mode: "wb", Params: []ConfParam{{"cache_line_size", "4"}}}
	cores2 := []ConfCore{{CacheID: 2, CoreID: 1, Device: q3, Params: []ConfParam{{"lazy_startup", "true"}}}}
	conf := ""
	for round := 1; round <= 3; round++ {
		before := conf
		conf = MergeConf(conf, 1, part, cc1, cores1)
		conf = MergeConf(conf, 2, part2, cc2, cores2)
		if round > 1 && conf != before {
			t.Fatalf("round %d changed the file:\nbefore\n%s\nafter\n%s", round, before, conf)
		}
	}
	c, err := ParseConf(conf)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Caches) != 2 || len(c.Cores) != 3 || c.Caches[0].ID != 1 || c.Caches[1].ID != 2 {
		t.Errorf("merged:\n%s", conf)
	}
	// A changed cache keeps its place; removing one leaves the other.
	cc1.Mode = "wt"
	changed := MergeConf(conf, 1, part, cc1, cores1)
	if c, _ := ParseConf(changed); c.Caches[0].ID != 1 || c.Caches[0].Mode != "wt" || c.Caches[1].ID != 2 {
		t.Errorf("after changing cache 1:\n%s", changed)
	}
	if c, _ := ParseConf(MergeConf(changed, 1, part, nil, nil)); len(c.Caches) != 1 || c.Caches[0].ID != 2 || len(c.Cores) != 1 {
		t.Errorf("after removing cache 1:\n%s", MergeConf(changed, 1, part, nil, nil))
	}
}
