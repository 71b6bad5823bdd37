package casadm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parseStatsFile(t *testing.T, name string) []Stats {
	t.Helper()
	tr := readTranscript(t, name)
	if tr.rc != 0 {
		t.Fatalf("%s: rc %d", name, tr.rc)
	}
	s, err := ParseStats(strings.NewReader(tr.stdout))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func c(v uint64, p float64) *Counter { return &Counter{Value: v, Percent: p} }

// cacheRequests etc. are the whole-cache numbers of the reference run (the
// only core carries all of it, so core level prints the same).
var (
	cacheUsage    = &Usage{Occupancy: c(7264, 100), Free: c(0, 0), Clean: c(3312, 45.6), Dirty: c(3952, 54.4)}
	cacheRequests = &Requests{
		ReadHits: c(32, 2.8), ReadDeferred: c(0, 0), ReadPartialMisses: c(0, 0), ReadFullMisses: c(32, 2.8), ReadTotal: c(64, 5.5),
		WriteHits: c(128, 11.1), WriteDeferred: c(0, 0), WritePartialMisses: c(0, 0), WriteFullMisses: c(762, 65.8), WriteTotal: c(890, 76.9),
		PassThroughReads: c(0, 0), PassThroughWrites: c(204, 17.6), Serviced: c(954, 82.4),
		PrefetchReadahead: c(0, 0), Cleaner: c(8240, 100), User: c(1158, 100), Total: c(9398, 100),
	}
	cacheBlocks = &Blocks{
		CoreReads: c(512, 4.3), CoreWrites: c(3264, 27.2), CoreTotal: c(12016, 100),
		CacheReads: c(512, 2.2), CacheWrites: c(14752, 62.8), CacheTotal: c(23504, 100),
		ExportedReads: c(1024, 5.5), ExportedWrites: c(17504, 94.5), ExportedTotal: c(18528, 100),
		PrefetchCoreReadsReadahead: c(0, 0), PrefetchCacheWritesReadahead: c(0, 0),
		CleanerCacheReads: c(8240, 252.5), CleanerCoreWrites: c(8240, 252.5),
	}
	zeroErrors = &Errors{CacheRead: c(0, 0), CacheWrite: c(0, 0), CacheTotal: c(0, 0), CoreRead: c(0, 0), CoreWrite: c(0, 0), CoreTotal: c(0, 0), Total: c(0, 0)}
)

func TestParseStatsCache(t *testing.T) {
	want := Stats{
		Cache: &CacheInfo{ID: 1, SizeBlocks: 7264, SizeGiB: 0.03, Device: "/dev/disk/by-id/nvme-INTEL_SSDPE21K375GA_PHKE0000000000AAAA",
			CoreDevices: 1, WritePolicy: "wb", CleaningPolicy: "nop", PromotionPolicy: "always", PrefetchPolicy: "none", LineSizeKiB: 4,
			MetadataFootprintBytes: 19188941, DirtyFor: "Cache clean", Status: Status{State: StateRunning}},
		Usage: cacheUsage, Requests: cacheRequests, Blocks: cacheBlocks, Errors: zeroErrors,
	}
	for _, name := range []string{"casadm_P_i_1_o_csv.txt", "casadm_P_i_1_o_csv_b.txt"} {
		got := parseStatsFile(t, name)
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s:\n%s\nwant\n%s", name, dump(got), dump([]Stats{want}))
		}
	}
}

func TestParseStatsCore(t *testing.T) {
	got := parseStatsFile(t, "casadm_P_i_1_j_1_o_csv_b.txt")
	want := Stats{
		Core: &CoreInfo{ID: 1, Device: "/dev/disk/by-id/wwn-0x5000000000000001", ExportedObject: "/dev/cas1-1", SizeBlocks: 262144, SizeGiB: 1,
			DirtyFor: "Cache clean", Status: Status{State: StateActive}, SeqCutoffThresholdKiB: 1024, SeqCutoffPolicy: "never"},
		Usage: cacheUsage, Requests: cacheRequests, Blocks: cacheBlocks, Errors: zeroErrors,
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("got\n%s\nwant\n%s", dump(got), dump([]Stats{want}))
	}
	// What an exporter reads per core: writes to the core device.
	if got[0].Blocks.CoreWrites.Value != 3264 {
		t.Errorf("writes to core %d", got[0].Blocks.CoreWrites.Value)
	}
}

func TestParseStatsClasses(t *testing.T) {
	all := parseStatsFile(t, "casadm_P_i_1_d_o_csv.txt")
	if len(all) != 5 {
		t.Fatalf("%d records, want 5", len(all))
	}
	wantInfo := []ClassInfo{
		{ID: 0, Name: "unclassified", Priority: 22, MaxSizePercent: 100},
		{ID: 1, Name: "metadata&done", Pinned: true, MaxSizePercent: 100},
		{ID: 2, Name: "directory:/var/tmp&done", Priority: 200, MaxSizePercent: 0},
		{ID: 3, Name: "extension:log&done", Priority: 100, MaxSizePercent: 10},
		{ID: 4, Name: "directory:/data/hot&done", Priority: 1, MaxSizePercent: 100},
	}
	for i, s := range all {
		if s.Class == nil || *s.Class != wantInfo[i] || s.Cache != nil || s.Core != nil || s.Errors != nil || s.Usage.Free != nil || s.Other != nil {
			t.Errorf("record %d: %s", i, dump([]Stats{s}))
		}
	}
	// The numbers an exporter takes per class, from the real OCF run.
	for _, tc := range []struct {
		id                                            int
		occupancy, dirty, readHits, writeHits, misses uint64
		ptWrites, writes                              uint64
	}{
		{0, 3984, 3952, 0, 0, 385 + 32, 69, 385},
		{1, 1024, 0, 0, 0, 64, 0, 64},
		{2, 0, 0, 0, 0, 0, 64, 0}, // allocation 0: all pass-through
		{3, 208, 0, 0, 0, 185, 71, 185},
		{4, 2048, 0, 32, 128, 128, 0, 256},
	} {
		s := all[tc.id]
		r := s.Requests
		misses := r.ReadFullMisses.Value + r.ReadPartialMisses.Value + r.WriteFullMisses.Value + r.WritePartialMisses.Value
		if s.Usage.Occupancy.Value != tc.occupancy || s.Usage.Dirty.Value != tc.dirty || r.ReadHits.Value != tc.readHits ||
			r.WriteHits.Value != tc.writeHits || misses != tc.misses || r.PassThroughWrites.Value != tc.ptWrites || r.WriteTotal.Value != tc.writes {
			t.Errorf("class %d: %s", tc.id, dump([]Stats{s}))
		}
	}
	if p := all[3].Blocks.CleanerCacheReads.Percent; p != 260.6 {
		t.Errorf("percentages above 100 must survive: %v", p)
	}

	// -d 3 is record 3 of -d.
	if one := parseStatsFile(t, "casadm_P_i_1_d_3_o_csv.txt"); len(one) != 1 || !reflect.DeepEqual(one[0], all[3]) {
		t.Errorf("-d 3:\n%s", dump(one))
	}
	// Core level (-j 1) titles have no "(s)"; with one core the numbers are
	// the same, so the records must be identical.
	if core := parseStatsFile(t, "casadm_P_i_1_j_1_d_o_csv.txt"); !reflect.DeepEqual(core, all) {
		t.Errorf("-j 1 -d differs from -d:\n%s", dump(core))
	}
}

func TestParseStatsFilters(t *testing.T) {
	all := parseStatsFile(t, "casadm_P_i_1_d_o_csv.txt")
	got := parseStatsFile(t, "casadm_P_i_1_d_4_f_usage_req_o_csv.txt")
	want := Stats{Usage: all[4].Usage, Requests: all[4].Requests}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("-d 4 -f usage,req:\n%s", dump(got))
	}
	got = parseStatsFile(t, "casadm_P_i_1_f_usage_o_csv.txt")
	if len(got) != 1 || !reflect.DeepEqual(got[0], Stats{Usage: cacheUsage}) {
		t.Errorf("-f usage:\n%s", dump(got))
	}
}

func TestParseStatsUnconfiguredClass(t *testing.T) {
	tr := readTranscript(t, "casadm_P_i_1_d_7_o_csv.txt")
	if tr.rc != 1 || tr.stderr != "IO class 7 is not configured." {
		t.Fatalf("transcript %+v", tr)
	}
	if _, err := ParseStats(strings.NewReader(tr.stdout)); err == nil || err.Error() != "empty output: no header" {
		t.Errorf("error %v", err)
	}
}

// TestParseStatsOlderRelease drops the columns v25.12.2 does not print (the
// reference has master's output only): parsing by title still works, the
// missing counters are nil.
func TestParseStatsOlderRelease(t *testing.T) {
	tr := readTranscript(t, "casadm_P_i_1_o_csv.txt")
	lines := strings.Split(strings.TrimSpace(tr.stdout), "\n")
	header, values := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	drop := []string{"Read deferred", "Write deferred", "Prefetch: readahead", "Cleaner [", "User requests", "Prefetch core reads", "Prefetch cache writes", "Cleaner cache reads", "Cleaner core writes", "Prefetch Policy"}
	var h, v []string
	for i, title := range header {
		keep := true
		for _, d := range drop {
			keep = keep && !strings.HasPrefix(title, d)
		}
		if keep {
			h, v = append(h, title), append(v, values[i])
		}
	}
	got, err := ParseStats(strings.NewReader(strings.Join(h, ",") + "\n" + strings.Join(v, ",") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := got[0].Requests
	if r.ReadDeferred != nil || r.Cleaner != nil || r.User != nil || got[0].Blocks.CleanerCoreWrites != nil || got[0].Cache.PrefetchPolicy != "" {
		t.Errorf("dropped columns parsed: %s", dump(got))
	}
	if r.WriteFullMisses.Value != 762 || got[0].Usage.Dirty.Value != 3952 || got[0].Cache.ID != 1 {
		t.Errorf("kept columns lost: %s", dump(got))
	}
}

func TestParseStatsUnknownColumnsAndReordering(t *testing.T) {
	in := "Dirty [%],Shiny new counter [Requests],Dirty [4KiB Blocks],Core Id,Status\n54.4,7,3952,3,Flushing (12.5 %)\n"
	got, err := ParseStats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Core: &CoreInfo{ID: 3, Status: Status{StateFlushing, 12.5}}, Usage: &Usage{Dirty: c(3952, 54.4)},
		Other: map[string]string{"Shiny new counter [Requests]": "7"}}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("%s", dump(got))
	}
}

func TestParseStatsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"Occupancy [4KiB Blocks],Occupancy [%]\n":         "line 1: header without data",
		"Occupancy [4KiB Blocks],Occupancy [%]\nx,1.0\n":  `line 2, column 1 (Occupancy [4KiB Blocks]): invalid count "x"`,
		"Occupancy [4KiB Blocks],Occupancy [%]\n1,-\n":    `line 2, column 2 (Occupancy [%]): invalid number "-"`,
		"Occupancy [4KiB Blocks],Occupancy [%]\n1,NaN\n":  `line 2, column 2 (Occupancy [%]): invalid number "NaN"`,
		"Occupancy [GiB]\n1\n":                            `line 2, column 1 (Occupancy [GiB]): unexpected unit [GiB]: want [4KiB Blocks] or [%]`,
		"Cache Id,Core Id\n1,1\n":                         `line 1: both "Cache Id" and "Core Id" columns`,
		"Cache Id\n0\n":                                   `line 2, column 1 (Cache Id): invalid id "0": want 1-16384`,
		"IO class ID,Eviction priority\n1,high\n":         `line 2, column 2 (Eviction priority): invalid eviction priority "high"`,
		"IO class ID,Max size\n1,101%\n":                  `line 2, column 2 (Max size): invalid max size "101%"`,
		"IO class ID,Max size\n1,50\n":                    `line 2, column 2 (Max size): invalid max size "50"`,
		"Cache Id,Metadata Memory Footprint [PiB]\n1,1\n": `line 2, column 2 (Metadata Memory Footprint [PiB]): unknown unit [PiB]`,
		"Cache Id,Write Policy\n1,fast\n":                 `line 2, column 2 (Write Policy): invalid write policy "fast"`,
		"Read hits [Requests],Read hits [%]\n1,2\n3\n":    "line 3: 1 fields, the header has 2",
	} {
		_, err := ParseStats(strings.NewReader(in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseStats(%q) = %v\nwant %s", in, err, want)
		}
	}
}

func TestMetadataFootprintUnits(t *testing.T) {
	for title, want := range map[string]uint64{"[KiB]": 18739, "[MiB]": 19188941, "[GiB]": 19649475379} {
		got, err := ParseStats(strings.NewReader("Cache Id,Metadata Memory Footprint " + title + "\n1,18.3\n"))
		if err != nil || got[0].Cache.MetadataFootprintBytes != want {
			t.Errorf("%s: %v %v", title, got, err)
		}
	}
}

// dump renders records for failure messages.
func dump(ss []Stats) string {
	var b strings.Builder
	for _, s := range ss {
		for _, part := range []any{s.Cache, s.Core, s.Class, s.Usage, s.Requests, s.Blocks, s.Errors} {
			if reflect.ValueOf(part).IsNil() {
				continue
			}
			b.WriteString(reflect.TypeOf(part).Elem().Name() + ":")
			v := reflect.ValueOf(part).Elem()
			for i := 0; i < v.NumField(); i++ {
				f := v.Field(i)
				if c, ok := f.Interface().(*Counter); ok {
					if c != nil {
						b.WriteString(" " + v.Type().Field(i).Name + "=" + strings.Trim(strings.ReplaceAll(reflectString(*c), " ", "/"), "{}"))
					}
					continue
				}
				b.WriteString(" " + v.Type().Field(i).Name + "=" + reflectString(f.Interface()))
			}
			b.WriteString("\n")
		}
		if s.Other != nil {
			b.WriteString("Other: " + reflectString(s.Other) + "\n")
		}
	}
	return b.String()
}
