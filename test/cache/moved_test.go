package cache

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/node/opencas"
)

// movingPartition gives the cache partition's path to another partition holding someone's
// data the first time casadm lists its caches: after the scans proved the partition empty and
// before casadm -S --force would start a cache on it.
type movingPartition struct {
	inner hostexec.Executor
	h     *host
	data  []byte
	moved bool
}

func (m *movingPartition) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	out, err := m.inner.Run(ctx, argv, stdin)
	if !m.moved && len(argv) > 1 && argv[1] == "-L" {
		m.moved = true
		path := filepath.Join(m.h.root, part)
		if rerr := os.Rename(path, path+".scanned"); rerr != nil {
			m.h.t.Fatal(rerr)
		}
		if werr := os.WriteFile(path, m.data, 0o644); werr != nil {
			m.h.t.Fatal(werr)
		}
	}
	return out, err
}

// TestNodeStartsNoCacheOnAPartitionThatMovedOn (decision 0062): casadm takes only the stable
// path, so the partition is held from the scans to the start, and the start runs only while
// the path names the partition held. Before, the cache was started (Running) on the other
// partition. The emulator writes nothing to a partition; the real module's start overwrites
// it, which the byte check below would see.
func TestNodeStartsNoCacheOnAPartitionThatMovedOn(t *testing.T) {
	forEachRelease(t, testNodeStartsNoCacheOnAPartitionThatMovedOn)
}

func testNodeStartsNoCacheOnAPartitionThatMovedOn(t *testing.T) {
	h := newHost(t)
	h.zeroPartition()
	theirs := bytes.Repeat([]byte("someone's data "), (4<<20)/15+1)[:4<<20]
	mv := &movingPartition{inner: &recorder{inner: hostexec.Local{}}, h: h, data: theirs}
	r := opencas.Runner{Exec: mv, HostRoot: h.root}
	devices := []prismv1.Device{{Name: "sda", StablePath: q1}, {Name: "sdb", StablePath: q2}}
	res := r.ReconcileNode(context.Background(), nodePlan(t, prismv1.CacheWriteThrough), devices, partitions, prismv1.ModeApply)
	if !mv.moved {
		t.Fatal("casadm never listed the caches")
	}
	got, err := os.ReadFile(filepath.Join(h.root, part))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, theirs) {
		t.Fatalf("DATA LOSS: a cache was started on the partition that took the scanned one's path: %+v", res.Caches)
	}
	if st := res.Caches[0]; st.State == prismv1.CacheRunning || !strings.Contains(st.Message, "no longer names the partition that was scanned") {
		t.Fatalf("cache: %+v, want no cache, naming why", st)
	}
}
