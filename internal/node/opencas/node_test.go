package opencas

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/casadm"
)

func i32(v int32) *int32 { return &v }

func TestDesiredFor(t *testing.T) {
	c := &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 16, IOClassCSV: classes,
		CacheSettings: prismv1.CacheSettings{
			Cleaning:         &prismv1.CacheCleaning{Policy: prismv1.CleaningAlru, Alru: &prismv1.AlruCleaning{WakeUpSeconds: i32(5), ActivityThresholdMs: i32(0)}},
			Promotion:        &prismv1.CachePromotion{Policy: prismv1.PromotionNhit, Nhit: &prismv1.NhitPromotion{Threshold: i32(3)}},
			SequentialCutoff: &prismv1.SequentialCutoff{Policy: prismv1.SequentialCutoffFull, ThresholdKiB: i32(2048)},
			DirtyData:        prismv1.DirtyDataAllowLoss,
		}}
	f := prismv1.FastDevicePlan{StablePath: "/dev/disk/by-id/nvme-OPTANE_1", CacheID: 7, Slots: []prismv1.DBSlot{
		{Index: 1, DataDevice: q2}, {Index: 0, DataDevice: q1}, {Index: 2},
	}}
	bluestore := []prismv1.DeviceSignature{{Kind: prismv1.SignatureCephBlueStore, Name: "ceph_bluestore"}}
	devices := []prismv1.Device{{Name: "sda", StablePath: q1}, {Name: "sdb", StablePath: q2, Signatures: bluestore}}
	d := DesiredFor(c, f, part, devices)
	want := Desired{
		CacheID: 7, Partition: part, Mode: prismv1.CacheWriteBack, LineSizeKiB: 16, Cores: []string{q1, q2}, IOClassCSV: classes,
		Params: Params{CleaningPolicy: "alru", Alru: &AlruParams{WakeUpSeconds: Ptr(5), ActivityThresholdMs: Ptr(0)},
			PromotionPolicy: "nhit", Nhit: &NhitParams{Threshold: Ptr(3)}, SeqCutoff: &SeqCutoff{ThresholdKiB: 2048, Policy: "full"}},
		AllowDirtyDataLoss: true,
		CoreSignatures:     map[string][]prismv1.DeviceSignature{q2: bluestore},
	}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("desired:\n%+v\nwant:\n%+v", d, want)
	}
	// The mapped parameters are ones casadm accepts (Decide validates them as casadm would).
	d.PartitionScanned = true
	if p := Decide(d, Observed{}); len(p.Conditions) != 0 {
		t.Errorf("Decide refuses the mapped settings: %v", p.Refusals)
	}
}

// A capacity device the inventory could not read (its signatures unread: the device did not
// open, or libblkid's probe failed) has no signatures in the inventory, but it is not proven
// empty: it is not added as a new core. Before, DesiredFor passed only the signatures found,
// and Decide took the unread device as empty and added it.
func TestDesiredForUnreadableCoreIsNotAdded(t *testing.T) {
	c := &prismv1.NodeCachePlan{Mode: prismv1.CacheWriteBack, LineSizeKiB: 4}
	f := prismv1.FastDevicePlan{StablePath: "/dev/disk/by-id/nvme-OPTANE_1", CacheID: 1, Slots: []prismv1.DBSlot{
		{Index: 0, DataDevice: q1}, {Index: 1, DataDevice: q2},
	}}
	unread := "could not read the device completely, so it cannot be proven empty: reading signatures of /dev/sdb: signature: open /dev/sdb: input/output error"
	devices := []prismv1.Device{
		{Name: "sda", StablePath: q1, Eligibility: prismv1.Eligibility{Eligible: true}},
		{Name: "sdb", StablePath: q2, Eligibility: prismv1.Eligibility{Reasons: []prismv1.EligibilityReason{{Filter: prismv1.FilterReadable, Message: unread}}}},
	}
	d := DesiredFor(c, f, part, devices)
	d.PartitionScanned = true
	p := Decide(d, Observed{})
	for _, s := range argvs(p) {
		if strings.Contains(s, q2) {
			t.Errorf("a step touches the device the inventory could not read: %s", s)
		}
	}
	if len(p.Cores) != 2 || p.Cores[0].State != CorePending || p.Cores[1].State != CoreRefused || !strings.Contains(p.Cores[1].Message, "cannot be proven empty") {
		t.Errorf("cores: %+v", p.Cores)
	}
	// Already a core: it stays, whatever the inventory could read of it.
	if p := Decide(d, running(t, d, "wb")); len(p.Refusals) != 0 || p.Cores[1].State != CoreReady {
		t.Errorf("a running core the inventory could not read: steps %v refusals %v cores %+v", argvs(p), p.Refusals, p.Cores)
	}
}

func TestStatusOf(t *testing.T) {
	f := prismv1.FastDevicePlan{StablePath: "/dev/disk/by-id/nvme-OPTANE_1"}
	ready := []CoreStatus{{Device: q1, CoreID: 1, ExportedObject: "/dev/cas1-1", State: CoreReady}}
	tests := []struct {
		name   string
		res    Result
		dryRun bool
		state  prismv1.CacheState
		msg    string
	}{
		{"running", Result{CacheID: 1, Cores: ready}, false, prismv1.CacheRunning, ""},
		{"a core refused", Result{CacheID: 1, Cores: append(ready, CoreStatus{Device: q2, State: CoreRefused, Message: "holds data"}), Refusals: []string{"q2 holds data"}},
			false, prismv1.CachePending, "1 of 2 cores not ready; q2 holds data"},
		{"failed", Result{CacheID: 1, Cores: ready, Conditions: []Condition{{ConditionCacheFailed, "cache device error"}}}, false, prismv1.CacheFailed, "cache device error"},
		{"step failed", Result{CacheID: 1, Err: errors.New("casadm -A failed")}, false, prismv1.CachePending, "retrying: casadm -A failed"},
		{"nothing started", Result{Refusals: []string{"the partition holds xfs"}}, false, prismv1.CacheRefused, "the partition holds xfs"},
		{"dry run", Result{CacheID: 1, Pending: []Step{{Why: "start"}, {Why: "add"}}}, true, prismv1.CachePending, "dry run: 2 steps not taken, first: start"},
		{"incomplete", Result{CacheID: 1, Cores: ready, Conditions: []Condition{{ConditionCacheIncomplete, "cache 1 is incomplete"}}}, false, prismv1.CacheIncomplete, "cache 1 is incomplete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := StatusOf(f, tc.res, tc.dryRun)
			if st.State != tc.state || st.Message != tc.msg || st.FastDevice != f.StablePath || st.CacheID != int32(tc.res.CacheID) {
				t.Errorf("got %s %q (cache %d), want %s %q", st.State, st.Message, st.CacheID, tc.state, tc.msg)
			}
			if len(st.Cores) != len(tc.res.Cores) {
				t.Errorf("cores %+v", st.Cores)
			}
		})
	}
}

// transcriptCSV is the CSV a reference transcript (testdata, recorded from casadm) printed.
func transcriptCSV(t *testing.T, name string) string {
	t.Helper()
	return readTranscript(t, name)
}

func readTranscript(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../host/casadm/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n")[1:] {
		if strings.HasPrefix(l, "[rc=") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// column reads one column of a CSV by title, independently of internal/host/casadm.
func column(t *testing.T, text, title string) []uint64 {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range rows[0] {
		if h != title {
			continue
		}
		var vals []uint64
		for _, r := range rows[1:] {
			v, err := strconv.ParseUint(r[i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		return vals
	}
	t.Fatalf("no column %q", title)
	return nil
}

// WithStats on recorded casadm output: bytes are 4 KiB blocks × 4096, α and β follow
// from the columns as casadm printed them.
func TestWithStatsFromRecordedOutput(t *testing.T) {
	cacheCSV, classCSV := transcriptCSV(t, "casadm_P_i_1_o_csv.txt"), transcriptCSV(t, "casadm_P_i_1_d_o_csv.txt")
	var stats []casadm.Stats
	for _, text := range []string{cacheCSV, classCSV} {
		s, err := casadm.ParseStats(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		stats = append(stats, s...)
	}
	caches := []prismv1.CacheStatus{{FastDevice: "/dev/disk/by-id/nvme-OPTANE_1", CacheID: 1}, {FastDevice: "/dev/disk/by-id/nvme-OPTANE_2"}}
	node := WithStats(caches, stats)

	exported := column(t, cacheCSV, "Writes to exported object(s) [4KiB Blocks]")[0]
	// Written back by the cleaner is counted apart from "Writes to core(s)" (its [%] column,
	// 252.5, is relative to it), and reaches QLC all the same.
	core := column(t, cacheCSV, "Writes to core(s) [4KiB Blocks]")[0] + column(t, cacheCSV, "Cleaner core writes [4KiB Blocks]")[0]
	c := caches[0]
	if c.ExportedWrittenBytes != int64(exported*4096) || c.CoreWrittenBytes != int64(core*4096) {
		t.Errorf("writes: exported %d core %d bytes, the output says %d and %d blocks", c.ExportedWrittenBytes, c.CoreWrittenBytes, exported, core)
	}
	wantAlpha := fmt.Sprintf("%.4f", 1-float64(core)/float64(exported))
	if c.WriteReduction != wantAlpha || node != wantAlpha {
		t.Errorf("α: cache %q node %q, want %q", c.WriteReduction, node, wantAlpha)
	}
	occ := column(t, classCSV, "Occupancy [4KiB Blocks]")
	dirty := column(t, classCSV, "Dirty [4KiB Blocks]")
	writes := column(t, classCSV, "Writes to exported object(s) [4KiB Blocks]")
	if len(c.IOClasses) != len(occ) {
		t.Fatalf("%d classes, the output has %d", len(c.IOClasses), len(occ))
	}
	for i, u := range c.IOClasses {
		if u.OccupancyBytes != int64(occ[i]*4096) || u.DirtyBytes != int64(dirty[i]*4096) || u.WrittenBytes != int64(writes[i]*4096) {
			t.Errorf("class %d: %+v, output: occupancy %d dirty %d writes %d blocks", u.ID, u, occ[i], dirty[i], writes[i])
		}
		want := ""
		if occ[i] > 0 {
			want = fmt.Sprintf("%.3f", float64(writes[i])/float64(occ[i]))
		}
		if u.WriteInvalidation != want {
			t.Errorf("class %d β %q, want %q", u.ID, u.WriteInvalidation, want)
		}
	}
	if caches[1].IOClasses != nil || caches[1].WriteReduction != "" {
		t.Errorf("a cache without an id got statistics: %+v", caches[1])
	}
}
