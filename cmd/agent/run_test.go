package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/prism-storage/prism/internal/node/exporter"
	"github.com/prism-storage/prism/test/support/fixturehost"
)

// readMemory reads the forced collections so far and the heap memory that is free but not
// yet returned to the OS (what the agent's RSS keeps beyond its live heap).
func readMemory() (forcedGCs, heapFree uint64) {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func TestBackgroundInventoryReturnsItsMemory(t *testing.T) {
	root := t.TempDir()
	if _, err := fixturehost.BuildNode("../..", "optane-qlc-homelab-d", root); err != nil {
		t.Fatal(err)
	}
	host := hostFlags{hostRoot: root, noIdentify: true}
	latest := &exporter.LatestDevices{}
	take := backgroundInventory(host.options(), latest, &exporter.Exporter{Node: "n1", Collector: host.healthCollector()})

	// Leave free heap behind, as an earlier burst would: 32 MiB. A high GC percent keeps the
	// background scavenger from returning it before the inventory runs, so that the check
	// below measures what the inventory returns, not what the scavenger did meanwhile.
	defer debug.SetGCPercent(debug.SetGCPercent(1000))
	const burstBytes = 32 << 20
	burst := make([][]byte, burstBytes/(128<<10))
	for i := range burst {
		burst[i] = make([]byte, 128<<10)
	}
	burst = nil
	runtime.GC()
	forcedBefore, freeBefore := readMemory()
	if freeBefore < burstBytes/2 {
		t.Fatalf("only %d bytes of free heap after a %d-byte burst: the test cannot tell what the inventory returns", freeBefore, burstBytes)
	}

	rep, err := take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Devices) == 0 || len(latest.Get()) != len(rep.Devices) {
		t.Fatalf("inventory gave %d devices, the metrics path has %d", len(rep.Devices), len(latest.Get()))
	}
	forcedAfter, freeAfter := readMemory()
	t.Logf("free heap before %d, after %d bytes", freeBefore, freeAfter)
	if forcedAfter != forcedBefore+1 {
		t.Errorf("%d forced collections during the inventory, want 1", forcedAfter-forcedBefore)
	}
	// The runtime keeps a few MiB it cannot return (pages of huge pages in use, measured up
	// to 3 MiB under load); most of the burst must not stay.
	if freeAfter > burstBytes/8 {
		t.Errorf("%d bytes of free heap kept after the inventory; want them returned to the OS", freeAfter)
	}
}
