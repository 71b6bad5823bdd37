package upgrade

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestUpgradeAndRollback runs the previous release's operator and agents (built from
// previousRelease) against a real API server with that release's CRDs, then does what
// `helm upgrade` does, in its order (the CRDs in place, the agents roll one node at a time
// while the operator is replaced), then what `helm rollback` does; after each step the
// stored objects read and reconcile under the binaries running, and nothing that was
// planned, claimed or given to Rook changes (docs/upgrade.md).
func TestUpgradeAndRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release (cached) and runs five binaries: not in -short")
	}
	t0 := time.Now()
	old := previous(t)
	neu := current(t, newVersion)
	t.Logf("binaries ready in %s", time.Since(t0).Round(time.Second))

	// The previous release, as installed: its CRDs, operator and agents.
	c := startCluster(t, old.crds)
	op := c.operator(old, "operator-"+oldVersion)
	agents := map[string]*proc{}
	for _, n := range nodeNames {
		agents[n] = c.agent(old, "agent-"+oldVersion+"-"+n, n)
	}
	for _, n := range nodeNames {
		c.waitForAgent(n, oldVersion)
	}
	c.createPolicy()
	c.waitFor(time.Minute, "the old operator to plan both nodes", func() (bool, string) {
		s := c.observe()
		for _, n := range nodeNames {
			if s.plans[n] == nil || s.claims[n] != policyName {
				return false, fmt.Sprintf("node %s: claim %q, plan %v", n, s.claims[n], s.plans[n] != nil)
			}
		}
		return true, ""
	})
	for _, n := range nodeNames {
		c.markProvisioned(n)
	}
	c.waitFor(time.Minute, "the old operator to give Rook both nodes", func() (bool, string) {
		s := c.observe()
		return s.entries[nodeNames[0]] != nil && s.entries[nodeNames[1]] != nil &&
			strings.HasPrefix(s.conditions["RookConfigured"], "True"), fmt.Sprintf("entries %v, conditions %v", keys(s.entries), s.conditions)
	})
	installed := c.observe()
	t.Logf("%s installed at %s: conditions %v", oldVersion, time.Since(t0).Round(time.Second), installed.conditions)

	// helm upgrade, step 1: the chart's CRDs are applied in place. The new spec field is
	// served (a server-side dry run keeps it) while the old operator still runs.
	c.applyCRDs(neu.crds)
	c.waitFor(30*time.Second, "the new CRDs to be served", func() (bool, string) {
		u := c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`, client.DryRunAll)
		v, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "osd", "ignoreHealthChecks")
		return len(v) == 1, fmt.Sprintf("a dry run of spec.osd.ignoreHealthChecks kept %v", v)
	})
	installed.same(t, "new CRDs, old binaries", c.observe())

	// Step 2: the DaemonSet replaces node a's agent first: a new agent against the old
	// operator's plan.
	a, b := nodeNames[0], nodeNames[1]
	agents[a].stop(t)
	agents[a] = c.agent(neu, "agent-"+newVersion+"-"+a, a)
	c.waitForAgent(a, newVersion)
	time.Sleep(2 * time.Second) // the old operator's reaction to the new agent's status, if any
	installed.same(t, "a new agent beside the old operator", c.observe())

	// Step 3: the operator's Deployment is replaced; node b still runs the old agent. A user
	// sets the new field: the new operator reconciles the stored objects of the old release.
	op.stop(t)
	op = c.operator(neu, "operator-"+newVersion)
	u := c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`)
	c.settled(u.GetGeneration())
	installed.same(t, "the new operator, an old agent on node b", c.observe())

	// The skew window (docs/version-skew.md): an operator two minor releases ahead of node b's
	// agent (this tree built as v0.3.0) leaves node b as it is and says why in RookConfigured;
	// node a's agent (v0.2.0) is within one minor and keeps its plan too.
	op.stop(t)
	op = start(t, c.kubeconfig, "operator-"+skewedVersion, currentOperator(t, skewedVersion), operatorArgs...)
	u = c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL","OSD_SLOW_PING_TIME_BACK"]}}}`)
	c.settled(u.GetGeneration())
	skewed := c.observe()
	skewed.conditions, skewed.rookMessage = installed.conditions, installed.rookMessage
	installed.same(t, "an operator two minors ahead of node b's agent", skewed)
	if want := "its agent is " + oldVersion + ", more than one minor release older than this operator (" + skewedVersion + ")"; !strings.Contains(c.observe().rookMessage, want) {
		t.Errorf("RookConfigured says %q, not %q", c.observe().rookMessage, want)
	}
	op.stop(t)
	op = c.operator(neu, "operator-"+newVersion+"-again")
	u = c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`)
	c.settled(u.GetGeneration())
	installed.same(t, "the new operator again", c.observe())

	// Step 4: node b's agent is replaced. The upgrade is done.
	agents[b].stop(t)
	agents[b] = c.agent(neu, "agent-"+newVersion+"-"+b, b)
	c.waitForAgent(b, newVersion)
	time.Sleep(2 * time.Second)
	installed.same(t, "upgraded", c.observe())
	t.Logf("%s upgraded at %s", newVersion, time.Since(t0).Round(time.Second))

	// helm rollback: the old chart's CRDs in place, the old operator, the old agents.
	op.stop(t)
	c.applyCRDs(old.crds)
	c.waitFor(30*time.Second, "the old CRDs to be served", func() (bool, string) {
		u := c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`, client.DryRunAll)
		_, found, _ := unstructured.NestedStringSlice(u.Object, "spec", "osd", "ignoreHealthChecks")
		return !found, "a dry run of spec.osd.ignoreHealthChecks kept it"
	})
	stored := c.get(policyGVK, "", policyName)
	v, found, _ := unstructured.NestedStringSlice(stored.Object, "spec", "osd", "ignoreHealthChecks")
	t.Logf("rolled-back CRDs: the stored policy reads spec.osd.ignoreHealthChecks = %v (present: %t)", v, found)
	op = c.operator(old, "operator-"+oldVersion+"-rolled-back")
	for _, n := range nodeNames {
		agents[n].stop(t)
		agents[n] = c.agent(old, "agent-"+oldVersion+"-rolled-back-"+n, n)
		c.waitForAgent(n, oldVersion)
	}
	// A spec edit both releases know (one more label every node has): the old operator
	// reconciles the objects the new release wrote.
	u = c.patchPolicy(`{"spec":{"nodeSelector":{"matchLabels":{"` + testLabel + `/rolled-back":"yes"}}}}`)
	c.settled(u.GetGeneration())
	installed.same(t, "rolled back", c.observe())
	t.Logf("%s rolled back at %s", oldVersion, time.Since(t0).Round(time.Second))

	// The API server prunes what the rolled-back schema does not know when it reads an object
	// from etcd, so the first write under it (the edit above, the operator's status) stores the
	// object without it: upgrading the CRDs again does not bring the field back.
	c.applyCRDs(neu.crds)
	c.waitFor(30*time.Second, "the new CRDs to be served again", func() (bool, string) {
		u := c.patchPolicy(`{"spec":{"osd":{"ignoreHealthChecks":["OSD_NEARFULL"]}}}`, client.DryRunAll)
		v, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "osd", "ignoreHealthChecks")
		return len(v) == 1, fmt.Sprintf("a dry run of spec.osd.ignoreHealthChecks kept %v", v)
	})
	stored = c.get(policyGVK, "", policyName)
	if v, found, _ := unstructured.NestedStringSlice(stored.Object, "spec", "osd", "ignoreHealthChecks"); found {
		t.Errorf("after a rollback that wrote the policy and a new upgrade, spec.osd.ignoreHealthChecks reads %v: docs/upgrade.md says it is lost", v)
	}
	for _, p := range []*proc{op, agents[a], agents[b]} {
		if p.exited() {
			t.Errorf("%s exited", p.name)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
