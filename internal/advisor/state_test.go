package advisor

import (
	stdbytes "bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestStateResumesTheWindow: a tracker restored from another's encoded state closes the same
// window with the same deltas as the tracker that opened it.
func TestStateResumesTheWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	first := map[string]Sample{"n1/optane": {CacheID: 1, Config: "h", SizeBytes: 100, ExportedWritten: 10, CoreWritten: 5,
		Classes: map[int32]ClassSample{1: {Written: 4, Occupancy: 2}}}}
	later := map[string]Sample{"n1/optane": {CacheID: 1, Config: "h", SizeBytes: 100, ExportedWritten: 30, CoreWritten: 9,
		Classes: map[int32]ClassSample{1: {Written: 14, Occupancy: 6}}}}

	var leader Tracker
	leader.Observe(t0, first, time.Minute)
	b, err := EncodeState(leader.State())
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	var next Tracker
	next.Restore(s)
	if !next.Observe(t0.Add(2*time.Minute), later, time.Minute) || !leader.Observe(t0.Add(2*time.Minute), later, time.Minute) {
		t.Fatal("no window closed")
	}
	if !reflect.DeepEqual(next.Last, leader.Last) {
		t.Fatalf("restored window %+v, leader's %+v", next.Last, leader.Last)
	}
	if c := next.Last.Caches[0]; c.ExportedWritten != 20 || c.Classes[0].Written != 10 {
		t.Fatalf("window %+v", c)
	}
	// The state after a closed window carries the window too.
	b, _ = EncodeState(next.State())
	if s, err := DecodeState(b); err != nil || s.Last == nil || !s.Start.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("state after the window: %+v, %v", s, err)
	}
}

func TestDecodeStateNamesWhatIsWrong(t *testing.T) {
	enc := func(s string) []byte {
		var buf stdbytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte(s))
		_ = zw.Close()
		return buf.Bytes()
	}
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{[]byte("{}"), "not gzip"},
		{enc(`{"start":"2026-12-06T10:00:00Z","surprise":1}`), `unknown field "surprise"`},
		{enc(`{"start":"0001-01-01T00:00:00Z","baseline":{"a":{}}}`), "start: zero with 1 baselines"},
		{enc(`{"start":"2026-12-06T10:00:00Z","last":{"Start":"2026-12-06T10:00:00Z","End":"2026-12-06T09:00:00Z"}}`), "last: end"},
	} {
		if _, err := DecodeState(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzDecodeState(f *testing.F) {
	b, _ := EncodeState(TrackerState{Start: time.Unix(1, 0), Baseline: map[string]Sample{"a": {CacheID: 1}}})
	f.Add(b)
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := DecodeState(in)
		if err != nil {
			return
		}
		again, err := EncodeState(s)
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		if _, err := DecodeState(again); err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
	})
}
