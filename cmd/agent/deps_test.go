package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The agent talks to Kubernetes through internal/node/agentclient only: controller-runtime's client,
// client-go's full scheme and discovery, and the built-in API types cost it most of its
// resident memory (docs/decisions/0014-agent-narrow-client.md). A new import of any of them
// would bring them back without a failing build, so this test lists what the binary links.
func TestAgentLinksOnlyItsNarrowClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/prism-storage/prism/internal/node/agentclient"] || !deps["k8s.io/client-go/rest"] {
		t.Fatalf("the agent does not link internal/node/agentclient and client-go's rest: is this list the agent's?")
	}
	for _, p := range []string{
		"sigs.k8s.io/controller-runtime/pkg/client",
		"k8s.io/client-go/kubernetes/scheme",
		"k8s.io/client-go/discovery",
		"k8s.io/api/core/v1",
		"k8s.io/api/storage/v1",
	} {
		if deps[p] {
			t.Errorf("prism-agent links %s", p)
		}
	}
}
