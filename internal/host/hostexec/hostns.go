package hostexec

import (
	"context"
	"slices"
)

// InHostMountNamespace runs the named tools inside the host's mount and IPC namespaces,
// through `nsenter --target 1 --mount --ipc --` (the agent's pod needs hostPID): tools that
// come with a kernel module, like Open CAS's casadm, live on the host and must match its
// module, so the image cannot carry them; LVM's commands must use the host's lvm.conf (its
// filters and devices file), lock directory and udev, and wait for udev through SysV
// semaphores in the host's IPC namespace (decision 0036). Every other argv runs unchanged
// through Inner.
type InHostMountNamespace struct {
	Inner Executor
	// Tools are the argv[0] values to run on the host.
	Tools []string
}

// Run prefixes nsenter for the host's tools.
func (h InHostMountNamespace) Run(ctx context.Context, argv []string, stdin []byte) ([]byte, error) {
	if len(argv) > 0 && slices.Contains(h.Tools, argv[0]) {
		argv = append([]string{"nsenter", "--target", "1", "--mount", "--ipc", "--"}, argv...)
	}
	return h.Inner.Run(ctx, argv, stdin)
}
