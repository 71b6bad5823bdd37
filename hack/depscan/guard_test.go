package depscan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandIsInstalled is the guard of issue 15: a fresh machine has only the base
// image's packages, so every command a script, a Makefile recipe or the Go code runs must
// come from a base package, from a package hack/install-deps.sh installs (hack/packages.txt),
// from the Go toolchain or from this repository's own builds. Commands of the QEMU guest's
// scripts must come from the guest root's packages or Debian's required ones.
func TestEveryCommandIsInstalled(t *testing.T) {
	found, err := Collect("../..")
	if err != nil {
		t.Fatal(err)
	}
	table := readTable(t)
	base := readSet(t, "base-packages.txt", 0)
	installed, guestRoots := readPackages(t)
	var problems, unknown []string
	for _, f := range found {
		if ProvidedBy(f.Command) != "" {
			if isCommittedScript(f.Command) {
				if _, err := os.Stat(filepath.Join("../..", f.Command)); err != nil {
					problems = append(problems, fmt.Sprintf("%s (%s): no such file in the repository", f.Command, where(f)))
				}
			}
			continue
		}
		row, ok := table[f.Command]
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%s (%s)", f.Command, where(f)))
			continue
		}
		pkg, priority := row[0], row[1]
		switch {
		case f.Guest != "" && !guestRoots[f.Guest][pkg] && priority != "required":
			problems = append(problems, fmt.Sprintf("%s, from package %s, runs in the guest (%s): add %s to hack/packages.txt's %s group", f.Command, pkg, where(f), pkg, f.Guest))
		case f.Guest == "" && !base[pkg] && !installed[pkg]:
			problems = append(problems, fmt.Sprintf("%s, from package %s (%s), is neither in the base image nor installed by hack/install-deps.sh: add %s to hack/packages.txt under the group that runs it", f.Command, pkg, where(f), pkg))
		}
	}
	if len(unknown) > 0 {
		t.Errorf("commands missing from hack/depscan/commands.tsv:\n  %s\nInstall their packages (hack/install-deps.sh GROUP, or apt-get install), then regenerate the table with: go generate ./hack/depscan\n(or, for a command this repository builds, add it to builtByProject in hack/depscan/provided.go)",
			strings.Join(unknown, "\n  "))
	}
	if len(problems) > 0 {
		t.Errorf("commands a fresh machine would not have:\n  %s", strings.Join(problems, "\n  "))
	}
}

// TestGuardSeesTheKnownCommands checks the scan itself on the repository: commands known to
// be run, one from each kind of source, must be found.
func TestGuardSeesTheKnownCommands(t *testing.T) {
	found, err := Collect("../..")
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]string{}
	for _, f := range found {
		at[f.Command] += strings.Join(f.Where, " ") + " "
	}
	for cmd, file := range map[string]string{
		"depmod":           "hack/guest/build.sh",      // a shell script
		"partx":            "internal/host/gpt/",       // an Argv builder
		"sgdisk":           "internal/host/gpt/",       // an Argv builder returning a multi-line literal
		"casadm":           "internal/host/casadm/",    // the adapter's Command constant in its argv builders
		"nsenter":          "internal/host/hostexec/",  // append([]string{...}, argv...)
		"smartctl":         "internal/host/smart/",     // an Argv builder called by Executor.Run
		"losetup":          "hack/demo/",               // argv := []string{...}
		"sfdisk":           "hack/demo/fastdevices.go", // loopTools
		"promtool":         "test/alerts/",             // exec.LookPath
		"mkfs.btrfs":       "internal/host/signature/", // a tool -> package table
		"git":              "Makefile",                 // $(shell ...)
		"/usr/bin/python3": "cmd/kubectl-prism/",       // a local assigned once
		"npm":              "test/browser/",            // a {bin, pkg} table
		"mkudffs":          "test/foreign/",            // a local runner mk(argv ...string)
	} {
		if !strings.Contains(at[cmd], file) {
			t.Errorf("%s: not found in %s (found at %q)", cmd, file, at[cmd])
		}
	}
}

// isCommittedScript: a relative path such as hack/install-deps.sh must be in the repository;
// one in bin/ is built by make.
func isCommittedScript(cmd string) bool {
	rel := strings.TrimPrefix(cmd, "./")
	return strings.Contains(rel, "/") && !strings.HasPrefix(rel, "/") && !strings.HasPrefix(rel, "bin/")
}

// readTable reads commands.tsv: command -> [package, priority].
func readTable(t *testing.T) map[string][]string {
	rows, err := ReadColumns("commands.tsv")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{}
	for _, r := range rows {
		if len(r) != 3 {
			t.Fatalf("commands.tsv: %q: want command, package, priority", r)
		}
		table[r[0]] = r[1:]
	}
	return table
}

func readSet(t *testing.T, path string, column int) map[string]bool {
	rows, err := ReadColumns(path)
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]bool{}
	for _, r := range rows {
		s[r[column]] = true
	}
	return s
}

// readPackages reads hack/packages.txt: what install-deps.sh installs on this machine, and
// what each guest's root has (groups guest-root and e2e-root). Other *-root groups
// (image-root: Prism's image) are roots built here, never this machine's.
func readPackages(t *testing.T) (installed map[string]bool, guestRoots map[string]map[string]bool) {
	rows, err := ReadColumns("../packages.txt")
	if err != nil {
		t.Fatal(err)
	}
	installed, guestRoots = map[string]bool{}, map[string]map[string]bool{}
	for _, r := range rows {
		_, guest := guestGroups[r[0]]
		switch {
		case guest:
			if guestRoots[r[0]] == nil {
				guestRoots[r[0]] = map[string]bool{}
			}
			guestRoots[r[0]][r[1]] = true
		case strings.HasSuffix(r[0], "-root"):
			// Another root built here (image-root: Prism's image), never this machine's.
		default:
			installed[r[1]] = true
		}
	}
	return installed, guestRoots
}

// guestGroups are hack/packages.txt's groups installed into a guest's root, never here.
var guestGroups = map[string]struct{}{"guest-root": {}, "e2e-root": {}}

func where(f Found) string {
	if len(f.Where) > 3 {
		return strings.Join(f.Where[:3], ", ") + fmt.Sprintf(" and %d more", len(f.Where)-3)
	}
	return strings.Join(f.Where, ", ")
}
