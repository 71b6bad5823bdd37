// Package helm renders charts/prism with the Helm v3 Go library (helm.sh/helm/v3, pinned in
// go.mod) and checks the result: lint, the values schema, the rendered objects, and a
// server-side dry run of every object against a real kube-apiserver (test/support/testenv) that
// also serves the Prometheus Operator's CRDs (PodMonitor, PrometheusRule) from the
// prometheus-operator module zip on the Go module proxy.
package helm

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/prism-storage/prism/test/support/testenv"
)

// promOperatorVersion pins github.com/prometheus-operator/prometheus-operator, whose module zip
// holds example/prometheus-operator-crd/*.yaml.
const promOperatorVersion = "v0.85.0"

var promOperatorCRDFiles = []string{
	"monitoring.coreos.com_podmonitors.yaml",
	"monitoring.coreos.com_prometheusrules.yaml",
}

var (
	env *testenv.Env
	// plainCaps are the capabilities of the API server before the Prometheus Operator's CRDs
	// are installed; liveCaps after (equal to plainCaps when they could not be obtained).
	plainCaps, liveCaps *chartutil.Capabilities
	// monitoringCRDs reports whether PodMonitor and PrometheusRule are served; when not,
	// monitoringSkip says why, and the tests render with monitoring disabled.
	monitoringCRDs bool
	monitoringSkip string
)

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := func() int {
		if plainCaps, err = capabilities(env.Config); err != nil {
			fmt.Fprintln(os.Stderr, "discovery:", err)
			return 1
		}
		liveCaps = plainCaps
		dir, err := promOperatorCRDs()
		if err == nil {
			_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
		}
		if err != nil {
			monitoringSkip = fmt.Sprintf("Prometheus Operator CRDs %s unavailable (%v): monitoring objects are rendered but not applied", promOperatorVersion, err)
			fmt.Fprintln(os.Stderr, "helm tests:", monitoringSkip)
		} else {
			monitoringCRDs = true
			if liveCaps, err = capabilities(env.Config); err != nil {
				fmt.Fprintln(os.Stderr, "discovery:", err)
				return 1
			}
		}
		return m.Run()
	}()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest stop:", err)
	}
	os.Exit(code)
}

// capabilities is what `helm install` learns from the cluster: the server version and every
// served group/version and group/version/Kind (as action.GetVersionSet does).
func capabilities(cfg *rest.Config) (*chartutil.Capabilities, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, err
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		return nil, err
	}
	var set chartutil.VersionSet
	for _, g := range groups {
		for _, gv := range g.Versions {
			set = append(set, gv.GroupVersion)
		}
	}
	for _, rl := range resources {
		for _, r := range rl.APIResources {
			set = append(set, rl.GroupVersion+"/"+r.Kind)
		}
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor}
	caps.APIVersions = set
	return caps, nil
}

// promOperatorCRDs extracts the PodMonitor and PrometheusRule CRDs from the pinned
// prometheus-operator module zip (go mod download: the Go module cache, then the proxy) into
// the Prism cache directory, like hack/envtest-bins.sh does for Rook's CRDs.
func promOperatorCRDs() (string, error) {
	cache := os.Getenv("PRISM_CACHE_DIR")
	if cache == "" {
		ucd, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(ucd, "prism")
	}
	dir := filepath.Join(cache, "prometheus-operator", promOperatorVersion)
	missing := false
	for _, f := range promOperatorCRDFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = true
		}
	}
	if !missing {
		return dir, nil
	}
	mod, err := os.MkdirTemp("", "prism-pocrds-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(mod)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module prism.local/pocrds\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	module := "github.com/prometheus-operator/prometheus-operator"
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+promOperatorVersion)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Zip, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Zip == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s", module, promOperatorVersion, err, info.Error)
	}
	zr, err := zip.OpenReader(info.Zip)
	if err != nil {
		return "", err
	}
	defer zr.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	prefix := module + "@" + promOperatorVersion + "/example/prometheus-operator-crd/"
	for _, want := range promOperatorCRDFiles {
		found := false
		for _, f := range zr.File {
			if f.Name != prefix+want {
				continue
			}
			found = true
			if err := extract(f, filepath.Join(dir, want)); err != nil {
				return "", err
			}
		}
		if !found {
			return "", errors.New(prefix + want + " is not in the module zip")
		}
	}
	return dir, nil
}

func extract(f *zip.File, to string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	tmp, err := os.CreateTemp(filepath.Dir(to), ".crd-")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), to)
}

// requireMonitoringCRDs skips a test that needs the API server to serve PodMonitor and
// PrometheusRule when their CRDs could not be obtained.
func requireMonitoringCRDs(t *testing.T) {
	t.Helper()
	if !monitoringCRDs {
		t.Skip(monitoringSkip)
	}
}
