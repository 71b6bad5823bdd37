package envtest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/test/support/fixturehost"
	"github.com/prism-storage/prism/test/support/testenv"
)

// Issue 29 case 2 through the real agent publisher and the real policy controller: a node
// where two QLC drives report one serial (a cloned serial) gets one /dev/disk/by-id name for
// both from its udev records. The policy takes no device on it and says why in its status;
// before, it planned both drives under the one name.
func TestAmbiguousNodeTakesNoDevice(t *testing.T) {
	ctx := context.Background()
	label := unique("ambiguous")
	repo := testenv.RepoRoot()
	f, err := fixturehost.Load(filepath.Join(repo, fixturehost.NodesDir, "optane-qlc-b.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.Devices[3].Serial = f.Devices[2].Serial // nvme3n1 a clone of nvme2n1
	root := filepath.Join(t.TempDir(), f.Name)
	if err := fixturehost.Build(f, root, filepath.Join(repo, fixturehost.IdentifyDir)); err != nil {
		t.Fatal(err)
	}
	n := &simNode{name: unique(f.Name), fixture: f, root: root}
	labels := map[string]string{"prism-test": label}
	for k, v := range f.Labels {
		labels[k] = v
	}
	if err := env.Client.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	publishAll(t, map[string]*simNode{f.Name: n})

	policy := newPolicy(label, prismv1.ModeApply)
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := reconcile(t, policy.Name)
	sel := selectionOf(p, n.name)
	if sel == nil {
		t.Fatalf("no selection for %s: %+v", n.name, p.Status)
	}
	if len(sel.Fast)+len(sel.Capacity) != 0 {
		t.Fatalf("an ambiguous node got fast %q capacity %q", names(sel.Fast), names(sel.Capacity))
	}
	if len(sel.Warnings) == 0 || !strings.Contains(sel.Warnings[0], "names 2 devices (/dev/nvme2n1") || !strings.Contains(sel.Warnings[0], "/dev/nvme3n1") {
		t.Errorf("warnings %q do not name the two devices", sel.Warnings)
	}
	for _, r := range sel.Rejected {
		if !strings.Contains(r.Reason, "inventory is ambiguous") {
			t.Errorf("%s rejected for %q", r.Name, r.Reason)
		}
	}
}
