package agentclient

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// The patch carries only what changed in the status, and null for what the new status
// leaves out, so that the API server removes it (a plain status document would keep it).
func TestMergePatchRemovesWhatTheNewStatusLeavesOut(t *testing.T) {
	before := &prismv1.StorageNode{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", ResourceVersion: "7"},
		Status:     prismv1.StorageNodeStatus{AgentVersion: "v1", FastDevices: 1, CapacityDevices: 4},
	}
	after := before.DeepCopy()
	after.Status.AgentVersion = "v2"
	after.Status.FastDevices = 0
	got, err := mergePatch(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"status":{"agentVersion":"v2","fastDevices":null}}`; string(got) != want {
		t.Errorf("patch %s, want %s", got, want)
	}
	same, err := mergePatch(before, before.DeepCopy())
	if err != nil || string(same) != `{}` {
		t.Errorf("unchanged object: patch %s, %v", same, err)
	}
}
