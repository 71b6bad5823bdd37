package advisor

import (
	"encoding/binary"
	"math"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

// apiAllocation is the CRD's pattern for allocations.
var apiAllocation = regexp.MustCompile(`^(0(\.[0-9]{0,2})?|1(\.0{0,2})?|\.[0-9]{1,3})$`)

// fuzzInput reads a policy's classes and a window from arbitrary bytes: the classes of
// the default Ceph policy with fuzzed pinning, priority and allocation, and up to 4
// caches with fuzzed sizes and per-class counters (some negative or absurd).
func fuzzInput(data []byte) (v1alpha1.ClassificationPolicySpec, Input) {
	next := func() uint64 {
		if len(data) < 8 {
			data = append(data, make([]byte, 8)...)
		}
		v := binary.LittleEndian.Uint64(data)
		data = data[8:]
		return v
	}
	spec := ioclasstest.FiveClasses().Spec
	for i := range spec.Classes {
		c := &spec.Classes[i]
		v := next()
		c.Pinned = v&1 == 1 && c.ID != 0
		c.EvictionPriority = nil
		if !c.Pinned {
			p := int32(v >> 8 % 256)
			c.EvictionPriority = &p
		}
		c.Allocation = allocationText(int(v >> 16 % 101))
	}
	in := Input{Classes: ClassesOf(&spec), Params: Defaults()}
	caches := int(next() % 5)
	for i := 0; i < caches; i++ {
		cw := CacheWindow{Key: "n/" + string(rune('a'+i)), SizeBytes: int64(next() >> 20), ExportedWritten: int64(next() >> 24), CoreWritten: int64(next() >> 24)}
		for _, c := range spec.Classes {
			v := next()
			if v&3 == 0 {
				continue
			}
			// Occupancy from 1× to 2^-15× the written bytes' scale, so β spans every branch.
			cw.Classes = append(cw.Classes, ClassWindow{ID: c.ID, Written: int64(next() >> 24), Occupancy: int64(v >> (24 + v>>4%16)), Dirty: int64(v >> 40)})
		}
		in.Caches = append(in.Caches, cw)
	}
	return spec, in
}

// FuzzAdvise checks what must hold for any window: one recommendation per class; every
// allocation valid for the API and casadm, and 0 only where it was; class 0 kept; pinned
// classes within the budget; finite α;
// reasons within the API's limit; and the recommended classes compile.
func FuzzAdvise(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"))
	seed := make([]byte, 0, 8*64)
	for i := 0; i < 64; i++ {
		seed = binary.LittleEndian.AppendUint64(seed, uint64(i)*0x9e3779b97f4a7c15)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, in := fuzzInput(data)
		res := Advise(in)
		for _, v := range []float64{res.Measured, res.Modelled, res.Expected} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("α not finite: %+v", res)
			}
		}
		if res.Refusal != "" {
			if len(res.Recommendations) != 0 {
				t.Fatal("recommendations with a refusal")
			}
			return
		}
		if len(res.Recommendations) != len(spec.Classes) {
			t.Fatalf("%d recommendations for %d classes", len(res.Recommendations), len(spec.Classes))
		}
		pinned, current := 0, map[int32]Class{}
		for _, c := range in.Classes {
			current[c.ID] = c
		}
		for _, r := range res.Recommendations {
			if r.Allocation == "0" && current[r.ClassID].Allocation != 0 {
				t.Fatalf("class %d sent to pass-through", r.ClassID)
			}
			if !apiAllocation.MatchString(r.Allocation) || len(r.Allocation) > ioclass.MaxAllocationLen {
				t.Fatalf("class %d allocation %q", r.ClassID, r.Allocation)
			}
			if r.Pinned == (r.EvictionPriority != nil) {
				t.Fatalf("class %d: pinned %v with priority %v", r.ClassID, r.Pinned, r.EvictionPriority)
			}
			if len(r.Reason) == 0 || len(r.Reason) > maxReason || !utf8.ValidString(r.Reason) {
				t.Fatalf("class %d reason %q", r.ClassID, r.Reason)
			}
			if r.ClassID == 0 && r.Action != v1alpha1.RecommendKeep {
				t.Fatalf("class 0 got %s", r.Action)
			}
			if r.Pinned && r.ClassID != 0 && r.WriteInvalidation != "" {
				pinned += ioclass.Class{Allocation: r.Allocation}.MaxSizePercent()
			}
		}
		if pinned > in.Params.PinBudget {
			t.Fatalf("pinned %d hundredths, budget %d", pinned, in.Params.PinBudget)
		}
		applied := Apply(spec, res.Recommendations)
		if _, err := ioclass.Compile(&applied); err != nil {
			t.Fatalf("recommended classes do not compile: %v", err)
		}
	})
}
