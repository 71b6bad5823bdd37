// Package agentclient is the node agent's Kubernetes client: the calls the agent makes (get
// and create its StorageNode, read its generation, merge-patch its status, read its Node's UID) on
// client-go's REST client, with a scheme of Prism's kinds only.
//
// Why not controller-runtime's client: importing it links and initialises client-go's
// full scheme (every built-in API group, registered at start-up), discovery, OpenAPI and
// the REST mapper, which the agent never uses; together they were most of the agent's
// resident memory. Decision 0014 (docs/decisions/0014-agent-narrow-client.md).
package agentclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

const storageNodes = "storagenodes"

// Client reads and writes one kind, StorageNode, and reads Nodes' metadata.
type Client struct {
	rest         rest.Interface
	fieldManager string
}

// New builds a client for cfg; it contacts no server. Writes carry fieldManager.
func New(cfg *rest.Config, fieldManager string) (*Client, error) {
	s := runtime.NewScheme()
	if err := prismv1.AddToScheme(s); err != nil {
		return nil, err
	}
	// metav1.Status for the API's errors (apierrors.IsNotFound and friends).
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &prismv1.GroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Client{rest: rc, fieldManager: fieldManager}, nil
}

// GetStorageNode reads the StorageNode called name.
func (c *Client) GetStorageNode(ctx context.Context, name string) (*prismv1.StorageNode, error) {
	sn := &prismv1.StorageNode{}
	err := c.rest.Get().Resource(storageNodes).Name(name).Do(ctx).Into(sn)
	return sn, err
}

// metadataOnly asks the API server for an object's metadata alone (PartialObjectMetadata), the
// way controller-runtime's metadata client does.
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// StorageNodeGeneration reads only the StorageNode's metadata.generation: the server sends
// its metadata, neither side encodes or decodes the spec and status.
func (c *Client) StorageNodeGeneration(ctx context.Context, name string) (int64, error) {
	raw, err := c.rest.Get().Resource(storageNodes).Name(name).SetHeader("Accept", metadataOnly).Do(ctx).Raw()
	if err != nil {
		return 0, err
	}
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, fmt.Errorf("decoding StorageNode %s metadata: %w", name, err)
	}
	if m.Kind != "PartialObjectMetadata" || m.Name != name {
		return 0, fmt.Errorf("StorageNode %s: the API server answered %s %q, not its metadata", name, m.Kind, m.Name)
	}
	return m.Generation, nil
}

// CreateStorageNode creates sn and updates it from the server's answer.
func (c *Client) CreateStorageNode(ctx context.Context, sn *prismv1.StorageNode) error {
	return c.rest.Post().Resource(storageNodes).Param("fieldManager", c.fieldManager).
		Body(sn).Do(ctx).Into(sn)
}

// PatchStorageNodeStatus writes the difference between before and after as a JSON merge
// patch of the status subresource (no resourceVersion: the agent is the status's only
// writer) and updates after from the server's answer.
func (c *Client) PatchStorageNodeStatus(ctx context.Context, before, after *prismv1.StorageNode) error {
	patch, err := mergePatch(before, after)
	if err != nil {
		return err
	}
	return c.rest.Patch(types.MergePatchType).Resource(storageNodes).Name(after.Name).SubResource("status").
		Param("fieldManager", c.fieldManager).Body(patch).Do(ctx).Into(after)
}

// NodeUID reads the UID of the Node called name (for the StorageNode's owner reference).
func (c *Client) NodeUID(ctx context.Context, name string) (types.UID, error) {
	raw, err := c.rest.Get().AbsPath("/api/v1/nodes", name).Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var node metav1.PartialObjectMetadata
	if err := json.Unmarshal(raw, &node); err != nil {
		return "", fmt.Errorf("decoding Node %s: %w", name, err)
	}
	if node.UID == "" {
		return "", fmt.Errorf("Node %s: the API server's answer has no metadata.uid", name)
	}
	return node.UID, nil
}

// mergePatch is the RFC 7386 merge patch from before to after, as controller-runtime's
// client.MergeFrom computes it.
func mergePatch(before, after *prismv1.StorageNode) ([]byte, error) {
	b, err := json.Marshal(before)
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(b, a)
}

// eventsNamespace is where events about cluster-scoped objects go, as client-go's recorders
// put them.
const eventsNamespace = metav1.NamespaceDefault

// RecordEvent creates an events.k8s.io/v1 Event about sn, reported by the agent of this node.
func (c *Client) RecordEvent(ctx context.Context, sn *prismv1.StorageNode, eventType, reason, action, note string) error {
	now := metav1.NewMicroTime(time.Now())
	body := map[string]any{
		"apiVersion": "events.k8s.io/v1",
		"kind":       "Event",
		// Named as client-go's recorders name events: the object's name and the time.
		"metadata":  map[string]any{"name": fmt.Sprintf("%s.%x", sn.Name, now.UnixNano()), "namespace": eventsNamespace},
		"eventTime": now,
		"type":      eventType, "reason": reason, "action": action, "note": truncateNote(note),
		"reportingController": "prism.storage.io/agent",
		"reportingInstance":   "prism-agent-" + sn.Name,
		"regarding": map[string]any{
			"apiVersion": prismv1.GroupVersion.String(), "kind": "StorageNode", "name": sn.Name, "uid": sn.UID,
		},
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return c.rest.Post().AbsPath("/apis/events.k8s.io/v1/namespaces", eventsNamespace, "events").
		Param("fieldManager", c.fieldManager).Body(raw).Do(ctx).Error()
}

// truncateNote keeps a note within the events API's 1 kB limit.
func truncateNote(s string) string { return prismv1.Truncate(s, 1024) }
