package defaults

import (
	"github.com/prism-storage/prism/internal/bytesize"

	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/prism-storage/prism/internal/blktrace"
	"github.com/prism-storage/prism/internal/ioclass"
)

// Outcome is what Open CAS does with a class's IO.
type Outcome string

// Outcomes of a class.
const (
	// Cached: allocation above 0, evicted by priority.
	Cached Outcome = "cached"
	// Pinned: allocation above 0, never evicted for another class.
	Pinned Outcome = "pinned"
	// PassThrough: allocation 0, the IO goes straight to the core device.
	PassThrough Outcome = "pass-through"
)

// OutcomeOf reads a class's outcome from its allocation and priority.
func OutcomeOf(c ioclass.Class) Outcome {
	switch {
	case c.MaxSizePercent() == 0:
		return PassThrough
	case c.Pinned():
		return Pinned
	}
	return Cached
}

// Share is the bytes of one workload's data-device IO in one direction that
// one class received.
type Share struct {
	Workload string             `json:"workload"`
	Dir      blktrace.Direction `json:"dir"`
	Class    int                `json:"class"`
	Outcome  Outcome            `json:"outcome"`
	Bytes    uint64             `json:"bytes"`
}

// Replay classifies every bio the OSD queued to the data device (reads and
// writes that carry data; zero-length flushes occupy no cache line) with the
// kernel-exact evaluator, as an Open CAS cache in front of that device would.
// lba is the group's first sector; a group whose last sector would be
// classified differently is an error, since one class per group is then not
// the truth.
func Replay(s *blktrace.Summary, cfg ioclass.Config) ([]Share, error) {
	e, err := ioclass.NewEvaluator(cfg)
	if err != nil {
		return nil, err
	}
	type key struct {
		w     string
		dir   blktrace.Direction
		class int
	}
	sums := map[key]uint64{}
	for _, w := range s.Workloads {
		for _, g := range w.Data.Groups {
			dir := g.Dir()
			if g.Size == 0 || (dir != blktrace.Read && dir != blktrace.Write) {
				continue
			}
			io := ioclass.IO{Size: g.Size, Write: dir == blktrace.Write, Comm: g.Comm, LBA: g.FirstSector}
			class := e.Classify(io)
			io.LBA = g.LastSector
			if last := e.Classify(io); last != class {
				return nil, fmt.Errorf("%s: %s %s bios of %d bytes from %s: sector %d goes to class %d, sector %d to class %d",
					w.Name, g.RWBS, dir, g.Size, g.Comm, g.FirstSector, class, g.LastSector, last)
			}
			sums[key{w.Name, dir, class}] += g.Bytes()
		}
	}
	var out []Share
	for k, n := range sums {
		c, _ := cfg.Class(k.class)
		out = append(out, Share{Workload: k.w, Dir: k.dir, Class: k.class, Outcome: OutcomeOf(c), Bytes: n})
	}
	order := map[string]int{}
	for i, w := range s.Workloads {
		order[w.Name] = i
	}
	slices.SortFunc(out, func(a, b Share) int {
		return cmp.Or(cmp.Compare(order[a.Workload], order[b.Workload]), cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Class, b.Class))
	})
	return out, nil
}

// Expectation is what a policy means to do with one traced workload: at
// least MinShare of its data-device bytes in direction Dir get Outcome.
type Expectation struct {
	Workload string
	Dir      blktrace.Direction
	Outcome  Outcome
	MinShare float64
}

// CephOSDIntent is what the default Ceph OSD policy is for. Replaying the
// committed trace gives 100 % for every line but the 4 MiB write and read
// workloads, where one 4 KiB bio each (the size of the small object rados
// bench writes besides its 4 MiB ones) is no whole write unit: 99.9992 %.
// minShare leaves room for such bios, not for a change of pattern.
var CephOSDIntent = []Expectation{
	{RBD4KRandWrite, blktrace.Write, Cached, minShare},
	{Rados4KWrite, blktrace.Write, Cached, minShare},
	{Rados4MWrite, blktrace.Write, PassThrough, minShare},
	{Rados4MRead, blktrace.Read, PassThrough, minShare},
	{RBD4KRandRead, blktrace.Read, Cached, minShare},
	{Compaction, blktrace.Write, Pinned, minShare},
}

// CheckIntent replays the trace through cfg and checks each expectation.
func CheckIntent(s *blktrace.Summary, cfg ioclass.Config, intent []Expectation) ([]Share, []error) {
	shares, err := Replay(s, cfg)
	if err != nil {
		return nil, []error{err}
	}
	var errs []error
	for _, x := range intent {
		var total, hit uint64
		for _, sh := range shares {
			if sh.Workload == x.Workload && sh.Dir == x.Dir {
				total += sh.Bytes
				if sh.Outcome == x.Outcome {
					hit += sh.Bytes
				}
			}
		}
		if total == 0 {
			errs = append(errs, fmt.Errorf("%s: no %s bytes on the data device to replay", x.Workload, x.Dir))
			continue
		}
		if got := float64(hit) / float64(total); got < x.MinShare {
			errs = append(errs, fmt.Errorf("%s: %.2f %% of the %s bytes are %s, want at least %.0f %%",
				x.Workload, 100*got, x.Dir, x.Outcome, 100*x.MinShare))
		}
	}
	return shares, errs
}

// ReplayMarkdown renders the replay as a table: per workload and direction,
// the share of bytes each class received; names are the classes' names.
func ReplayMarkdown(shares []Share, names map[int]string) string {
	totals := map[string]uint64{}
	for _, sh := range shares {
		totals[sh.Workload+"/"+string(sh.Dir)] += sh.Bytes
	}
	var b strings.Builder
	b.WriteString("| workload | op | class | outcome | bytes | share |\n| --- | --- | --- | --- | ---: | ---: |\n")
	for _, sh := range shares {
		name := names[sh.Class]
		if name == "" {
			name = fmt.Sprint(sh.Class)
		}
		fmt.Fprintf(&b, "| %s | %s | %d %s | %s | %s | %.4f %% |\n", sh.Workload, sh.Dir, sh.Class, name, sh.Outcome,
			bytesize.IEC(int64(sh.Bytes)), 100*float64(sh.Bytes)/float64(totals[sh.Workload+"/"+string(sh.Dir)]))
	}
	return b.String()
}
