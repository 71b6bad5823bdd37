// Package testenv starts a real kube-apiserver and etcd (envtest) with Prism's CRDs and
// Rook's real CRDs installed. The binaries come from hack/envtest-bins.sh, which builds
// them from the Go module proxy once and caches them outside the clone.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/prism-storage/prism/internal/kube"
)

// Env is a running control plane.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *runtime.Scheme
	env    *envtest.Environment
}

// RepoRoot is the directory holding go.mod, found from this source file.
func RepoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Assets returns the directory with kube-apiserver, etcd and rook-crds.yaml, building them when needed.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "envtest-bins.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building envtest binaries with hack/envtest-bins.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts etcd and kube-apiserver and installs the CRDs. Call Stop when done.
func Start() (*Env, error) {
	return StartWithCRDs(filepath.Join(RepoRoot(), "config", "crd", "bases"))
}

// StartWithCRDs is Start with Prism's CRDs read from prismCRDs, e.g. an earlier release's
// (test/upgrade); Rook's are the pinned ones either way.
func StartWithCRDs(prismCRDs string) (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{
			prismCRDs,
			filepath.Join(assets, "rook-crds.yaml"),
		},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		// envtest leaves etcd and kube-apiserver running when installing the CRDs fails
		// (an invalid CEL rule, say): stop them, or every failed run leaks two processes.
		_ = env.Stop()
		return nil, fmt.Errorf("starting envtest from %s: %w", assets, err)
	}
	scheme := kube.Scheme()
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: scheme, env: env}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// KubeConfig returns an admin kubeconfig for the control plane, for kubectl and the binaries
// the demo starts.
func (e *Env) KubeConfig() ([]byte, error) {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "prism-demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// AssetsDir is where the control-plane binaries came from (kubectl is there when built).
func (e *Env) AssetsDir() string { return e.env.BinaryAssetsDirectory }
