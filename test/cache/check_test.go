package cache

import (
	"context"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/ioclass"
	"github.com/prism-storage/prism/internal/node/opencas"
	"github.com/prism-storage/prism/test/support/ioclasstest"
)

// TestCheckNode runs the node check (prism-agent cache-check, hack/validate-opencas-node.sh)
// against the emulator: every output it reads parses, and it changes nothing.
func TestCheckNode(t *testing.T) { forEachRelease(t, testCheckNode) }

func testCheckNode(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	before := h.fingerprint()
	rec := &recorder{inner: hostexec.Local{}}
	results := opencas.CheckNode(context.Background(), rec, h.root)
	if len(rec.mutating()) != 0 {
		t.Fatalf("the check ran %q", rec.mutating())
	}
	// version, list, then for the cache: stats, class stats, per core (2) stats and seq-cutoff,
	// 5 parameter namespaces, the class listing; then opencas.conf.
	if want := 2 + 2 + 2*2 + 5 + 1 + 1; len(results) != want {
		t.Errorf("%d checks, want %d", len(results), want)
	}
	for _, r := range results {
		if !r.OK || len(r.Unknown) > 0 {
			t.Errorf("%s: ok %v, %s, unknown %v", r.What, r.OK, r.Detail, r.Unknown)
		}
	}
	if h.fingerprint() != before {
		t.Error("the node changed")
	}
}

// TestCheckLoad loads a compiled policy into the cache, reads it back, and restores the
// classes the cache had; a file casadm refuses is reported and leaves the classes alone.
func TestCheckLoad(t *testing.T) { forEachRelease(t, testCheckLoad) }

func testCheckLoad(t *testing.T) {
	h := newHost(t)
	mustOK(t, h.reconcile(desired(t), nil))
	listing := func() string { return h.casadm("-C", "-L", "-i", "1", "-o", "csv") }
	before := listing()
	cfg, err := ioclass.Compile(&ioclasstest.FiveClasses().Spec)
	if err != nil {
		t.Fatal(err)
	}
	results := opencas.CheckLoad(context.Background(), hostexec.Local{}, 1, cfg.CSV())
	if len(results) != 3 || !results[0].OK || !results[1].OK || !results[2].OK || !strings.Contains(results[1].Detail, "read back as loaded") {
		t.Fatalf("results: %+v", results)
	}
	if after := listing(); after != before {
		t.Errorf("classes not restored:\n%s\nwant\n%s", after, before)
	}

	bad := "IO class id,IO class name,Eviction priority,Allocation\n0,unclassified,22,1\n1,bogus:1&done,1,1\n"
	results = opencas.CheckLoad(context.Background(), hostexec.Local{}, 1, bad)
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
		}
	}
	if failed == 0 || !strings.Contains(results[0].Detail+results[1].Detail, "Unexpected classification rule condition") {
		t.Errorf("a file casadm refuses: %+v", results)
	}
	if after := listing(); after != before {
		t.Errorf("classes changed by a refused file:\n%s", after)
	}
}
