// Package alerts tests Prism's Prometheus alerting rules (charts/prism/files/alerts/) with the
// real promtool: `promtool check rules` and the unit tests of prism.rules.test.yaml. Promtool
// comes from Debian's prometheus package; as root the tests install it with apt-get, otherwise
// they skip and say so. test/helm uses Promtool too, on the rules the chart renders.
package alerts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// RulesFile is the literal rule file, relative to the repository root.
const RulesFile = "charts/prism/files/alerts/prism.rules.yaml"

// TestsFile is the promtool unit-test file, relative to the repository root.
const TestsFile = "test/alerts/prism.rules.test.yaml"

// DefaultRunbookBase is the runbook base URL written in the literal rule file.
const DefaultRunbookBase = "https://github.com/prism-storage/prism/blob/main/docs/runbooks/alerts/"

var (
	installOnce sync.Once
	installErr  error
	installOut  []byte
)

// Promtool returns the path of promtool. When it is missing it installs Debian's prometheus
// package as root (apt-get waits for the dpkg lock, so parallel test packages are safe) and
// skips the test when it cannot.
func Promtool(tb testing.TB) string {
	tb.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	_, aptErr := exec.LookPath("apt-get")
	if os.Geteuid() != 0 || aptErr != nil {
		tb.Skip("promtool not found and cannot install it (needs root and apt-get): install Debian's prometheus package (apt-get install prometheus) to run the alert rule tests")
	}
	installOnce.Do(func() {
		install := func() ([]byte, error) {
			cmd := exec.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends",
				"-o", "DPkg::Lock::Timeout=300", "prometheus")
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			return cmd.CombinedOutput()
		}
		if installOut, installErr = install(); installErr != nil {
			// Fresh images have no package lists yet.
			upd := exec.Command("apt-get", "update", "-qq", "-o", "DPkg::Lock::Timeout=300")
			if out, err := upd.CombinedOutput(); err != nil {
				installOut, installErr = out, err
				return
			}
			installOut, installErr = install()
		}
	})
	if installErr != nil {
		tb.Fatalf("installing promtool (apt-get install prometheus): %v\n%s", installErr, installOut)
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		tb.Fatalf("apt-get installed prometheus but promtool is not on PATH: %v", err)
	}
	return p
}

// RunPromtool runs promtool with args in dir and fails the test, with promtool's output, when
// promtool fails or reports FAILED. It returns the combined output.
func RunPromtool(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(Promtool(tb), args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil || strings.Contains(out.String(), "FAILED") {
		tb.Fatalf("promtool %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// Root is the repository root, found from this source file.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Path joins a repository-relative path to the root.
func Path(rel string) string { return filepath.Join(Root(), filepath.FromSlash(rel)) }

// RuleFile is the part of a Prometheus rule file the tests look at.
type RuleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []Rule `json:"rules"`
	} `json:"groups"`
}

// Rule is one alerting or recording rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// Alerts returns the alerting rules by name (a name may have several rules).
func (f RuleFile) Alerts() map[string][]Rule {
	out := map[string][]Rule{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = append(out[r.Alert], r)
			}
		}
	}
	return out
}

// ReadRuleFile parses a Prometheus rule file strictly.
func ReadRuleFile(tb testing.TB, data []byte) RuleFile {
	tb.Helper()
	var f RuleFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		tb.Fatalf("parsing rule file: %v", err)
	}
	return f
}
