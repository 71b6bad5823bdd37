package decide

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

// recordedChain holds objects the e2e suite read from the real chain's API server
// (testdata/chain-2026-11-26/README.md).
const recordedChain = "testdata/chain-2026-11-26"

// recorded is one stage of the run: the policy, the node's StorageNode and Node, and the
// CephCluster as Rook v1.20.2's operator had it.
type recorded struct {
	policy  *prismv1.HybridStoragePolicy
	sn      *prismv1.StorageNode
	cluster *unstructured.Unstructured
	node    *corev1.Node
}

func loadStage(t *testing.T, stage string) recorded {
	t.Helper()
	read := func(name string, v any) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(recordedChain, stage, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s/%s: %v", stage, name, err)
		}
	}
	r := recorded{policy: &prismv1.HybridStoragePolicy{}, sn: &prismv1.StorageNode{}, cluster: &unstructured.Unstructured{Object: map[string]any{}}, node: &corev1.Node{}}
	read("hybridstoragepolicy.json", r.policy)
	read("storagenode.json", r.sn)
	read("cephcluster.json", &r.cluster.Object)
	read("node.json", r.node)
	return r
}

func (r recorded) observation() Observation {
	return Observation{Policy: r.policy, Nodes: []Node{{Name: r.node.Name, Labels: r.node.Labels}},
		StorageNodes: []*prismv1.StorageNode{r.sn}, Cluster: r.cluster, Now: r.sn.CreationTimestamp.Time}
}

// TestRecordedChain replays the operator's whole decision on the objects of the real chain at
// two moments (Rook v1.20.2's operator, Ceph 20.2.4, the agent's DB volumes Ready): when its
// entry was written, and after a second QLC drive was hot-added and Rook made its OSD. From
// the recorded inventory the planner gives the plan the agent carried out, nothing is claimed
// or released, and the entries it wants are exactly those the CephCluster held, so the
// operator has nothing left to change. The offline preview (kubectl prism plan) from the
// inventory alone predicts the same entries.
func TestRecordedChain(t *testing.T) {
	for _, stage := range []string{"entry-written", "hot-added"} {
		t.Run(stage, func(t *testing.T) { replayStage(t, loadStage(t, stage)) })
	}
}

func replayStage(t *testing.T, r recorded) {
	want, _, _ := unstructured.NestedSlice(r.cluster.Object, "spec", "storage", "nodes")
	if len(want) != 1 {
		t.Fatalf("the recorded CephCluster has %d storage.nodes entries, want Prism's one", len(want))
	}

	t.Run("operator", func(t *testing.T) {
		d := Policy(r.observation())
		if d.InvalidSelector != "" || len(d.Plan.Problems) > 0 || d.RookErr != nil {
			t.Fatalf("selector %q, plan problems %v, rook %v", d.InvalidSelector, d.Plan.Problems, d.RookErr)
		}
		p, ok := d.Plan.Plans()[r.sn.Name]
		if !ok || r.sn.Spec.Plan == nil || !equality.Semantic.DeepEqual(p, *r.sn.Spec.Plan) {
			t.Fatalf("the planner, on the recorded inventory, gives\n%+v\nthe agent carried out\n%+v", p, r.sn.Spec.Plan)
		}
		if len(d.Claims) > 0 || len(d.Releases) > 0 {
			t.Errorf("claims %v, releases %v on a node already claimed", claimNames(d.Claims), d.Releases)
		}
		rd := d.Rook
		if !rd.Outcome.OK || rd.Outcome.Reason != rook.ReasonApplied || len(rd.Waiting) > 0 || rd.Changed {
			t.Errorf("outcome %+v, waiting %v, changed %t (%s)", rd.Outcome, rd.Waiting, rd.Changed, rd.Event)
		}
		if got := jsonOf(t, rd.Nodes); got != jsonOf(t, want) {
			t.Errorf("storage.nodes: the decision gives\n%s\nthe CephCluster held\n%s", got, jsonOf(t, want))
		}
	})

	t.Run("offline preview before the agent reported", func(t *testing.T) {
		// The plan in force and the inventory, no partitions or volumes reported yet: what
		// kubectl prism plan shows from the agent's inventory and the previous plan.
		fresh := &prismv1.StorageNode{Spec: r.sn.Spec}
		fresh.Name = r.sn.Name
		fresh.Status.Devices = r.sn.Status.Devices
		cluster := r.cluster.DeepCopy()
		unstructured.RemoveNestedField(cluster.Object, "spec", "storage", "nodes")
		cluster.SetAnnotations(nil)
		obs := r.observation()
		obs.StorageNodes, obs.Cluster, obs.AssumeProvisioned = []*prismv1.StorageNode{fresh}, cluster, true
		d := Policy(obs)
		if d.RookErr != nil || len(d.Plan.Problems) > 0 {
			t.Fatalf("plan problems %v, rook %v", d.Plan.Problems, d.RookErr)
		}
		if got := jsonOf(t, d.Rook.Nodes); got != jsonOf(t, want) {
			t.Errorf("the preview gives\n%s\n(%s)\nthe real chain wrote\n%s", got, d.Rook.Outcome.Message, jsonOf(t, want))
		}
	})
}
