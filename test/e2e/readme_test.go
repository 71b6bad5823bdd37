package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// kubectlPlugin runs `kubectl prism ARGS... --kubeconfig K` as README's install section has a
// user run it: kubectl finds kubectl-prism on PATH (its directory first here) and execs it.
func kubectlPlugin(args ...string) (string, error) {
	// Each request bounded (the plugin, as kubectl, sets no limit of its own).
	argv := append(append([]string{"prism"}, args...), "--kubeconfig", cfg.kubeconfig, "--request-timeout", "2m")
	out, err := kubectl([]string{"PATH=" + filepath.Dir(cfg.kubectlPrism) + string(os.PathListSeparator) + os.Getenv("PATH")}, argv...)
	GinkgoWriter.Printf("$ kubectl %s\n%s", strings.Join(argv, " "), out)
	if err != nil {
		return "", fmt.Errorf("kubectl prism %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// row is the first line of a table whose whitespace-separated fields start with prefix's,
// its fields joined by one space ("" when none does).
func row(table string, prefix ...string) string {
	want := strings.Join(prefix, " ") + " "
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Join(strings.Fields(l), " ") + " "; strings.HasPrefix(f, want) {
			return strings.TrimSpace(f)
		}
	}
	return ""
}

// kubectlApplyDryRun has the API server validate a manifest (OpenAPI, CEL, defaults) and
// store nothing.
func kubectlApplyDryRun(file string) (string, error) {
	out, err := kubectl(nil, "--kubeconfig", cfg.kubeconfig, "apply", "--dry-run=server", "-f", file)
	GinkgoWriter.Printf("$ kubectl apply --dry-run=server -f %s\n%s", file, out)
	return string(out), err
}
