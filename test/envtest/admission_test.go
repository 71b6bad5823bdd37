package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// TestAgentCreatesItsStorageNodeOnlyWithAnEmptySpec: the admission policy lets the agent
// create its own StorageNode with an empty spec, and answers every other write with its own
// 403: a spec the agent chose, a token without the node claim, another node's object.
func TestAgentCreatesItsStorageNodeOnlyWithAnEmptySpec(t *testing.T) {
	ctx := context.Background()
	installAgentAccess(t)
	own, other := unique("admission-own"), unique("admission-other")
	agent := agentClient(t, own)
	withSpec := func(name string) *prismv1.StorageNode {
		return &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: prismv1.StorageNodeSpec{
			PolicyName: "someone-else", Mode: prismv1.ModeApply,
			Plan: &prismv1.NodePlan{AllowWipe: []string{"/dev/disk/by-id/nvme-a"}},
		}}
	}

	// The policy compiles asynchronously after it is created: wait until it is enforced.
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if err = agent.Create(ctx, withSpec(own)); err != nil {
			break
		}
		_ = env.Client.Delete(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: own}})
	}
	wantDenied(t, "own node with a spec", err, "may create its StorageNode only with an empty spec")

	// Each spec valid by the CRD's own rules (a plan needs a policy name and mode), so that
	// the denial is the admission policy's.
	for _, spec := range []prismv1.StorageNodeSpec{{PolicyName: "p"}, {Mode: prismv1.ModeDryRun}, {PolicyName: "p", Mode: prismv1.ModeDryRun, Plan: &prismv1.NodePlan{}}} {
		err := agent.Create(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: own}, Spec: spec})
		wantDenied(t, "own node with spec "+toString(spec), err, "may create its StorageNode only with an empty spec")
	}

	if err := agent.Create(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: own}}); err != nil {
		t.Fatalf("the agent creating its own StorageNode with an empty spec: %v", err)
	}

	noClaim := rest.CopyConfig(agentConfig(own))
	noClaim.Impersonate.Extra = nil
	c, err := client.New(noClaim, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Create(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: other}})
	wantDenied(t, "token without extra", err, "the token is for node (none: the token carries no node claim), the object is "+other)

	err = agent.Create(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: other}})
	wantDenied(t, "another node's object", err, "may write only its own node's StorageNode: the token is for node "+own+", the object is "+other)

	// Another node's status, as its owner created it.
	if err := env.Client.Create(ctx, &prismv1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: other}}); err != nil {
		t.Fatal(err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: other}, sn); err != nil {
		t.Fatal(err)
	}
	sn.Status.AgentVersion = "impostor"
	err = agent.Status().Update(ctx, sn)
	wantDenied(t, "another node's status", err, "the token is for node "+own+", the object is "+other)
}

// wantDenied requires Prism's own 403 (not a 422 evaluation error) with msg in its message.
func wantDenied(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: allowed, want denied", what)
		return
	}
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: got %v (status %d), want 403 with %q", what, err, statusCode(err), msg)
	}
}

func statusCode(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return 0
}

func toString(spec prismv1.StorageNodeSpec) string {
	switch {
	case spec.PolicyName != "":
		return "policyName"
	case spec.Mode != "":
		return "mode"
	default:
		return "plan"
	}
}
