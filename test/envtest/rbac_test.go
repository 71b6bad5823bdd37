package envtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/test/support/testenv"
)

const agentUser = "system:serviceaccount:prism-system:prism-agent"

// agentConfig acts as the agent's service account on the given node: the bound token's
// node claim reaches admission as this extra field.
func agentConfig(node string) *rest.Config {
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: agentUser,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:prism-system", "system:authenticated"},
		Extra:    map[string][]string{"authentication.kubernetes.io/node-name": {node}},
	}
	return cfg
}

// agentClient is a general client with the agent's identity, to try what the agent's own
// client cannot even ask for.
func agentClient(t *testing.T, node string) client.Client {
	t.Helper()
	c, err := client.New(agentConfig(node), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// installAgentAccess applies the agent's ClusterRole from config/rbac and the chart's
// admission policy, as a real install would.
func installAgentAccess(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	root := testenv.RepoRoot()
	role := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(root, "config/rbac/agent_role.yaml"), role)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prism-agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: agentUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "charts/prism/files/agent-admission.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rendered := strings.ReplaceAll(string(raw), "{{ .Release.Namespace }}", "prism-system")
	for _, doc := range strings.Split(rendered, "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestAgentMayWriteOnlyItsOwnStorageNode(t *testing.T) {
	ctx := context.Background()
	installAgentAccess(t)
	nodes := startNodes(t, env.Client, unique("rbac"))
	a, c := nodes["optane-qlc-a"], nodes["tlc-only-c"]

	// As node a's agent, publishing a's inventory works.
	if err := a.publisher(agentAPI(t, agentConfig(a.name))).Sync(ctx); err != nil {
		t.Fatalf("agent on %s could not publish its own node: %v", a.name, err)
	}

	// As node a's agent, creating or writing c's StorageNode is denied by the admission policy.
	// The policy compiles asynchronously after it is created, so allow it a few seconds.
	impostor := c.publisher(agentAPI(t, agentConfig(a.name)))
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = impostor.Sync(ctx); err != nil {
			break
		}
		// Not yet enforced: undo and retry.
		_ = env.Client.Delete(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: c.name}})
		time.Sleep(500 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "may write only its own node") || !strings.Contains(err.Error(), "the object is "+c.name) {
		t.Fatalf("writing another node's StorageNode: got %v", err)
	}

	// RBAC: the agent cannot touch policies, nor change a StorageNode's spec (the operator's plan).
	if err := agentClient(t, a.name).List(ctx, &prismv1.HybridStoragePolicyList{}); !apierrors.IsForbidden(err) {
		t.Errorf("agent listing policies: got %v, want forbidden", err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	sn.Spec.PolicyName = "hijack"
	if err := agentClient(t, a.name).Update(ctx, sn); !apierrors.IsForbidden(err) {
		t.Errorf("agent updating its StorageNode spec: got %v, want forbidden", err)
	}
}
