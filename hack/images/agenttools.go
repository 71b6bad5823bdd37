package images

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/prism-storage/prism/hack/depscan"
)

// HostTools are the commands the agent runs on the host, in its mount and IPC namespaces
// (nsenter), not from the image, with the agent flag the chart passes to turn that on: Open
// CAS's casadm must match the host's kernel module (--host-tools=casadm when
// agent.openCAS.enabled); LVM must use the host's lvm.conf, locks and udev (--db-volumes,
// decision 0036). Every other command the agent runs must be in the image.
var HostTools = map[string]string{
	"casadm":   "--host-tools=casadm",
	"pvs":      "--db-volumes=",
	"vgs":      "--db-volumes=",
	"lvs":      "--db-volumes=",
	"pvcreate": "--db-volumes=",
	"vgcreate": "--db-volumes=",
	"lvcreate": "--db-volumes=",
	"lvchange": "--db-volumes=",
}

// AgentCommands lists the argv[0]s of the agent binary: hack/depscan's scanner, the same one
// that guards hack/packages.txt, over the non-test Go files of every package of this module
// that cmd/agent links (go list -deps). By command, the places that run it.
func AgentCommands(repoRoot string) (map[string][]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Module.Path}}\t{{.Dir}}\t{{join .GoFiles \",\"}}{{end}}", "./cmd/agent")
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps ./cmd/agent: %w: %s", err, stderr.String())
	}
	modCmd := exec.Command("go", "list", "-m")
	modCmd.Dir = repoRoot
	modOut, err := modCmd.Output()
	if err != nil {
		return nil, err
	}
	module := strings.TrimSpace(string(modOut))
	var pkgs [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] != module || f[2] == "" {
			continue
		}
		var paths []string
		for _, g := range strings.Split(f[2], ",") {
			paths = append(paths, filepath.Join(f[1], g))
		}
		pkgs = append(pkgs, paths)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("go list found no package of %s under ./cmd/agent", module)
	}
	// Constants of every package first, for names like casadm.Command (as depscan.Collect).
	imported := map[string]string{}
	for _, paths := range pkgs {
		_, files, err := depscan.ParseGoDir(paths)
		if err != nil {
			return nil, err
		}
		for k, v := range depscan.GoConstants(files) {
			imported[k] = v
		}
	}
	found := map[string][]string{}
	for _, paths := range pkgs {
		fset, files, err := depscan.ParseGoDir(paths)
		if err != nil {
			return nil, err
		}
		for _, u := range depscan.GoCommands(fset, files, imported) {
			rel, _ := filepath.Rel(repoRoot, u.File)
			found[u.Command] = append(found[u.Command], fmt.Sprintf("%s:%d", rel, u.Line))
		}
	}
	for _, w := range found {
		sort.Strings(w)
	}
	return found, nil
}
