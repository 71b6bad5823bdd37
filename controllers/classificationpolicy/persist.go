package classificationpolicy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
)

// The advisor's open window is kept in a ConfigMap per policy in the operator's namespace, so
// that a new leader resumes it (issue 31): gzip-compressed JSON under stateKey, owned by the
// policy so that it goes when the policy does.
const (
	stateKey = "tracker.json.gz"
	// maxStateBytes leaves room under the ConfigMap's 1 MiB for its metadata.
	maxStateBytes = 900 << 10
)

// errStateTooLarge: the state does not fit in a ConfigMap.
var errStateTooLarge = errors.New("the advisor's window is larger than a ConfigMap holds")

// stateName is the ConfigMap of a policy's advisor state (a DNS subdomain of at most 253).
func stateName(policy string) string {
	name := "prism-advisor-" + policy
	if len(name) > 253 {
		sum := sha256.Sum256([]byte(policy))
		name = name[:240] + "-" + hex.EncodeToString(sum[:])[:12]
	}
	return name
}

// loadState reads a policy's kept state: found false when there is none. An unreadable
// state is an error: the window then starts over, as after a restart before this existed.
func (r *Reconciler) loadState(ctx context.Context, policy string) (advisor.TrackerState, bool, error) {
	var cm corev1.ConfigMap
	// Read once per policy and process, uncached: a cached read would watch every ConfigMap.
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: stateName(policy)}, &cm); err != nil {
		if apierrors.IsNotFound(err) {
			return advisor.TrackerState{}, false, nil
		}
		return advisor.TrackerState{}, false, fmt.Errorf("reading the advisor's window %s/%s: %w", r.Namespace, stateName(policy), err)
	}
	s, err := advisor.DecodeState(cm.BinaryData[stateKey])
	if err != nil {
		return advisor.TrackerState{}, false, fmt.Errorf("ConfigMap %s/%s: binaryData.%s: %w", r.Namespace, cm.Name, stateKey, err)
	}
	return s, true, nil
}

// saveState keeps a policy's state, creating its ConfigMap or replacing its content.
func (r *Reconciler) saveState(ctx context.Context, policy *prismv1.ClassificationPolicy, s advisor.TrackerState) error {
	b, err := advisor.EncodeState(s)
	if err != nil {
		return err
	}
	if len(b) > maxStateBytes {
		return fmt.Errorf("%w: %d caches, %d bytes compressed, over %d", errStateTooLarge, len(s.Baseline), len(b), maxStateBytes)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: stateName(policy.Name),
		Labels: map[string]string{"app.kubernetes.io/name": "prism", "app.kubernetes.io/component": "advisor"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: prismv1.GroupVersion.String(), Kind: "ClassificationPolicy",
			Name: policy.Name, UID: policy.UID}}},
		BinaryData: map[string][]byte{stateKey: b}}
	err = r.Client.Update(ctx, cm)
	if apierrors.IsNotFound(err) {
		err = r.Client.Create(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("keeping the advisor's window in %s/%s: %w", r.Namespace, cm.Name, err)
	}
	return nil
}
