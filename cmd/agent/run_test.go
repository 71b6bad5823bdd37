package main

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/go-logr/logr/funcr"

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

	// Leave free heap behind, as an earlier burst would: 8 MiB, less what the background
	// scavenger returns on its own meanwhile.
	burst := make([][]byte, 64)
	for i := range burst {
		burst[i] = make([]byte, 128<<10)
	}
	burst = nil
	runtime.GC()
	forcedBefore, freeBefore := readMemory()

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
	// The runtime keeps some pages it cannot return (huge pages in use); an 8 MiB burst must
	// not stay.
	if freeAfter > 2<<20 {
		t.Errorf("%d bytes of free heap kept after the inventory; want them returned to the OS", freeAfter)
	}
}

// A host fact (no NVMe character devices) is logged once, not at every inventory.
func TestOnceEachLogsEachMessageOnce(t *testing.T) {
	var got []string
	log := funcr.New(func(_, args string) { got = append(got, args) }, funcr.Options{})
	say := onceEach(log)
	for range 3 {
		say("no NVMe Identify for nvme0")
		say("another fact")
	}
	if len(got) != 2 {
		t.Fatalf("logged %q, want each message once", got)
	}
}
