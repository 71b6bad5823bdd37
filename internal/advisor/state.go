package advisor

import (
	stdbytes "bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"time"
)

// TrackerState is what a Tracker knows between observations: the open window's start and
// baselines, and the last complete window. Kept outside the process (decision 0046's
// sibling, docs/decisions/0008-advisor.md), a new operator leader resumes the window instead
// of waiting a whole window again.
type TrackerState struct {
	Start    time.Time         `json:"start"`
	Baseline map[string]Sample `json:"baseline,omitempty"`
	Last     *Window           `json:"last,omitempty"`
}

// State is the tracker's state (shares nothing with it).
func (t *Tracker) State() TrackerState {
	s := TrackerState{Start: t.start, Baseline: maps.Clone(t.baseline)}
	if t.Last != nil {
		w := *t.Last
		s.Last = &w
	}
	return s
}

// Restore replaces the tracker's state with s.
func (t *Tracker) Restore(s TrackerState) {
	t.start, t.baseline, t.Last = s.Start, maps.Clone(s.Baseline), s.Last
}

// maxStateBytes bounds a decoded state: the gzip of a few thousand caches' counters is well
// under the 1 MiB of a ConfigMap; a larger input is not Prism's.
const maxStateBytes = 64 << 20

// EncodeState is s as gzip-compressed JSON.
func EncodeState(s TrackerState) ([]byte, error) {
	var buf stdbytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(s); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeState reads what EncodeState wrote; an error names what is wrong.
func DecodeState(b []byte) (TrackerState, error) {
	var s TrackerState
	zr, err := gzip.NewReader(stdbytes.NewReader(b))
	if err != nil {
		return s, fmt.Errorf("advisor state: not gzip: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxStateBytes+1))
	if err != nil {
		return s, fmt.Errorf("advisor state: %w", err)
	}
	if len(raw) > maxStateBytes {
		return s, fmt.Errorf("advisor state: more than %d bytes uncompressed", maxStateBytes)
	}
	dec := json.NewDecoder(stdbytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return TrackerState{}, fmt.Errorf("advisor state: %w", err)
	}
	if len(s.Baseline) > 0 && s.Start.IsZero() {
		return TrackerState{}, fmt.Errorf("advisor state: start: zero with %d baselines", len(s.Baseline))
	}
	if s.Last != nil && s.Last.End.Before(s.Last.Start) {
		return TrackerState{}, fmt.Errorf("advisor state: last: end %s before start %s", s.Last.End, s.Last.Start)
	}
	return s, nil
}
