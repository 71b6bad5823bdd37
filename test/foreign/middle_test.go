//go:build linux

package foreign

import (
	"fmt"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestForeignInTheMiddle puts an ext4 file system in the middle of a device, the way a deleted
// second partition leaves one: the device's head and tail and the first and last MiB of every
// planned partition stay zero, so only a read of the middle sees it. Issue 29 item 6: before
// the sparse read the agent partitioned such a device as empty.
func TestForeignInTheMiddle(t *testing.T) {
	e := setup(t)
	mkfs := e.tool(t, "mkfs.ext4", "")

	// mkfsMiddle makes a 64 MiB ext4 at byte off of l (mke2fs -E offset, no discard: that
	// would zero the rest of a loop device) and checks that blkid sees it there and no file
	// system on the whole device.
	mkfsMiddle := func(t *testing.T, l *loop, off int64) {
		t.Helper()
		e.must(t, mkfs, "-F", "-q", "-E", fmt.Sprintf("offset=%d,nodiscard", off), l.dev, "64M")
		at, err := run(e.ctx, "", e.tool(t, "blkid", ""), "-p", "-O", fmt.Sprint(off), "-o", "export", l.dev)
		if err != nil || !strings.Contains(at, "TYPE=ext4") {
			t.Fatalf("precondition: blkid -p -O %d %s: %q %v, want ext4", off, l.dev, at, err)
		}
		if got := e.probe(t, l.dev); got["TYPE"] != "" || got["PTTYPE"] != "" && got["PTTYPE"] != "gpt" {
			t.Fatalf("precondition: blkid -p %s finds %v on the whole device; the case needs one that looks empty or Prism's", l.dev, got)
		}
	}

	// (a) No table yet: the device is refused whole, and not a byte changes.
	t.Run("no-table", func(t *testing.T) {
		l := e.attach(t, "middle-ext4", devSize)
		p := planFor(t, planOpts{slots: 2, cache: true}, l)
		off := partitionStart(t, p, l, 2) + 512*mib
		mkfsMiddle(t, l, off)
		res := e.refusesAndKeeps(t, l, p, fmt.Sprintf("sample %d of %d", off/mib+1, (devSize+mib-1)/mib))
		if msg := statuses(res, l)[0].Message; !strings.Contains(msg, "non-zero bytes at byte") || !strings.Contains(msg, "allowWipe") {
			t.Errorf("refusal %q: want where the sparse read found data and how to grant it", msg)
		}
	})

	// (b) Prism's table with two slots, a plan that adds a third, and ext4 in the middle of
	// the third's range: only that slot is refused, and the device does not change.
	t.Run("range-the-table-grows-into", func(t *testing.T) {
		l := e.attach(t, "middle-ext4-extend", extSize)
		two, three := extendedPlan(t, nil, l)
		e.provisionEmpty(t, two, l)
		off := partitionStart(t, three, l, 3) + 512*mib
		mkfsMiddle(t, l, off)
		e.keeps(t, l, three, []int32{3}, fmt.Sprintf("sample %d of %d", 512+1, slotSize/mib))
	})

	// (c) Granted: Prism writes its table over what only its sparse read sees.
	t.Run("granted", func(t *testing.T) {
		l := e.attach(t, "middle-ext4-granted", devSize)
		p := planFor(t, planOpts{slots: 2, cache: true, grant: []*loop{l}}, l)
		mkfsMiddle(t, l, partitionStart(t, p, l, 2)+512*mib)
		res, rec := e.pass(t, p, l)
		for _, s := range statuses(res, l) {
			if s.State != prismv1.PartitionReady {
				t.Errorf("granted: partition %d is %s (%q); ran %q", s.Number, s.State, s.Message, rec.writes())
			}
		}
	})
}
