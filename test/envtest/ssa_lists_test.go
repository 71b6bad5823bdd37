package envtest

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// ssaApply server-side applies kind's spec (or status) as manager, with or without force.
func ssaApply(kind, name, manager string, body map[string]any, status, force bool) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": prismv1.GroupVersion.String(), "kind": kind, "metadata": map[string]any{"name": name},
	}}
	for k, v := range body {
		u.Object[k] = v
	}
	if status {
		opts := []client.SubResourcePatchOption{client.FieldOwner(manager)}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		return env.Client.Status().Patch(context.Background(), u, client.Apply, opts...)
	}
	opts := []client.PatchOption{client.FieldOwner(manager)}
	if force {
		opts = append(opts, client.ForceOwnership)
	}
	return env.Client.Patch(context.Background(), u, client.Apply, opts...)
}

func ioClass(id int, name string, pinned bool, conditions ...any) map[string]any {
	c := obj("id", id, "name", name, "allocation", "1")
	if pinned {
		c["pinned"] = true
	} else {
		c["evictionPriority"] = id
	}
	if id != 0 {
		c["allOf"] = list(obj("anyOf", list(conditions...)))
	}
	return c
}

// spec.classes is a map list keyed by id, so two teams (field managers) can each own their
// classes; inside a class, allOf and anyOf are atomic (a rule is one decision).
func TestServerSideApplyOfClassificationPolicyClasses(t *testing.T) {
	ctx := context.Background()
	name := unique("ssa-cpol")
	small := cond("RequestSize", "16384")
	teamA := func(classes ...any) error {
		return ssaApply("ClassificationPolicy", name, "team-a", obj("spec", obj("classes", list(classes...), "advisor", obj("apply", "Automatic"))), false, false)
	}
	teamB := func(classes ...any) error {
		return ssaApply("ClassificationPolicy", name, "team-b", obj("spec", obj("classes", list(classes...))), false, false)
	}
	get := func() prismv1.ClassificationPolicySpec {
		t.Helper()
		p := &prismv1.ClassificationPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			t.Fatal(err)
		}
		return p.Spec
	}
	ids := func(s prismv1.ClassificationPolicySpec) string {
		var out []string
		for _, c := range s.Classes {
			out = append(out, c.Name)
		}
		return strings.Join(out, " ")
	}
	if err := teamA(ioClass(0, "unclassified", false), ioClass(1, "small", true, small)); err != nil {
		t.Fatal(err)
	}
	if err := teamB(ioClass(2, "logs", false, cond("Directory", "/var/log"))); err != nil {
		t.Fatalf("a second manager adding its own class: %v", err)
	}
	if got := ids(get()); got != "unclassified small logs" {
		t.Fatalf("after both teams applied: %s", got)
	}
	// Change one condition and swap pinned for an eviction priority: the condition list is
	// replaced, not merged, and the field left out is removed.
	if err := teamA(ioClass(0, "unclassified", false), ioClass(1, "small", false, cond("RequestSize", "8192"))); err != nil {
		t.Fatal(err)
	}
	c1 := get().Classes[1]
	if any := c1.AllOf[0].AnyOf; len(any) != 1 || any[0].Value != "8192" || c1.Pinned || c1.EvictionPriority == nil {
		t.Errorf("class 1 after the change: %+v", c1)
	}
	// Team B cannot take team A's class without force; team A leaving class 1 out removes only it.
	if err := teamB(ioClass(1, "small", true, small), ioClass(2, "logs", false, cond("Directory", "/var/log"))); !apierrors.IsConflict(err) {
		t.Errorf("team B applying team A's class: %v, want a conflict", err)
	}
	if err := teamA(ioClass(0, "unclassified", false)); err != nil {
		t.Fatal(err)
	}
	if got := ids(get()); got != "unclassified logs" {
		t.Errorf("after team A dropped its class 1: %s, want team B's class kept", got)
	}
	// Team B applying no classes removes its own; advisor: {} falls back to the default.
	if err := teamB(); err != nil {
		t.Fatal(err)
	}
	if got := ids(get()); got != "unclassified" {
		t.Errorf("after team B applied no classes: %s", got)
	}
	if err := ssaApply("ClassificationPolicy", name, "team-a", obj("spec", obj("classes", list(ioClass(0, "unclassified", false)), "advisor", obj())), false, false); err != nil {
		t.Fatal(err)
	}
	if a := get().Advisor; a == nil || a.Apply != prismv1.AdvisorApplyNever {
		t.Errorf("advisor after applying {}: %+v, want apply Never", a)
	}
}

// A StorageNode's plan is one decision of the operator: atomic, so a second writer cannot
// merge part of a plan into it (it gets a conflict), and an apply replaces the whole plan.
// Status lists are atomic too (decision 0015): the agent owns each whole.
func TestServerSideApplyOfStorageNodePlanAndStatus(t *testing.T) {
	ctx := context.Background()
	name := unique("ssa-sn")
	base := func() map[string]any { return parse(t, validPlan, nil).Object["spec"].(map[string]any) }
	apply := func(manager string, spec map[string]any, force bool) error {
		return ssaApply("StorageNode", name, manager, obj("spec", spec), false, force)
	}
	get := func() *prismv1.StorageNode {
		t.Helper()
		sn := &prismv1.StorageNode{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, sn); err != nil {
			t.Fatal(err)
		}
		return sn
	}
	spec := base()
	spec["plan"].(map[string]any)["allowWipe"] = list(qlc1, qlc2)
	if err := apply("operator", spec, false); err != nil {
		t.Fatal(err)
	}
	// Change one element of the set, then empty it, then leave it out.
	spec["plan"].(map[string]any)["allowWipe"] = list(qlc1, fast1)
	if err := apply("operator", spec, false); err != nil {
		t.Fatal(err)
	}
	if w := get().Spec.Plan.AllowWipe; strings.Join(w, " ") != qlc1+" "+fast1 {
		t.Errorf("allowWipe after changing one element: %v", w)
	}
	spec["plan"].(map[string]any)["allowWipe"] = list()
	if err := apply("operator", spec, false); err != nil {
		t.Fatal(err)
	}
	if w := get().Spec.Plan.AllowWipe; len(w) != 0 {
		t.Errorf("allowWipe after applying []: %v", w)
	}
	// A slot's data device removed: the fast device list is replaced whole.
	spec = base()
	delete(fastDevice(obj("spec", spec))["slots"].([]any)[0].(map[string]any), "dataDevice")
	if err := apply("operator", spec, false); err != nil {
		t.Fatal(err)
	}
	if d := get().Spec.Plan.FastDevices[0].Slots[0].DataDevice; d != "" {
		t.Errorf("slot 0 still has data device %s after an apply without it", d)
	}
	// A second manager's partial plan conflicts; forced, it replaces the whole plan.
	partial := obj("policyName", "p", "mode", "Apply", "plan", obj("allowWipe", list(qlc2)))
	if err := apply("someone-else", partial, false); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".spec.plan") {
		t.Errorf("a second manager's partial plan: %v, want a conflict on .spec.plan", err)
	}
	if err := apply("someone-else", partial, true); err != nil {
		t.Fatal(err)
	}
	if p := get().Spec.Plan; len(p.FastDevices) != 0 || strings.Join(p.AllowWipe, " ") != qlc2 {
		t.Errorf("a forced partial plan was merged into the old one: %+v", p)
	}

	// Status: the agent's device list is one unit; another manager conflicts on it.
	dev := func(n string) map[string]any {
		return obj("name", n, "path", "/dev/"+n, "sizeBytes", 1<<30, "tier", "Fast", "tierReason", "test", "eligibility", obj("eligible", true))
	}
	if err := ssaApply("StorageNode", name, "agent", obj("status", obj("devices", list(dev("nvme0n1"), dev("nvme1n1")))), true, false); err != nil {
		t.Fatal(err)
	}
	err := ssaApply("StorageNode", name, "someone-else", obj("status", obj("devices", list(dev("nvme2n1")))), true, false)
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".status.devices") {
		t.Errorf("a second manager's device: %v, want a conflict on .status.devices", err)
	}
	if err := ssaApply("StorageNode", name, "agent", obj("status", obj("devices", list(dev("nvme1n1")))), true, false); err != nil {
		t.Fatal(err)
	}
	if d := get().Status.Devices; len(d) != 1 || d[0].Name != "nvme1n1" {
		t.Errorf("devices after the agent applied one: %+v", d)
	}
}
