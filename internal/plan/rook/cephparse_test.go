package rook

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recordedStates are the states of testdata/ceph16 (README.md there says what each is).
func recordedStates(t *testing.T) []string {
	t.Helper()
	dirs, err := os.ReadDir("testdata/ceph16")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if d.IsDir() {
			out = append(out, d.Name())
		}
	}
	if len(out) < 8 {
		t.Fatalf("testdata/ceph16 has %d states: %v", len(out), out)
	}
	return out
}

func readRecorded(t *testing.T, state, name string) []byte {
	t.Helper()
	return readRecordedFrom(t, "testdata/ceph16", state, name)
}

func readRecordedFrom(t *testing.T, dir, state, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, state, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What each recorded state says, as the parsers read it.
func TestParseRecordedCeph16(t *testing.T) {
	type want struct {
		status   string
		checks   []string // codes, muted ones with a "muted " prefix
		inactive int
		safe     []int
		missing  []int
		devOSD0  []int // OSDs on osd.0's drive (loop1); nil: the drive is not listed
	}
	all := []string{"AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED", "MON_DISK_LOW"}
	wants := map[string]want{
		"healthy":             {"HEALTH_WARN", all, 0, nil, nil, []int{0}},
		"degraded":            {"HEALTH_WARN", append(slices.Clone(all), "OSD_DOWN", "PG_DEGRADED"), 0, nil, []int{0}, []int{0}},
		"destroyed":           {"HEALTH_WARN", all, 0, []int{0}, nil, nil},
		"purged":              {"HEALTH_WARN", all, 0, []int{0}, nil, nil},
		"recovering":          {"HEALTH_WARN", append(slices.Clone(all), "PG_DEGRADED"), 0, nil, []int{0}, nil},
		"muted":               {"HEALTH_WARN", append(slices.Clone(all), "muted OSD_NEARFULL", "muted POOL_NEARFULL"), 0, []int{0}, nil, nil},
		"no-redundancy-noout": {"HEALTH_WARN", append(slices.Clone(all), "OSDMAP_FLAGS", "POOL_NO_REDUNDANCY"), 0, []int{0}, nil, nil},
		"inactive":            {"HEALTH_WARN", append(slices.Clone(all), "OSD_DOWN", "PG_AVAILABILITY", "PG_DEGRADED"), 16, []int{0}, []int{2}, nil},
	}
	for _, state := range recordedStates(t) {
		h, err := ParseHealth(readRecorded(t, state, "health"))
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		detail, err := ParseHealth(readRecorded(t, state, "health-detail"))
		if err != nil || detail.Status != h.Status {
			t.Errorf("%s: health detail %+v, %v; health says %s", state, detail, err, h.Status)
		}
		pgs, err := ParsePGStat(readRecorded(t, state, "pg-stat"))
		if err != nil || !pgs.Ready || pgs.Total == 0 {
			t.Fatalf("%s: pg stat %+v, %v", state, pgs, err)
		}
		devs, err := ParseDeviceLs(readRecorded(t, state, "device-ls-by-host"))
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		std, err := ParseSafeToDestroy(readRecorded(t, state, "safe-to-destroy"))
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		var codes []string
		for _, c := range h.Checks {
			codes = append(codes, map[bool]string{true: "muted "}[c.Muted]+c.Code)
		}
		inactive, _ := pgs.Inactive()
		on0, _ := OSDsOnDevice(devs, "/dev/disk/by-id/nvme-PRISMTEST_QLC_0", "loop1")
		t.Logf("%s: %s %v; %d PGs %v; safe %v active %v missing %v stored %v; osd.0's drive: %v",
			state, h.Status, codes, pgs.Total, pgs.ByState, std.Safe, std.Active, std.MissingStats, std.StoredPGs, on0)
		w, ok := wants[state]
		if !ok {
			continue
		}
		if h.Status != w.status || !reflect.DeepEqual(codes, w.checks) || inactive != w.inactive ||
			!reflect.DeepEqual(std.Safe, orEmpty(w.safe)) || !reflect.DeepEqual(std.MissingStats, orEmpty(w.missing)) || !reflect.DeepEqual(on0, w.devOSD0) {
			t.Errorf("%s: got %s %v, %d inactive, safe %v missing %v, osd.0's drive %v; want %+v", state, h.Status, codes, inactive, std.Safe, std.MissingStats, on0, w)
		}
	}
}

// TestParseDestroyed reads `ceph osd tree-from <host> destroyed` as recorded on Ceph 20.2.4
// (testdata/ceph20: before osd.2 was destroyed, after, and after its purge) and what the probe
// kept of it on Ceph 16 (testdata/probe/ceph16: none, osd.0 destroyed, purged).
func TestParseDestroyed(t *testing.T) {
	for _, tc := range []struct {
		dir, state, name string
		want             []int
	}{
		{"testdata/ceph20", "before-destroy", "osd-tree-from-destroyed", []int{}},
		{"testdata/ceph20", "destroyed-stale", "osd-tree-from-destroyed", []int{2}},
		{"testdata/ceph20", "purged", "osd-tree-from-destroyed", []int{}},
		{"testdata/probe", "ceph16", "destroyed", []int{}},
		{"testdata/probe", "ceph16", "destroyed-destroyed", []int{0}},
		{"testdata/probe", "ceph16", "destroyed-purged", []int{}},
	} {
		got, err := ParseDestroyed(readRecordedFrom(t, tc.dir, tc.state, tc.name))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s/%s/%s: %v %v, want %v", tc.dir, tc.state, tc.name, got, err, tc.want)
		}
	}
}

func orEmpty(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

func TestParsersNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"health without status", second(ParseHealth([]byte(`{"checks":{}}`))), "ceph health: no status"},
		{"check without severity", second(ParseHealth([]byte(`{"status":"HEALTH_WARN","checks":{"X":{}}}`))), `checks["X"].severity is empty`},
		{"pg stat without pg_ready", second(ParsePGStat([]byte(`{"pg_summary":{"num_pgs":0}}`))), "no pg_ready"},
		{"pg stat without num_pgs", second(ParsePGStat([]byte(`{"pg_ready":true,"pg_summary":{}}`))), "no num_pgs"},
		{"pg stat state without count", second(ParsePGStat([]byte(`{"pg_ready":true,"pg_summary":{"num_pgs":1,"num_pg_by_state":[{"name":"active"}]}}`))), "num_pg_by_state[0] needs a name and a count"},
		{"pg stat that does not add up", second(ParsePGStat([]byte(`{"pg_ready":true,"pg_summary":{"num_pgs":2,"num_pg_by_state":[{"name":"active","num":1}]}}`))), "adds up to 1 PGs, num_pgs is 2"},
		{"device without id", second(ParseDeviceLs([]byte(`[{"location":[]}]`))), "[0].devid is empty"},
		{"devices not a list", second(ParseDeviceLs([]byte(`null`))), "not a list"},
		{"safe-to-destroy empty (Ceph could not decide)", second(ParseSafeToDestroy([]byte("\n"))), "ceph osd safe-to-destroy: unexpected end of JSON input"},
		{"safe-to-destroy without its list", second(ParseSafeToDestroy([]byte(`{"active":[1]}`))), "no safe_to_destroy list"},
		{"an OSD in two lists", second(ParseSafeToDestroy([]byte(`{"safe_to_destroy":[1],"active":[1]}`))), "osd.1 is negative or in two lists"},
		{"tree-from without nodes", second(ParseDestroyed([]byte(`{"stray":[]}`))), "ceph osd tree-from destroyed: no nodes list"},
		{"tree-from node without id", second(ParseDestroyed([]byte(`{"nodes":[{"status":"destroyed"}]}`))), "nodes[0].id is missing"},
		{"tree-from OSD not destroyed", second(ParseDestroyed([]byte(`{"nodes":[{"id":3,"status":"up"}]}`))), `nodes[0].status of osd.3 is "up", not destroyed`},
		{"tree-from OSD without status", second(ParseDestroyed([]byte(`{"nodes":[{"id":3}]}`))), `nodes[0].status of osd.3 is "", not destroyed`},
		{"tree-from OSD twice", second(ParseDestroyed([]byte(`{"nodes":[{"id":3,"status":"destroyed"},{"id":3,"status":"destroyed"}]}`))), "osd.3 is listed twice"},
		{"tree-from cut", second(ParseDestroyed([]byte(`{"nodes":[{"id":3,"sta`))), "ceph osd tree-from destroyed: unexpected end of JSON input"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Ceph 20 may print pg stat's counts at the top level; both read the same.
func TestParsePGStatTopLevel(t *testing.T) {
	p, err := ParsePGStat([]byte(`{"pg_ready":true,"num_pg_by_state":[{"name":"undersized+peered","num":2},{"name":"active+clean","num":3}],"num_pgs":5}`))
	if n, states := p.Inactive(); err != nil || n != 2 || !reflect.DeepEqual(states, []string{"undersized+peered"}) {
		t.Fatalf("%+v %v: inactive %d %v", p, err, n, states)
	}
}

// FuzzCephAnswers feeds any bytes to every parser of Ceph's answers and the gate: nothing panics,
// and the gate never releases on an answer a parser refuses.
func FuzzCephAnswers(f *testing.F) {
	for _, state := range []string{"healthy", "degraded", "purged"} {
		for _, name := range []string{"health", "pg-stat", "device-ls-by-host", "safe-to-destroy"} {
			b, err := os.ReadFile(filepath.Join("testdata/ceph16", state, name+".json"))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	addTestdata(f, destroyedSeeds...)
	at := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	base := cephAnswersOf("ceph16", "purged", at)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, errH := ParseHealth(b)
		p, errP := ParsePGStat(b)
		p.Inactive()
		p.NotClean()
		devs, errD := ParseDeviceLs(b)
		OSDsOnDevice(devs, "/dev/x", "x")
		s, errS := ParseSafeToDestroy(b)
		s.Why(0)
		s.Asked()
		_, errX := ParseDestroyed(b)
		if noOSDUnderHost(b) {
			errS = nil // the probe's safe-to-destroy answer for an empty CRUSH host
		}
		// The purged state releases; with one answer replaced by b, it may only if b parses
		// (FuzzParseDestroyed: and names no destroyed OSD).
		// A new drive is written only on a destroyed answer its parser reads (decision 0061).
		a := base
		a.Destroyed = b
		if why, _ := newDriveAllows(a, true, recordedNode, at); why == "" && errX != nil {
			t.Fatalf("a new drive written although ParseDestroyed refused %q: %v", b, errX)
		}
		for i, err := range []error{errH, errP, errD, errS, errX} {
			a := base
			*[]*[]byte{&a.Health, &a.PGStat, &a.Devices, &a.SafeToDestroy, &a.Destroyed}[i] = b
			if why := cephAllows(a, true, recordedNode, recordedQLC+"0", "loop1", nil, at); why == "" && err != nil {
				t.Fatalf("answer %d released although its parser refused %q: %v", i, b, err)
			}
		}
	})
}

// FuzzParseDestroyed: any bytes either fail or give sorted, distinct OSD ids from 0, each named
// in the input; and an answer naming any of them never lets the gate release.
func FuzzParseDestroyed(f *testing.F) {
	addTestdata(f, destroyedSeeds...)
	at := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	base := cephAnswersOf("ceph16", "purged", at)
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := ParseDestroyed(b)
		if err != nil {
			return
		}
		for i, id := range ids {
			if id < 0 || (i > 0 && ids[i-1] >= id) || !strings.Contains(string(b), strconv.Itoa(id)) {
				t.Fatalf("%q: ids %v", b, ids)
			}
		}
		a := base
		a.Destroyed = b
		if why := cephAllows(a, true, recordedNode, recordedQLC+"0", "loop1", nil, at); (why == "") != (len(ids) == 0) {
			t.Fatalf("%q: ids %v, gate %q", b, ids, why)
		}
		// A new drive likewise (decision 0061), and a hold naming ids is the admin's to end.
		if why, destroyed := newDriveAllows(a, true, recordedNode, at); (why == "") != (len(ids) == 0) || destroyed != (len(ids) > 0) {
			t.Fatalf("%q: ids %v, new drive %q (destroyed %v)", b, ids, why, destroyed)
		}
	})
}

// destroyedSeeds are the destroyed answers recorded: Ceph 20.2.4's and the probe's on Ceph 16.
var destroyedSeeds = []string{"ceph20/before-destroy/osd-tree-from-destroyed.json", "ceph20/destroyed-stale/osd-tree-from-destroyed.json",
	"probe/ceph16/destroyed-destroyed.json", "probe/ceph16/destroyed-cluster-destroyed.json"}

// addTestdata adds the files of testdata as seeds.
func addTestdata(f *testing.F, names ...string) {
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}
