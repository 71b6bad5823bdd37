package cachesim

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Source yields a trace's IOs in order: Next fills io and reports false at
// the end or on an error, which Err then returns. Only reads and writes with
// data are IOs; flushes and discards are skipped.
type Source interface {
	Next(io *ioclass.IO) bool
	Err() error
}

// sliceSource replays IOs held in memory.
type sliceSource struct {
	ios []ioclass.IO
	i   int
}

// FromSlice replays ios.
func FromSlice(ios []ioclass.IO) Source { return &sliceSource{ios: ios} }

func (s *sliceSource) Next(io *ioclass.IO) bool {
	if s.i >= len(s.ios) {
		return false
	}
	*io = s.ios[s.i]
	s.i++
	return true
}

func (s *sliceSource) Err() error { return nil }

// ExpandSummary turns a trace summary (blktrace.Summary, the format of
// internal/ioclass/defaults/testdata/ceph-osd-trace.json) back into IOs on
// its data device. A summary keeps, per group of bios with the same task,
// operation, size and region, their count and first and last sector, not
// their order; the expansion is a reconstruction, not the trace:
//
//   - workloads in the summary's order (they ran one after the other);
//   - a group's Count bios evenly spaced from FirstSector to LastSector
//     (both exact), in ascending order, on 4 KiB boundaries when both ends
//     are (else on the largest power of two sectors both ends share);
//   - a workload's groups interleaved in proportion: bio i of a group of n
//     comes at fraction (i+½)/n of the workload, ties in group order.
//
// So it keeps each group's bytes, sizes, task, direction and address range,
// and has no rewrites the summary cannot show. Groups without data (size 0:
// flushes) and discards are skipped. An error names the workload and group.
//
// A workload whose data device lists its bios in order (Bios, as
// `prism-agent trace` records them) is replayed from them exactly instead:
// the reads and writes with data, in order, with their task and process.
func ExpandSummary(s *blktrace.Summary) ([]ioclass.IO, error) {
	var out []ioclass.IO
	type keyed struct {
		at    float64
		group int
		io    ioclass.IO
	}
	for _, w := range s.Workloads {
		if len(w.Data.Bios) > 0 {
			for i, b := range w.Data.Bios {
				dir := b.Dir()
				if b.Bytes == 0 || (dir != blktrace.Read && dir != blktrace.Write) {
					continue
				}
				if b.Bytes%512 != 0 || b.Sector > math.MaxUint64/512-b.Bytes/512 {
					return nil, fmt.Errorf("workload %s bio %d (sector %d, %d bytes): not whole sectors within a 64-bit byte offset", w.Name, i, b.Sector, b.Bytes)
				}
				out = append(out, ioclass.IO{Size: b.Bytes, Write: dir == blktrace.Write, Comm: b.Comm, LBA: b.Sector, PID: b.PID})
			}
			continue
		}
		var ios []keyed
		for gi, g := range w.Data.Groups {
			dir := g.Dir()
			if g.Size == 0 || (dir != blktrace.Read && dir != blktrace.Write) {
				continue
			}
			if err := checkGroup(g); err != nil {
				return nil, fmt.Errorf("workload %s group %d (%s %s %d bytes): %w", w.Name, gi, g.Comm, g.RWBS, g.Size, err)
			}
			span := g.LastSector - g.FirstSector
			// Keep the group's 4 KiB alignment when both ends have it.
			align := uint64(8)
			for align > 1 && (g.FirstSector%align != 0 || g.LastSector%align != 0) {
				align /= 2
			}
			for i := uint64(0); i < g.Count; i++ {
				sector := g.FirstSector
				if g.Count > 1 {
					hi, lo := bits.Mul64(span, i)
					q, _ := bits.Div64(hi, lo, g.Count-1) // <= span: no overflow
					sector += q / align * align
				}
				ios = append(ios, keyed{(float64(i) + 0.5) / float64(g.Count), gi,
					ioclass.IO{Size: g.Size, Write: dir == blktrace.Write, Comm: g.Comm, LBA: sector}})
			}
		}
		slices.SortStableFunc(ios, func(a, b keyed) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.group, b.group)) })
		for _, k := range ios {
			out = append(out, k.io)
		}
	}
	return out, nil
}

// maxGroupIOs bounds a group's count so a hostile summary cannot ask for
// more memory than a real trace would fill.
const maxGroupIOs = 1 << 28

func checkGroup(g blktrace.Group) error {
	switch {
	case g.Size%512 != 0:
		return fmt.Errorf("size %d is not a whole number of 512-byte sectors", g.Size)
	case g.Count == 0:
		return fmt.Errorf("count 0")
	case g.Count > maxGroupIOs:
		return fmt.Errorf("count %d: more than %d bios", g.Count, maxGroupIOs)
	case g.FirstSector > g.LastSector:
		return fmt.Errorf("first sector %d after last sector %d", g.FirstSector, g.LastSector)
	case g.LastSector > math.MaxUint64/512-g.Size/512:
		return fmt.Errorf("last sector %d: beyond a 64-bit byte offset", g.LastSector)
	}
	return nil
}

// ReadSummary reads a summary (JSON) from r.
func ReadSummary(r io.Reader) (*blktrace.Summary, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s blktrace.Summary
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("trace summary: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("trace summary: data after the JSON object")
	}
	return &s, nil
}

// DeviceFilter selects one disk's records of a tracefs trace; the zero value
// takes every record.
type DeviceFilter struct {
	Set          bool
	Major, Minor uint32
}

// ParseDeviceFilter reads MAJOR:MINOR (or MAJOR,MINOR as tracefs prints it).
func ParseDeviceFilter(s string) (DeviceFilter, error) {
	maj, min, ok := strings.Cut(s, ":")
	if !ok {
		maj, min, ok = strings.Cut(s, ",")
	}
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return DeviceFilter{}, fmt.Errorf("device %q: want MAJOR:MINOR", s)
	}
	return DeviceFilter{Set: true, Major: uint32(a), Minor: uint32(b)}, nil
}

// tracefsSource streams block_bio_queue records from the text of a tracefs
// trace or trace_pipe file (blktrace.ParseLine), one line at a time.
type tracefsSource struct {
	sc      *bufio.Scanner
	dev     DeviceFilter
	line    int
	err     error
	devices map[[2]uint32]bool
}

// NewTracefs streams the reads and writes of a tracefs text trace. Devices
// reports which disks it saw (a trace of several disks needs a filter).
func NewTracefs(r io.Reader, dev DeviceFilter) *tracefsSource {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return &tracefsSource{sc: sc, dev: dev, devices: map[[2]uint32]bool{}}
}

func (t *tracefsSource) Next(io *ioclass.IO) bool {
	for t.err == nil && t.sc.Scan() {
		t.line++
		rec, ok, err := blktrace.ParseLine(t.sc.Text())
		if err != nil {
			t.err = fmt.Errorf("line %d: %w", t.line, err)
			return false
		}
		if !ok {
			continue
		}
		t.devices[[2]uint32{rec.Major, rec.Minor}] = true
		dir := rec.Dir()
		if rec.Bytes == 0 || (dir != blktrace.Read && dir != blktrace.Write) ||
			(t.dev.Set && (rec.Major != t.dev.Major || rec.Minor != t.dev.Minor)) {
			continue
		}
		*io = ioclass.IO{Size: rec.Bytes, Write: dir == blktrace.Write, Comm: rec.Comm, LBA: rec.Sector, PID: rec.PID}
		return true
	}
	if t.err == nil {
		t.err = t.sc.Err()
	}
	return false
}

func (t *tracefsSource) Err() error { return t.err }

// Devices lists the disks seen so far as MAJOR:MINOR.
func (t *tracefsSource) Devices() []string {
	var out []string
	for d := range t.devices {
		out = append(out, fmt.Sprintf("%d:%d", d[0], d[1]))
	}
	slices.Sort(out)
	return out
}

// Open reads a trace file's kind from its first non-blank byte: '{' is a
// summary (expanded with ExpandSummary; capacity is its data device's
// size), anything else tracefs text (capacity 0: unknown).
func Open(r io.Reader, dev DeviceFilter) (src Source, capacity uint64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if err == io.EOF {
				return FromSlice(nil), 0, nil
			}
			return nil, 0, err
		}
		if !bytes.ContainsAny(b, " \t\r\n") {
			break
		}
		br.ReadByte()
	}
	if b, _ := br.Peek(1); b[0] == '{' {
		s, err := ReadSummary(br)
		if err != nil {
			return nil, 0, err
		}
		ios, err := ExpandSummary(s)
		if err != nil {
			return nil, 0, err
		}
		return FromSlice(ios), uint64(max(s.Host.DataBytes, 0)), nil
	}
	return NewTracefs(br, dev), 0, nil
}

// Zipf is a synthetic overwrite trace: Count writes of BlockBytes each, at
// block-aligned offsets over a volume of VolumeBytes, block popularity
// Zipf-distributed with exponent Theta (0 < Theta < 1; 0.99 is YCSB's
// default), the ranks scattered over the volume. Comm names the writing
// task (tp_osd_tp: a Ceph OSD's client writes).
type Zipf struct {
	VolumeBytes, BlockBytes uint64
	Theta                   float64
	Count                   uint64
	Comm                    string
	Seed                    uint64

	rng                     *rand.Rand
	n                       uint64
	zetan, alpha, eta, half float64
	prime                   uint64
	done                    uint64
}

// Start checks the parameters and prepares the generator (it sums n terms
// once: about 0.1 s for 2^24 blocks).
func (z *Zipf) Start() error {
	if z.BlockBytes == 0 || z.BlockBytes%512 != 0 || z.VolumeBytes < 2*z.BlockBytes {
		return fmt.Errorf("zipf: block %d bytes over %d: want a multiple of 512 and at least two blocks", z.BlockBytes, z.VolumeBytes)
	}
	if !(z.Theta > 0 && z.Theta < 1) {
		return fmt.Errorf("zipf: theta %v: want 0 < theta < 1", z.Theta)
	}
	z.n = z.VolumeBytes / z.BlockBytes
	// Gray et al., "Quickly generating billion-record synthetic databases"
	// (SIGMOD 1994): rank = n·(η·u − η + 1)^α for the tail, exact for the
	// two most popular ranks.
	zeta := func(n uint64) float64 {
		s := 0.0
		for i := uint64(1); i <= n; i++ {
			s += 1 / math.Pow(float64(i), z.Theta)
		}
		return s
	}
	zeta2 := zeta(2)
	z.zetan = zeta(z.n)
	z.alpha = 1 / (1 - z.Theta)
	z.eta = (1 - math.Pow(2/float64(z.n), 1-z.Theta)) / (1 - zeta2/z.zetan)
	z.half = 1 + math.Pow(0.5, z.Theta)
	z.rng = rand.New(rand.NewPCG(z.Seed, 0x5eed))
	// An odd multiplier coprime with n scatters ranks over the volume: a
	// bijection of [0, n), so hot blocks are not neighbours.
	z.prime = 0
	for p := uint64(2654435761) % z.n; ; p++ {
		if p > 1 && gcd(p, z.n) == 1 {
			z.prime = p
			break
		}
	}
	return nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// rank draws a 0-based rank, 0 the most popular.
func (z *Zipf) rank() uint64 {
	u := z.rng.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	r := uint64(float64(z.n) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, z.n-1)
}

// Next yields the next write.
func (z *Zipf) Next(io *ioclass.IO) bool {
	if z.done >= z.Count {
		return false
	}
	z.done++
	hi, lo := bits.Mul64(z.rank(), z.prime)
	_, block := bits.Div64(hi, lo, z.n)
	*io = ioclass.IO{Size: z.BlockBytes, Write: true, Comm: z.Comm, LBA: block * (z.BlockBytes / 512)}
	return true
}

func (z *Zipf) Err() error { return nil }
