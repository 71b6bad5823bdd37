package agent

import (
	"context"
	"slices"
	"testing"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// The per-OSD summary goes into the status in the sync's one patch, only when it changed, and
// stays when the collector has nothing to say (no poll yet, or the socket directory failed).
func TestSyncPublishesOSDsOnlyOnChange(t *testing.T) {
	ctx := context.Background()
	f := newAgentFixture(t, storageNode(1, prismv1.ModeDryRun))
	used := int64(36000000)
	summary := func() []prismv1.OSDStatus {
		return []prismv1.OSDStatus{{ID: 0, DBTotalBytes: 670000000, DBUsedBytes: used,
			Classes: []prismv1.OSDDataClass{{Name: "wal", WriteShare: "0.2", Beta: "0.71"}}}}
	}
	known := true
	f.p.OSDs = func() ([]prismv1.OSDStatus, bool) {
		if !known {
			return nil, false
		}
		return summary(), true
	}
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t).Status.OSDs; len(got) != 1 || got[0].DBUsedBytes != used || got[0].Classes[0].Beta != "0.71" {
		t.Fatalf("after the first sync: osds %+v", got)
	}
	first := f.patches.Load()
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if f.patches.Load() != first {
		t.Errorf("an unchanged summary was written again (%d patches, then %d)", first, f.patches.Load())
	}
	known = false // the collector could not list the sockets
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t).Status.OSDs; len(got) != 1 || f.patches.Load() != first {
		t.Errorf("without a summary the published one must stay: osds %+v, %d patches", got, f.patches.Load())
	}
	known, used = true, 66000000
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t).Status.OSDs; len(got) != 1 || got[0].DBUsedBytes != used || f.patches.Load() != first+1 {
		t.Errorf("a changed summary: osds %+v, %d patches (want %d)", got, f.patches.Load(), first+1)
	}
}

// Every sync tells the metrics the StorageNode's policy (prism_node_info), also when the
// status needs no write, and a new policy at the next sync.
func TestSyncTellsThePolicy(t *testing.T) {
	ctx := context.Background()
	sn := storageNode(1, prismv1.ModeDryRun)
	f := newAgentFixture(t, sn)
	var told []string
	f.p.Policy = func(name string) { told = append(told, name) }
	for range 2 {
		if err := f.p.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cur := f.get(t)
	cur.Spec.PolicyName = "q"
	if err := f.c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := f.p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"p", "p", "q"}; !slices.Equal(told, want) {
		t.Errorf("policies told %q, want %q", told, want)
	}
}
