package foreign

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/provision"
	"github.com/prism-storage/prism/test/support/loopdevs"
)

// hooked runs the real host executor and calls after once each command has run.
type hooked struct {
	recorder
	after func(ctx context.Context, argv []string)
}

func (h *hooked) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	out, err := h.recorder.Run(ctx, argv, stdin)
	h.after(ctx, argv)
	return out, err
}

// TestForeignWrittenBehindThePageCache: someone writes a planned partition's range behind
// the device's page cache (another host on shared storage, an O_DIRECT writer), just after a
// page of it was cached: here, every time libblkid has probed the range, the test caches that
// page as zeros and then writes its data into the loop device's backing file, which the loop
// device's own page cache does not see. The bytes lie in the partition's head (which must be
// zeros) and between the sparse read's samples. Prism's proof that the head is zero must read
// the device (decision 0062): the partition is refused, not made over the data.
func TestForeignWrittenBehindThePageCache(t *testing.T) {
	e := setup(t)
	a := e.attach(t, "fast", 8*gib)
	p := planFor(t, planOpts{slots: 2}, a)
	slot := provision.Wanted(p.FastDevices[0])[0]
	at := slot.StartBytes + 8192 // inside the head, past the sample at the range's start
	writes := 0
	h := &hooked{after: func(ctx context.Context, argv []string) {
		i := slices.Index(argv, "--offset")
		if argv[0] != "blkid" || i < 0 || argv[i+1] != strconv.FormatInt(slot.StartBytes, 10) {
			return
		}
		writes++
		behindTheCache(t, a, at, e.known)
	}}
	res := provision.Runner{Exec: h, HostRoot: "/", Proc: loopdevs.HostProc(t)}.Reconcile(e.ctx, p, e.devices(t, a), prismv1.ModeApply)
	if writes == 0 {
		t.Fatalf("libblkid never probed partition 1's range; it ran %q", h.writes())
	}
	st := statuses(res, a)[0]
	if st.State != prismv1.PartitionRefused {
		t.Fatalf("partition 1 is %s (%q) over bytes written at %d behind the page cache, want Refused; it ran %q", st.State, st.Message, at, h.writes())
	}
	t.Logf("partition 1 refused: %s", st.Message)
}

// behindTheCache caches the page at at of the loop device as zeros, then writes data there
// into its backing file: the page cache then says zeros where the device holds data.
func behindTheCache(t *testing.T, l *loop, at int64, data []byte) {
	t.Helper()
	file, err := os.OpenFile(l.file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.WriteAt(make([]byte, len(data)), at); err != nil {
		t.Fatal(err)
	}
	dev, err := os.Open(l.dev)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := hostexec.DropPageCache(dev); err != nil {
		t.Fatal(err)
	}
	page := make([]byte, len(data))
	if _, err := dev.ReadAt(page, at); err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteAt(data, at); err != nil {
		t.Fatal(err)
	}
}
