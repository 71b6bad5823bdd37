package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prism-storage/prism/test/support/fixturehost"
)

// The caches of the demo run on the casadm EMULATOR (cmd/casadm-emulator), not on Open CAS:
// Open CAS's kernel module cannot load here. Each agent finds the emulator first on its PATH
// under the name casadm and runs it exactly as it would run the real casadm; the emulator
// keeps one simulated node's caches in that node's state file.

// buildEmulator builds cmd/casadm-emulator as <bin>/casadm-emulator/casadm and returns the
// directory to put first on the agents' PATH.
func buildEmulator(ctx context.Context, bin, repo string) (string, error) {
	dir := filepath.Join(bin, "casadm-emulator")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "casadm"), "./cmd/casadm-emulator")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the casadm emulator: %v\n%s", err, out)
	}
	return dir, nil
}

// emulatedHost is one simulated node's casadm emulator state.
type emulatedHost struct {
	casadm string // the emulator binary
	state  string // $CASADM_EMULATOR_STATE of this node's agent
}

// env is what the node's agent needs in its environment to run the emulator as casadm.
func (h emulatedHost) env() []string {
	return []string{"PATH=" + filepath.Dir(h.casadm) + string(os.PathListSeparator) + os.Getenv("PATH"), "CASADM_EMULATOR_STATE=" + h.state}
}

// run runs the emulator on this node's state (emulator verbs and casadm commands alike).
func (h emulatedHost) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.casadm, args...)
	cmd.Env = append(os.Environ(), "CASADM_EMULATOR_STATE="+h.state, "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("casadm (emulator) %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// addDevice tells the emulator a block device exists on the node, by its by-id link.
func (h emulatedHost) addDevice(ctx context.Context, link, kernel string, size int64, extra ...string) error {
	_, err := h.run(ctx, append([]string{"--emulator-add-device", "--device", link, "--size", strconv.FormatInt(size, 10), "--kernel-name", kernel}, extra...)...)
	return err
}

// addDisks registers the node's whole disks (the fixture's drives) with the emulator, so that
// casadm finds the capacity devices the plan puts behind the cache. A disk with a partition
// table or a filesystem is registered as such: casadm refuses those as cores as it would on
// the real node.
func (h emulatedHost) addDisks(ctx context.Context, n fixturehost.Node, root string) error {
	links, err := byIDLinks(root)
	if err != nil {
		return err
	}
	for _, d := range n.Devices {
		link, ok := links[d.Name]
		if !ok {
			return fmt.Errorf("%s/%s has no /dev/disk/by-id link", n.Name, d.Name)
		}
		var extra []string
		switch {
		case d.Content == "gpt" || len(d.Partitions) > 0:
			extra = append(extra, "--partitions")
		case d.Content == "ext4" || d.Content == "xfs":
			extra = append(extra, "--filesystem", d.Content)
		}
		if err := h.addDevice(ctx, link, "/dev/"+d.Name, d.SizeBytes, extra...); err != nil {
			return err
		}
	}
	return nil
}

// byIDLinks maps kernel names to their /dev/disk/by-id links in a host root.
func byIDLinks(root string) (map[string]string, error) {
	dir := filepath.Join(root, "dev", "disk", "by-id")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out[filepath.Base(target)] = "/dev/disk/by-id/" + e.Name()
	}
	return out, nil
}
