package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/test/support/fixturehost"
)

// A host without NVMe controller character devices (a container without /dev/nvmeN, a
// fixture tree) is no problem of each drive: `prism-agent inventory` warns of nothing, and
// with --debug says it once, on stderr, naming every controller.
func TestInventoryOnAHostWithoutNVMeCharDevicesWarnsOfNothing(t *testing.T) {
	root := t.TempDir()
	n := fixturehost.Node{Name: "n"}
	for _, name := range []string{"nvme0n1", "nvme1n1"} {
		n.Devices = append(n.Devices, fixturehost.Device{Name: name, Model: "INTEL SSDPF2NV153TZ", Serial: "PHAC" + name, Bus: "nvme",
			SizeBytes: 15362991415296, Source: "test"})
	}
	if err := fixturehost.Build(n, root, ""); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	if err := runInventory([]string{"--host-root", root, "-o", "json"}, &out, &stderr); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Devices  []json.RawMessage `json:"devices"`
		Warnings []string          `json:"warnings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 2 || len(doc.Warnings) != 0 || stderr.Len() != 0 {
		t.Fatalf("%d devices, warnings %q, stderr %q; want 2 devices, no warnings, nothing on stderr", len(doc.Devices), doc.Warnings, stderr.String())
	}

	out.Reset()
	if err := runInventory([]string{"--host-root", root, "-o", "table", "--debug"}, &out, &stderr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "debug: no NVMe Identify for nvme0, nvme1") || !strings.Contains(lines[0], filepath.Join(root, "dev")) {
		t.Fatalf("stderr %q, want one debug line naming nvme0, nvme1 and %s/dev", stderr.String(), root)
	}
	if strings.Contains(strings.ToLower(out.String()), "warning") {
		t.Errorf("the table warns: %s", out.String())
	}
}
