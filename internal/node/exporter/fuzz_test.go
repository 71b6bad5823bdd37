package exporter

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// decodeAll returns every sample of a history file in order.
func decodeAll(data []byte) ([]entry, int, error) {
	var out []entry
	_, good, err := decodeLog(data, func(key string, s endurance.Sample) { out = append(out, entry{key, s}) })
	return out, good, err
}

// checkDecoded asserts what any input must give: the valid prefix decodes alone to the same
// samples without error, and encoding the samples again reads back the same.
func checkDecoded(t *testing.T, data []byte) {
	got, good, err := decodeAll(data)
	if good > len(data) {
		t.Fatalf("valid prefix %d of %d bytes", good, len(data))
	}
	if err == nil {
		prefix, good2, err2 := decodeAll(data[:good])
		if err2 != nil || good2 != good || !reflect.DeepEqual(prefix, got) {
			t.Fatalf("valid prefix reads differently: %v, %d of %d, %d vs %d samples", err2, good2, good, len(prefix), len(got))
		}
	}
	if len(got) == 0 {
		return
	}
	again, _, err := decodeAll(appendRecord([]byte(logMagic), newLogCodec().appendEntries(nil, got)))
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("re-encoded samples read back differently: %v", err)
	}
}

func seedFile(f *testing.F) {
	c := newLogCodec()
	var entries []entry
	for k := range 3 {
		for i := 0; i < 20; i += 5 {
			entries = append(entries, entry{key(k), reading(k, i)})
		}
	}
	data := appendRecord([]byte(logMagic), c.appendEntries(nil, entries[:6]))
	data = appendRecord(data, c.appendEntries(nil, entries[6:]))
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Add([]byte(logMagic[:4]))
	f.Add([]byte(`{"series":{}}`))
}

// FuzzDecodeLog feeds whole files: framing, checksums, torn tails.
func FuzzDecodeLog(f *testing.F) {
	seedFile(f)
	f.Fuzz(checkDecoded)
}

// FuzzDecodeRecord frames the input as a valid record, so the entries inside get past the
// checksum that random bytes almost never match.
func FuzzDecodeRecord(f *testing.F) {
	c := newLogCodec()
	f.Add(c.appendEntries(nil, []entry{{key(0), reading(0, 0)}, {key(1), reading(1, 7)}, {key(0), reading(0, 5)}}))
	f.Add([]byte{entrySample, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{entryKey, 0, 1, 'a', entrySample, 0, 1, 2, 3, 255, 1, 4})
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) == 0 || len(payload) > maxPayload {
			return
		}
		checkDecoded(t, appendRecord([]byte(logMagic), payload))
	})
}

// FuzzHistoryAdd feeds Add a sequence of sample times (each byte a step of 0-255 minutes, a
// step of 0 going back 10 minutes) on two devices and compares every series with a plain
// re-statement of the rules that builds a fresh slice each time: shifting in place and the
// bounded growth must change nothing a caller sees.
func FuzzHistoryAdd(f *testing.F) {
	f.Add([]byte{5, 5, 30, 1, 255, 255, 255, 0, 7})
	f.Add(bytes.Repeat([]byte{31}, 600))
	f.Fuzz(func(t *testing.T, steps []byte) {
		h := NewHistory()
		h.MaxAge = 24 * time.Hour // reach the trimming with short inputs
		want := map[string][]endurance.Sample{}
		now := t0
		for i, b := range steps {
			if b == 0 {
				now = now.Add(-10 * time.Minute)
			} else {
				now = now.Add(time.Duration(b) * time.Minute)
			}
			key := []string{"a", "b"}[i%2]
			s := sampleAt(now)
			s.HostBytesWritten = uint64(i)
			got, added := h.Add(key, s)
			ref, refAdded := referenceAdd(h, want[key], s)
			want[key] = ref
			if added != refAdded || !reflect.DeepEqual(got, ref) {
				t.Fatalf("step %d (%s): Add gave %d samples (added %v), the rules %d (added %v)", i, key, len(got), added, len(ref), refAdded)
			}
		}
		for key, ref := range want {
			if got := h.Series(key); len(ref) > 0 && !reflect.DeepEqual(got, ref) {
				t.Fatalf("%s: Series gives %d samples, the rules %d", key, len(got), len(ref))
			}
		}
	})
}

// referenceAdd is History.Add's rules written plainly, on a copy.
func referenceAdd(h *History, series []endurance.Sample, s endurance.Sample) ([]endurance.Sample, bool) {
	s.Time = time.Unix(s.Time.Unix(), 0).UTC()
	out := append([]endurance.Sample(nil), series...)
	if n := len(out); n > 0 && s.Time.Sub(out[n-1].Time) < h.MinInterval {
		return out, false
	}
	if n := len(out); n >= 2 && out[n-1].Time.Sub(out[n-2].Time) < h.Spacing {
		out = out[:n-1]
	}
	out = append(out, s)
	var kept []endurance.Sample
	for i, old := range out {
		if i == len(out)-1 || s.Time.Sub(old.Time) <= h.MaxAge {
			kept = append(kept, out[i:]...)
			break
		}
	}
	return kept, true
}
