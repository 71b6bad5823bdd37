package envtest

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/node/agent"
	"github.com/prism-storage/prism/internal/node/agentclient"
	"github.com/prism-storage/prism/internal/node/provision"
)

// The agent, with its own identity and RBAC (config/rbac/agent_role.yaml) and admission,
// records on its StorageNode the Events an admin must notice: a device refused because it
// holds data, then partitions created once it no longer does, each once.
func TestAgentRecordsEvents(t *testing.T) {
	ctx := context.Background()
	installAgentAccess(t)
	nodes := startNodes(t, env.Client, unique("agent-events"))
	a := nodes["optane-qlc-a"]
	c, err := agentclient.New(agentConfig(a.name), agent.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	p := a.publisher(c)
	p.Events = c
	// The partitioner's answers, as provision.Runner gives them: first a refusal, then the
	// partitions written.
	dev := "/dev/disk/by-id/nvme-test-fast"
	answer := provision.Result{Partitions: []prismv1.PartitionStatus{{Device: dev, Number: 1, Label: "prism-db-00",
		Path: dev + "-part1", State: prismv1.PartitionRefused, Message: "/dev/nvme0n1 holds what Prism did not create: f2fs at byte 1024 (libblkid)"}}}
	p.Actuator = &agent.Actuator{Provision: func(context.Context, *prismv1.NodePlan, []prismv1.Device, prismv1.PolicyMode) provision.Result {
		return answer
	}}
	if err := p.Sync(ctx); err != nil { // creates the StorageNode, empty
		t.Fatal(err)
	}
	// The operator's plan for the node (written with the admin's client, as the operator would).
	sn := &prismv1.StorageNode{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: a.name}, sn); err != nil {
		t.Fatal(err)
	}
	sn.Spec.Mode = prismv1.ModeApply
	sn.Spec.PolicyName = "agent-events"
	sn.Spec.Plan = &prismv1.NodePlan{}
	if err := env.Client.Update(ctx, sn); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the same refusal twice: one Event
		if err := p.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	answer = provision.Result{Changed: true, Wrote: true, Partitions: []prismv1.PartitionStatus{{Device: dev, Number: 1, Label: "prism-db-00", Path: dev + "-part1", State: prismv1.PartitionReady}}}
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range list.Items {
			if e.Regarding.Name == a.name && e.ReportingController == "prism.storage.io/agent" {
				got = append(got, e.Type+" "+e.Reason+": "+e.Note)
			}
		}
		if len(got) >= 2 {
			break
		}
	}
	want := []string{
		"Warning DeviceRefused: " + dev + ": /dev/nvme0n1 holds what Prism did not create: f2fs at byte 1024 (libblkid)",
		"Normal PartitionsCreated: " + dev + ": partitions 1 (prism-db-00) created and ready",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the agent's Events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
