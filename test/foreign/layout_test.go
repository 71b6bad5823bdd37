//go:build linux

package foreign

import (
	"fmt"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// provisionEmpty partitions empty devices with the plan and requires every planned partition
// Ready: the starting point of the cases that put foreign content inside Prism's layout.
func (e *env) provisionEmpty(t *testing.T, p *prismv1.NodePlan, loops ...*loop) {
	t.Helper()
	res, rec := e.pass(t, p, loops...)
	for _, s := range res.Partitions {
		if s.State != prismv1.PartitionReady {
			t.Fatalf("precondition: partitioning an empty device left partition %d of %s %s (%q); ran %q", s.Number, s.Device, s.State, s.Message, rec.writes())
		}
	}
}

func partitionNode(l *loop, n int32) string { return fmt.Sprintf("%sp%d", l.dev, n) }

// partitionStart is where the plan puts partition n of l.
func partitionStart(t *testing.T, p *prismv1.NodePlan, l *loop, n int32) int64 {
	t.Helper()
	for _, fd := range p.FastDevices {
		if fd.StablePath != l.stablePath {
			continue
		}
		for _, s := range fd.Slots {
			if s.Partition.Number == n {
				return s.Partition.StartBytes
			}
		}
		if fd.Cache != nil && fd.Cache.Number == n {
			return fd.Cache.StartBytes
		}
	}
	t.Fatalf("the plan has no partition %d on %s", n, l.stablePath)
	return 0
}

// extendedPlan is a plan of two DB slots without a cache, and the plan the planner makes
// from it for a third capacity device: the same two slots and a third after them. (With a
// cache no slot can be added: the cache takes the rest of the device and never moves.)
func extendedPlan(t *testing.T, grant []*loop, l *loop) (two, three *prismv1.NodePlan) {
	t.Helper()
	two = planFor(t, planOpts{slots: 2}, l)
	three = planFor(t, planOpts{slots: 3, previous: two, grant: grant}, l)
	for i, s := range two.FastDevices[0].Slots {
		if got := three.FastDevices[0].Slots[i].Partition; got != s.Partition {
			t.Fatalf("the extended plan moved slot %d: %+v -> %+v", i, s.Partition, got)
		}
	}
	return two, three
}

// TestForeignInsidePrismLayout puts foreign content inside Prism's own layout and where
// Prism's next partition would go.
func TestForeignInsidePrismLayout(t *testing.T) {
	e := setup(t)

	// (a) Someone made a file system in prism-db-00: the partition is no longer Prism's to
	// report Ready (it would go to Rook as an OSD's DB).
	t.Run("ext4-in-prism-db-00", func(t *testing.T) {
		mkfs := e.tool(t, "mkfs.ext4", "")
		l := e.attach(t, "ext4-in-db-00", devSize)
		p := planFor(t, planOpts{slots: 2, cache: true}, l)
		e.provisionEmpty(t, p, l)
		e.must(t, mkfs, "-F", "-q", partitionNode(l, 1))
		name := foundName(e.probe(t, partitionNode(l, 1)))
		t.Logf("%s: blkid -p names %q", partitionNode(l, 1), name)
		e.keeps(t, l, p, []int32{1}, name)
	})

	// (b) The same, and a plan that adds a slot: a device whose Prism partition holds foreign
	// data is not extended.
	t.Run("extended-plan-over-ext4-in-prism-db-00", func(t *testing.T) {
		mkfs := e.tool(t, "mkfs.ext4", "")
		l := e.attach(t, "extend-ext4", extSize)
		two, three := extendedPlan(t, nil, l)
		e.provisionEmpty(t, two, l)
		e.must(t, mkfs, "-F", "-q", partitionNode(l, 1))
		name := foundName(e.probe(t, partitionNode(l, 1)))
		e.keeps(t, l, three, []int32{1, 3}, name)
		if parts := kernelPartitions(t, l.name); len(parts) != 2 {
			t.Errorf("the kernel has %v for %s, want the two partitions of the first plan", parts, l.dev)
		}
	})

	// (c) An old OSD's BlueStore label, or random bytes, where the next partition would
	// start: in the free space of Prism's GPT, or at 1 MiB of a device with no table at all.
	// Without a grant the partition is Refused and no byte changes; with one, it is made and
	// the old bytes are zero.
	for _, where := range []string{"no-table-at-prism-db-00", "prism-gpt-at-prism-db-02"} {
		for _, what := range []string{"bluestore-label", "random-mib"} {
			for _, granted := range []bool{false, true} {
				grant := "no-grant"
				if granted {
					grant = "granted"
				}
				t.Run(strings.Join([]string{"free-space", where, what, grant}, "/"), func(t *testing.T) {
					size := devSize
					if where != "no-table-at-prism-db-00" {
						size = extSize
					}
					l := e.attach(t, "free-"+what, size)
					var grants []*loop
					if granted {
						grants = []*loop{l}
					}
					var p *prismv1.NodePlan
					var target int32
					if where == "no-table-at-prism-db-00" {
						p, target = planFor(t, planOpts{slots: 2, cache: true, grant: grants}, l), 1
					} else {
						var two *prismv1.NodePlan
						two, p = extendedPlan(t, grants, l)
						e.provisionEmpty(t, two, l)
						target = 3
					}
					off := partitionStart(t, p, l, target)
					content := randomBytes(t, int(mib))
					if what == "bluestore-label" {
						content = blueStoreLabel(t)
					}
					writeAt(t, l, off, content)
					probe, err := run(e.ctx, "", e.tool(t, "blkid", ""), "-p", "-O", fmt.Sprint(off), "-o", "export", l.dev)
					t.Logf("%s at %d (partition %d's start); blkid -p -O %d: %q %v", what, off, target, off, probe, err)
					if !granted {
						refused := []int32{target}
						if target == 1 {
							refused = nil // no table: every partition
						}
						e.keeps(t, l, p, refused, "")
						return
					}
					res, rec := e.pass(t, p, l)
					for _, s := range statuses(res, l) {
						if s.State != prismv1.PartitionReady {
							t.Errorf("granted: partition %d is %s (%q), want Ready; ran %q", s.Number, s.State, s.Message, rec.writes())
						}
					}
					if !isZero(readAt(t, l, off, len(content))) {
						t.Errorf("granted: the %d bytes at %d are not zero after partition %d was made there; ran %q", len(content), off, target, rec.writes())
					}
				})
			}
		}
	}

	// (d) A grant names device A, not B; both carry ext4. A is wiped and partitioned, B is
	// left byte-identical.
	t.Run("grant-for-one-of-two", func(t *testing.T) {
		mkfs := e.tool(t, "mkfs.ext4", "")
		a, b := e.attach(t, "granted-a", devSize), e.attach(t, "not-granted-b", devSize)
		for _, l := range []*loop{a, b} {
			e.must(t, mkfs, "-F", "-q", l.dev)
		}
		name := foundName(e.probe(t, b.dev))
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{a}}, a, b)
		res := e.refusesAndKeeps(t, b, p, name, a)
		for _, s := range statuses(res, a) {
			if s.State != prismv1.PartitionReady {
				t.Errorf("granted %s: partition %d is %s (%q), want Ready", a.dev, s.Number, s.State, s.Message)
			}
		}
		if got := e.probe(t, a.dev); got["PTTYPE"] != "gpt" || got["TYPE"] != "" {
			t.Errorf("granted %s after the pass: blkid -p %v, want a GPT and no file system", a.dev, got)
		}
	})
}
