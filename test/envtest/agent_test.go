package envtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

func TestAgentPublishesItsNodeInventory(t *testing.T) {
	ctx := context.Background()
	nodes := startNodes(t, env.Client, unique("agent"))
	a := nodes["optane-qlc-a"]
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, node); err != nil {
		t.Fatal(err)
	}
	if len(sn.OwnerReferences) != 1 || sn.OwnerReferences[0].UID != node.UID {
		t.Errorf("StorageNode is not owned by its Node: %+v", sn.OwnerReferences)
	}
	if got, want := len(sn.Status.Devices), len(a.fixture.Devices); got != want {
		t.Fatalf("published %d devices, fixture has %d", got, want)
	}
	// The fixture: one Optane, four P4326 QLC (one with a BlueStore label), a SATA boot disk.
	if sn.Status.FastDevices != 1 || sn.Status.CapacityDevices != 4 || sn.Status.EligibleDevices != 4 {
		t.Errorf("fast/capacity/eligible = %d/%d/%d, want 1/4/4", sn.Status.FastDevices, sn.Status.CapacityDevices, sn.Status.EligibleDevices)
	}
	cond := meta.FindStatusCondition(sn.Status.Conditions, prismv1.ConditionInventoried)
	if cond == nil || cond.Status != "True" || sn.Status.LastInventoryTime == nil {
		t.Errorf("Inventoried condition = %+v, lastInventoryTime = %v", cond, sn.Status.LastInventoryTime)
	}
	for _, d := range sn.Status.Devices {
		if d.Name == "nvme4n1" && (d.Eligibility.Eligible || d.Eligibility.Reasons[0].Filter != prismv1.FilterNoSignatures) {
			t.Errorf("the QLC drive with a BlueStore label must be ineligible by NoSignatures: %+v", d.Eligibility)
		}
	}

	// An unchanged inventory is not written again (no API write per period).
	rv := sn.ResourceVersion
	if err := a.publisher(agentAPI(t, env.Config)).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	if sn.ResourceVersion != rv {
		t.Errorf("an unchanged inventory was written again (resourceVersion %s -> %s)", rv, sn.ResourceVersion)
	}
}

// TestAgentReadsItsGenerationAlone: the plan poll's metadata-only GET returns the generation a
// full GET shows, follows spec changes, answers NotFound for a missing StorageNode, and is
// smaller on the wire than the object (the status is most of it).
func TestAgentReadsItsGenerationAlone(t *testing.T) {
	ctx := context.Background()
	nodes := startNodes(t, env.Client, unique("generation"))
	a := nodes["optane-qlc-b"]
	api := agentAPI(t, env.Config)
	if err := a.publisher(api).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	gen, err := api.StorageNodeGeneration(ctx, a.name)
	if err != nil || gen != sn.Generation || gen == 0 {
		t.Fatalf("generation %d (%v), a full GET says %d", gen, err, sn.Generation)
	}
	sn.Spec.Mode = prismv1.ModeDryRun
	if err := env.Client.Update(ctx, sn); err != nil {
		t.Fatal(err)
	}
	if gen2, err := api.StorageNodeGeneration(ctx, a.name); err != nil || gen2 != sn.Generation || gen2 == gen {
		t.Errorf("after a spec change: generation %d (%v), want %d (was %d)", gen2, err, sn.Generation, gen)
	}
	if _, err := api.StorageNodeGeneration(ctx, unique("no-such-node")); !apierrors.IsNotFound(err) {
		t.Errorf("missing StorageNode: %v, want NotFound", err)
	}

	path := "/apis/" + prismv1.GroupVersion.String() + "/storagenodes/" + a.name
	full := rawGet(t, path, "application/json")
	metaOnly := rawGet(t, path, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	t.Logf("StorageNode %s: %d bytes, its metadata %d", a.name, len(full), len(metaOnly))
	if len(metaOnly)*2 > len(full) {
		t.Errorf("the metadata answer (%d bytes) is not much smaller than the object (%d)", len(metaOnly), len(full))
	}
}

// rawGet GETs path from the API server with the test's credentials and returns the body.
func rawGet(t *testing.T, path, accept string) []byte {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s (%s): %d %v %s", path, accept, resp.StatusCode, err, body)
	}
	return body
}
