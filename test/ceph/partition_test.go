//go:build linux

package ceph

import (
	"context"
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/node/provision"
)

// partitioner names what partitionFast uses, for the log.
const partitioner = "internal/node/provision.Reconcile (the node agent's partitioner), host root /, mode Apply"

// partitionFast creates the plan's partitions on the node's fast devices with the agent's
// own partitioner, exactly as the agent does for a StorageNode in Apply mode; devices is
// the inventory, which maps each plan stable path to its kernel path (Device.Path). It fails
// unless the partitioner reports every planned partition Ready.
func partitionFast(ctx context.Context, ex hostexec.Executor, p prismv1.NodePlan, devices []prismv1.Device) ([]prismv1.PartitionStatus, error) {
	// This machine's /proc without the test's ancestors: a sandbox's supervisor may hide its
	// files even from root, and none of them opened the test's loops (decision 0040).
	proc, err := procfs.Proc{Dir: "/proc"}.IgnoringAncestors()
	if err != nil {
		return nil, err
	}
	statuses := provision.Runner{Exec: ex, HostRoot: "/", Proc: proc}.Reconcile(ctx, &p, devices, prismv1.ModeApply).Partitions
	want := 0
	for _, f := range p.FastDevices {
		want += len(f.Slots)
		if f.Cache != nil {
			want++
		}
	}
	var notReady []string
	for _, s := range statuses {
		if s.State != prismv1.PartitionReady {
			notReady = append(notReady, fmt.Sprintf("%s partition %d %q: %s: %s", s.Device, s.Number, s.Label, s.State, s.Message))
		}
	}
	if len(notReady) > 0 || len(statuses) != want {
		return statuses, fmt.Errorf("%d of %d planned partitions reported, not Ready: %s", len(statuses), want, strings.Join(notReady, "; "))
	}
	return statuses, nil
}
