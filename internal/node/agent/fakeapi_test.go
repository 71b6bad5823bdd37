package agent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// clientAPI is the agent's API on a controller-runtime client, for tests on the fake client.
// The agent's own implementation (internal/node/agentclient) is tested against a real API server
// in test/envtest.
type clientAPI struct{ c client.Client }

func (a clientAPI) GetStorageNode(ctx context.Context, name string) (*prismv1.StorageNode, error) {
	sn := &prismv1.StorageNode{}
	return sn, a.c.Get(ctx, client.ObjectKey{Name: name}, sn)
}

func (a clientAPI) StorageNodeGeneration(ctx context.Context, name string) (int64, error) {
	sn, err := a.GetStorageNode(ctx, name)
	return sn.Generation, err
}

func (a clientAPI) CreateStorageNode(ctx context.Context, sn *prismv1.StorageNode) error {
	return a.c.Create(ctx, sn, client.FieldOwner(FieldManager))
}

func (a clientAPI) PatchStorageNodeStatus(ctx context.Context, before, after *prismv1.StorageNode) error {
	return a.c.Status().Patch(ctx, after, client.MergeFrom(before), client.FieldOwner(FieldManager))
}

func (a clientAPI) NodeUID(ctx context.Context, name string) (types.UID, error) {
	n := &corev1.Node{}
	return n.UID, a.c.Get(ctx, client.ObjectKey{Name: name}, n)
}

// fakeScheme has what the agent reads and writes: Nodes and Prism's kinds.
func fakeScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := prismv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
