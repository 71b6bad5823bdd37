package exporter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// reading is device k's counters i minutes in: writes grow, percent used is unknown every
// seventh minute, media bytes unreported on odd devices, and device 2's counters reset (a
// replaced drive) after three days.
func reading(k, i int) endurance.Sample {
	s := endurance.Sample{
		Time:              t0.Add(time.Duration(i)*time.Minute + 123*time.Millisecond),
		HostBytesWritten:  uint64(k+1)*1e13 + uint64(i)*5e8,
		MediaBytesWritten: uint64(k+1)*2e13 + uint64(i)*9e8,
		PercentUsed:       k + i/1440,
		PowerOnHours:      uint64(1000*k + i/60),
	}
	if k%2 == 1 {
		s.MediaBytesWritten = 0
	}
	if i%7 == 0 {
		s.PercentUsed = endurance.UnknownPercent
	}
	if k == 2 && i > 3*1440 {
		s.HostBytesWritten, s.PowerOnHours = uint64(i)*1e6, uint64(i/60)
	}
	return s
}

func key(k int) string { return fmt.Sprintf("/dev/disk/by-id/nvme-DEVICE_%03d", k) }

// poll adds device readings at minute i as Exporter.Poll does and saves what was added.
func poll(t *testing.T, f *historyFile, h *History, i, devices int) []entry {
	t.Helper()
	var added []entry
	for k := range devices {
		if series, ok := h.Add(key(k), reading(k, i)); ok {
			added = append(added, entry{key(k), series[len(series)-1]})
		}
	}
	if err := f.save(h, added); err != nil {
		t.Fatal(err)
	}
	return added
}

// newFile starts an empty history file.
func newFile(t *testing.T) (string, *historyFile, *History) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wear-history.log")
	h := NewHistory()
	f, err := openHistoryFile(path, "", h)
	if err != nil {
		t.Fatal(err)
	}
	return path, f, h
}

func reopen(t *testing.T, path string) (*History, error) {
	t.Helper()
	h := NewHistory()
	_, err := openHistoryFile(path, "", h)
	return h, err
}

func sameHistory(t *testing.T, got, want *History) {
	t.Helper()
	if !reflect.DeepEqual(got.Keys(), want.Keys()) {
		t.Fatalf("keys %v, want %v", got.Keys(), want.Keys())
	}
	for _, k := range want.Keys() {
		if g, w := got.Series(k), want.Series(k); !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: %d samples read back, %d kept; first difference %s", k, len(g), len(w), firstDiff(g, w))
		}
	}
}

func firstDiff(a, b []endurance.Sample) string {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("at %d: %+v, want %+v", i, a[i], b[i])
		}
	}
	return "in length"
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

func TestHistoryFileRoundTripsTenDaysOfPollsAndStaysSmall(t *testing.T) {
	path, f, h := newFile(t)
	var written int64 // bytes written to the file, appends and rewrites
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	last, ino := size(), inode(t, path)
	for i := 0; i < 10*1440; i++ { // 24 devices, a poll a minute, 10 days
		added := poll(t, f, h, i, 24)
		now, nowIno := size(), inode(t, path)
		switch {
		case nowIno != ino:
			written += now // rewritten
		case len(added) == 0 && now != last:
			t.Fatalf("minute %d: a poll that added no sample changed the file (%d -> %d bytes)", i, last, now)
		default:
			written += now - last
		}
		last, ino = now, nowIno
	}
	got, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, got, h)
	// 24 × 385 samples of about 20 bytes: the JSON of 8 days of 5-minute samples was 7.1 MiB.
	if n := h.Len(); n < 24*8*48 || n > 24*(8*48+2) {
		t.Errorf("%d samples kept", n)
	}
	if last > int64(h.Len())*2*32 { // live and dead samples, about 20-30 bytes each
		t.Errorf("file is %d bytes for %d samples", last, h.Len())
	}
	perDay := written / 10
	t.Logf("%d samples, file %d bytes, %d bytes written a day", h.Len(), last, perDay)
	if perDay > 1<<20 {
		t.Errorf("%d bytes written a day", perDay)
	}
}

// A poll's record cut anywhere (a crash during the write) is dropped with nothing else, and
// the next poll appends after the samples before it.
func TestHistoryFileDropsATornLastRecord(t *testing.T) {
	path, f, h := newFile(t)
	for i := 0; i < 60; i++ {
		poll(t, f, h, i, 3)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if added := poll(t, f, h, 60, 3); len(added) != 3 {
		t.Fatalf("minute 60 added %d samples", len(added))
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := full[len(before):]
	tails := map[string][]byte{"zero-filled": make([]byte, len(rec)), "checksum": append(bytes.Clone(rec[:len(rec)-1]), rec[len(rec)-1]^1)}
	for cut := 1; cut < len(rec); cut++ {
		tails[fmt.Sprintf("cut at %d of %d", cut, len(rec))] = rec[:cut]
	}
	for name, tail := range tails {
		if err := os.WriteFile(path, append(bytes.Clone(before), tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		got := NewHistory()
		f2, err := openHistoryFile(path, "", got)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameHistory(t, got, want)
		// The next poll appends where the valid records end.
		poll(t, f2, got, 65, 3)
		again, err := reopen(t, path)
		if err != nil {
			t.Fatalf("%s, then a poll: %v", name, err)
		}
		sameHistory(t, again, got)
		if s := again.Series(key(0)); !s[len(s)-1].Time.Equal(t0.Add(65 * time.Minute)) {
			t.Fatalf("%s: newest sample %s after the next poll", name, s[len(s)-1].Time)
		}
	}
	if _, err := os.Stat(path + ".corrupt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a torn record moved the file aside: %v", err)
	}
}

// Damage before the last record is an error naming the file and the offset; the samples
// before it are kept and the damaged file is moved aside, not overwritten.
func TestHistoryFileCorruptionIsAnErrorAndKeepsThePrefix(t *testing.T) {
	path, f, h := newFile(t)
	var sizes []int
	for i := 0; i < 30; i += 5 {
		poll(t, f, h, i, 2)
		st, _ := os.Stat(path)
		sizes = append(sizes, int(st.Size()))
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the third record (the fourth of six polls' records stays after it).
	at := sizes[1] + 3
	bad := bytes.Clone(good)
	bad[at] ^= 0x40
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := reopen(t, path)
	if err == nil {
		t.Fatal("a damaged record in the middle read without error")
	}
	for _, part := range []string{path, fmt.Sprintf("byte %d", sizes[1]), "checksum", path + ".corrupt", "kept the 4 samples"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	// The first two polls, two devices each.
	for k := range 2 {
		if n := len(got.Series(key(k))); n != 2 {
			t.Errorf("%s: %d samples kept, want 2", key(k), n)
		}
	}
	if moved, err := os.ReadFile(path + ".corrupt"); err != nil || !bytes.Equal(moved, bad) {
		t.Errorf("the damaged file was not kept as it was: %v", err)
	}
	// The history file was rewritten from what was kept and reads cleanly.
	again, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, again, got)
}

func TestHistoryFileRejectsAnotherFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wear-history.log")
	if err := os.WriteFile(path, []byte(`{"series":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := reopen(t, path)
	if err == nil || !strings.Contains(err.Error(), "not a Prism wear history") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v", err)
	}
}

// testdata/wear-history-v0.json was written by the agent before the log (History.Save at
// ea8353b, through bench/footprint/agent -seed-history 26h on a 2-device fixture): 312
// samples 5 minutes apart per device.
func TestHistoryFileMigratesTheJSONHistory(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "wear-history.json")
	data, err := os.ReadFile("testdata/wear-history-v0.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var old legacyHistory
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "wear-history.log")
	h := NewHistory()
	if _, err := openHistoryFile(path, legacy, h); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(legacy); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the JSON history is still there after the migration: %v", err)
	}
	if len(h.Keys()) != 2 {
		t.Fatalf("migrated keys %v", h.Keys())
	}
	for key, series := range old.Series {
		got := h.Series(key)
		if len(series) != 312 || len(got) < 26*2 || len(got) > 26*2+2 {
			t.Fatalf("%s: %d JSON samples, %d kept; want 312 thinned to one per 30 minutes", key, len(series), len(got))
		}
		for _, pair := range [][2]endurance.Sample{{got[0], series[0]}, {got[len(got)-1], series[len(series)-1]}} {
			g, w := pair[0], pair[1]
			w.Time = w.Time.Truncate(time.Second).UTC()
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: migrated %+v, JSON %+v", key, g, w)
			}
		}
		rating := endurance.Rating{CapacityBytes: 512110190592, RatedTBW: 200, WarrantyYears: 5}
		a, errA := endurance.Project(series, rating, endurance.Options{})
		b, errB := endurance.Project(got, rating, endurance.Options{})
		if errA != nil || errB != nil || a.DWPD24h.DWPD != b.DWPD24h.DWPD {
			t.Errorf("%s: 24-hour DWPD %+v from the JSON, %+v migrated (%v, %v)", key, a.DWPD24h.DWPD, b.DWPD24h.DWPD, errA, errB)
		}
	}
	again, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, again, h)
	// A second start finds the log and ignores a JSON file left by a migration cut short.
	if err := os.WriteFile(legacy, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	h2 := NewHistory()
	if _, err := openHistoryFile(path, legacy, h2); err != nil {
		t.Fatal(err)
	}
	sameHistory(t, h2, h)
	if _, err := os.Stat(legacy); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the JSON history left by an interrupted migration is still there: %v", err)
	}
}

func TestHistoryFileKeepsABadJSONHistoryAside(t *testing.T) {
	for name, content := range map[string]string{
		"truncated":   `{"series":{"/dev/disk/by-id/a":[{"Time":"2026-11-21T06:52:12Z","PercentUsed":5}`,
		"bad percent": `{"series":{"/dev/disk/by-id/a":[{"Time":"2026-11-21T06:52:12Z","PercentUsed":300}]}}`,
	} {
		dir := t.TempDir()
		legacy, path := filepath.Join(dir, "wear-history.json"), filepath.Join(dir, "wear-history.log")
		if err := os.WriteFile(legacy, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		h := NewHistory()
		f, err := openHistoryFile(path, legacy, h)
		if err == nil || !strings.Contains(err.Error(), legacy) || !strings.Contains(err.Error(), legacy+".corrupt") {
			t.Fatalf("%s: error %v, want one naming %s and where it went", name, err, legacy)
		}
		if moved, err := os.ReadFile(legacy + ".corrupt"); err != nil || string(moved) != content {
			t.Errorf("%s: the JSON history was not kept: %v", name, err)
		}
		// The agent goes on with a new history.
		poll(t, f, h, 0, 1)
		if again, err := reopen(t, path); err != nil || len(again.Series(key(0))) != 1 {
			t.Errorf("%s: new history after the bad JSON: %v", name, err)
		}
	}
}

func TestHistoryFileDropsDevicesThatLeftWhenRewriting(t *testing.T) {
	path, f, h := newFile(t)
	poll(t, f, h, 0, 2)
	for i := 5; i < 9*1440; i += 5 { // device 1 left after the first poll
		var added []entry
		if series, ok := h.Add(key(0), reading(0, i)); ok {
			added = append(added, entry{key(0), series[len(series)-1]})
		}
		if err := f.save(h, added); err != nil {
			t.Fatal(err)
		}
	}
	got, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if keys := got.Keys(); len(keys) != 1 || keys[0] != key(0) {
		t.Fatalf("keys after 9 days %v, want only %s", keys, key(0))
	}
}

// After a failed append the file may end in part of a record: the next save rewrites it
// whole from the history in memory instead of appending after the damage.
func TestHistoryFileRewritesAfterAFailedAppend(t *testing.T) {
	path, f, h := newFile(t)
	poll(t, f, h, 0, 2)
	// Make the append fail: the file is a directory for a moment.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	h.Add(key(0), reading(0, 5))
	if err := f.save(h, []entry{{key(0), h.Series(key(0))[1]}}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("append into a directory: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	poll(t, f, h, 10, 2)
	got, err := reopen(t, path)
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, got, h)
}
