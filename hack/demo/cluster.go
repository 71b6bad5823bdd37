package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/prism-storage/prism/test/support/testenv"
)

// prometheusConfig writes a scrape configuration for the agents, job prism-agent.
func prometheusConfig(dir string, agents map[string]string, interval time.Duration) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "global: {scrape_interval: %s, scrape_timeout: %s, evaluation_interval: %s}\nscrape_configs:\n- job_name: prism-agent\n  static_configs:\n",
		interval, interval, interval)
	for node, addr := range agents {
		fmt.Fprintf(&b, "  - targets: [%q]\n    labels: {instance_node: %q}\n", addr, node)
	}
	path := filepath.Join(dir, "prometheus.yml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// createPageReader makes the ServiceAccount default/prism-endurance-reader, allowed what the
// endurance page asks of its readers (get storagenodes, decision 0049), as the chart does.
func createPageReader(ctx context.Context, c client.Client) error {
	for _, o := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prism-endurance-reader", Namespace: "default"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "prism-endurance-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"prism.storage.io"}, Resources: []string{"storagenodes"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prism-endurance-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "prism-endurance-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prism-endurance-reader", Namespace: "default"}}},
	} {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// createCephCluster is the Rook CephCluster the sample policy targets (Rook's real CRD is
// installed; no Rook operator runs, so no OSD is created).
func createCephCluster(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph"}}); err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`{apiVersion: ceph.rook.io/v1, kind: CephCluster, metadata: {name: rook-ceph, namespace: rook-ceph},
	  spec: {cephVersion: {image: "quay.io/ceph/ceph:v19.2.3"}, dataDirHostPath: /var/lib/rook, mon: {count: 3},
	    storage: {useAllNodes: false, useAllDevices: false}}}`), &u.Object); err != nil {
		return err
	}
	return c.Create(ctx, u)
}

// applySample creates the object of config/samples/<file> and returns its name.
func applySample(ctx context.Context, c client.Client, file string) (string, error) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", file))
	if err != nil {
		return "", err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		return "", fmt.Errorf("config/samples/%s: %w", file, err)
	}
	if err := c.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("applying config/samples/%s: %w", file, err)
	}
	return obj.GetName(), nil
}

// start runs a binary against the demo's control plane, logging to DIR/NAME.log; env is
// added to the demo's environment (later entries win).
func start(ctx context.Context, dir, kubeconfig, name, path string, env []string, args ...string) (*exec.Cmd, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	if kubeconfig != "" {
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kubeconfig)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// On Ctrl-C the processes get SIGTERM, as the kubelet would send, not SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w (run make build)", path, err)
	}
	return cmd, nil
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("timed out after %s", timeout)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
