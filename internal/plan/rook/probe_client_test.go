package rook

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProbeClientReady: a probe starts only once Rook's status says the CephClient is Ready
// (its key's Secret made); what Rook shows otherwise is said, a Failure loudly.
func TestProbeClientReady(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     map[string]any
		wantReady  bool
		wantFailed bool
		wantWhy    string
	}{
		{name: "applied, Rook not there yet", wantWhy: "Rook has not reconciled CephClient rook-ceph/prism-probe yet: no key to ask Ceph with (Secret rook-ceph-client-prism-probe)"},
		{name: "Rook's first status", status: map[string]any{"phase": "Progressing"},
			wantWhy: "CephClient rook-ceph/prism-probe is Progressing in Rook's status, not Ready"},
		{name: "Rook failed to make the key", status: map[string]any{"phase": "Failure"}, wantFailed: true,
			wantWhy: "CephClient rook-ceph/prism-probe is Failure in Rook's status, not Ready"},
		// As rook v1.20.4's updateStatus writes it: phase Ready, info with the Secret's name.
		{name: "ready", status: map[string]any{"phase": "Ready", "info": map[string]any{"secretName": ProbeSecret}, "observedGeneration": int64(1)},
			wantReady: true},
		{name: "phase of another type", status: map[string]any{"phase": int64(1)}, wantWhy: "Rook has not reconciled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := ProbeCephClient("rook-ceph", metav1.OwnerReference{})
			if tc.status != nil {
				cc.Object["status"] = tc.status
			}
			ready, why, failed := ProbeClientReady(cc)
			if ready != tc.wantReady || failed != tc.wantFailed || !strings.Contains(why, tc.wantWhy) || (ready && why != "") {
				t.Errorf("ProbeClientReady = %v, %q, %v; want %v, %q, %v", ready, why, failed, tc.wantReady, tc.wantWhy, tc.wantFailed)
			}
		})
	}
}
