package envtest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prism-storage/prism/internal/host/nvme"
	"github.com/prism-storage/prism/internal/host/sysfs"
	"github.com/prism-storage/prism/internal/node/agent"
	"github.com/prism-storage/prism/internal/node/agentclient"
	"github.com/prism-storage/prism/internal/node/inventory"
	"github.com/prism-storage/prism/test/support/fixturehost"
	"github.com/prism-storage/prism/test/support/testenv"
)

// simNode is a simulated node: a Node object with a unique name and a fixture host root.
type simNode struct {
	name    string // Kubernetes node name (unique per test)
	fixture fixturehost.Node
	root    string
}

// startNodes builds the fixture nodes' host roots, creates their Node objects with a unique
// name and a per-test label (so each test's selector sees only its own nodes).
func startNodes(t *testing.T, c client.Client, testLabel string) map[string]*simNode {
	t.Helper()
	repo := testenv.RepoRoot()
	fixtures, err := fixturehost.LoadAll(filepath.Join(repo, fixturehost.NodesDir))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]*simNode{}
	for _, f := range fixtures {
		root := filepath.Join(t.TempDir(), f.Name)
		if err := fixturehost.Build(f, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
			t.Fatal(err)
		}
		n := &simNode{name: unique(f.Name), fixture: f, root: root}
		labels := map[string]string{"prism-test": testLabel}
		for k, v := range f.Labels {
			labels[k] = v
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels}}
		if err := c.Create(context.Background(), node); err != nil {
			t.Fatal(err)
		}
		nodes[f.Name] = n
	}
	return nodes
}

// agentAPI is the agent's own Kubernetes client (what prism-agent run builds) for cfg.
func agentAPI(t *testing.T, cfg *rest.Config) agent.API {
	t.Helper()
	c, err := agentclient.New(cfg, agent.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// publisher is the real agent publisher for a simulated node.
func (n *simNode) publisher(c agent.API) *agent.Publisher {
	opts := inventory.Options{
		Host:       sysfs.Host{Root: n.root},
		Identifier: nvme.RecordedIdentifier{Dir: filepath.Join(n.root, "identify")},
	}
	return &agent.Publisher{
		Client:   c,
		NodeName: n.name,
		Inventory: func(ctx context.Context) (inventory.Report, error) {
			return inventory.Take(ctx, opts)
		},
		Version: "test", Period: time.Hour, Heartbeat: time.Hour,
	}
}

// pairable counts the nodes whose fixture expects at least one eligible Fast and one
// eligible Capacity drive: the nodes a default policy can make ready.
func pairable(nodes map[string]*simNode) int32 {
	var n int32
	for _, sn := range nodes {
		var fast, capacity bool
		for _, d := range sn.fixture.Devices {
			eligible := len(d.Expect.Ineligible) == 0
			fast = fast || (eligible && d.Expect.Tier == "Fast")
			capacity = capacity || (eligible && d.Expect.Tier == "Capacity")
		}
		if fast && capacity {
			n++
		}
	}
	return n
}

func publishAll(t *testing.T, nodes map[string]*simNode) {
	t.Helper()
	for _, n := range nodes {
		if err := n.publisher(agentAPI(t, env.Config)).Sync(context.Background()); err != nil {
			t.Fatalf("agent for %s: %v", n.name, err)
		}
	}
}
