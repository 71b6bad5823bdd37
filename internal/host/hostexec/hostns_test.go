package hostexec

import (
	"context"
	"reflect"
	"testing"
)

type recordingExec struct{ argv [][]string }

func (r *recordingExec) Run(_ context.Context, argv []string, _ []byte) ([]byte, error) {
	r.argv = append(r.argv, argv)
	return nil, nil
}

func TestInHostMountNamespacePrefixesOnlyNamedTools(t *testing.T) {
	rec := &recordingExec{}
	h := InHostMountNamespace{Inner: rec, Tools: []string{"casadm"}}
	_, _ = h.Run(context.Background(), []string{"casadm", "-L", "-o", "csv"}, nil)
	_, _ = h.Run(context.Background(), []string{"sgdisk", "-p", "/dev/nvme0n1"}, nil)
	want := [][]string{
		{"nsenter", "--target", "1", "--mount", "--ipc", "--", "casadm", "-L", "-o", "csv"},
		{"sgdisk", "-p", "/dev/nvme0n1"},
	}
	if !reflect.DeepEqual(rec.argv, want) {
		t.Errorf("argv %q, want %q", rec.argv, want)
	}
}

// A tool not named runs through the real executor unchanged.
func TestInHostMountNamespaceRunsOthersLocally(t *testing.T) {
	h := InHostMountNamespace{Inner: Local{}, Tools: []string{"casadm"}}
	out, err := h.Run(context.Background(), []string{"echo", "ok"}, nil)
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("%q %v", out, err)
	}
}
