package decide

import (
	"slices"
	"strings"
	"testing"
)

// TestPolicyLeavesAnAgentOutsideTheSkewAlone: an agent two minor releases older than the
// operator gets no claim and no new plan (its node's hot-added drive waits), its Rook entries
// stay and the outcome says why; one minor older is planned as before; other nodes go on.
func TestPolicyLeavesAnAgentOutsideTheSkewAlone(t *testing.T) {
	for _, tc := range []struct {
		agent   string
		planned bool
	}{
		{"v0.1.4", false},
		{"v0.2.0", true},
		{"1f2e3d4", true}, // a development build: not checked
	} {
		t.Run(tc.agent, func(t *testing.T) {
			obs, before := appliedTwoNodes(t)
			obs.OperatorVersion = "v0.3.1"
			a := obs.StorageNodes[0]
			a.Status.AgentVersion = tc.agent
			obs.StorageNodes[1].Status.AgentVersion = "v0.3.1"
			// A drive is hot-added to a, so the planner has a new plan for it.
			hot := storageNode("a").Status.Devices[2]
			hot.Name, hot.StablePath = "nvme3n1", "/dev/disk/by-id/nvme-a_3"
			a.Status.Devices = append(a.Status.Devices, hot)
			c := storageNode("c")
			c.Status.AgentVersion = tc.agent
			obs.StorageNodes = append(obs.StorageNodes, c)
			obs.Nodes = append(obs.Nodes, Node{Name: "c", Labels: storage})

			d := Policy(obs)
			if d.RookErr != nil {
				t.Fatal(d.RookErr)
			}
			claims := claimNames(d.Claims)
			if got := slices.Contains(claims, "a"); got != tc.planned {
				t.Fatalf("claims %v: a re-planned %v, want %v", claims, got, tc.planned)
			}
			if got := slices.Contains(claims, "c"); got != tc.planned {
				t.Fatalf("claims %v: c claimed %v, want %v", claims, got, tc.planned)
			}
			if tc.planned {
				return
			}
			if !slices.Contains(d.Rook.Kept, "a") || slices.Contains(d.Rook.Drop, "a") || !strings.Contains(d.Rook.Unobserved["a"], "more than one minor release older") {
				t.Fatalf("kept %v, drop %v, unobserved %v", d.Rook.Kept, d.Rook.Drop, d.Rook.Unobserved)
			}
			if got, want := jsonOf(t, d.Rook.Nodes), jsonOf(t, before); got != want {
				t.Errorf("storage.nodes changed:\n%s\nwas\n%s", got, want)
			}
			if !strings.Contains(d.Rook.Outcome.Message, "its agent is v0.1.4") {
				t.Errorf("outcome %q does not say why a waits", d.Rook.Outcome.Message)
			}
			if len(d.Releases) != 0 {
				t.Errorf("releases %v", d.Releases)
			}
		})
	}
}
