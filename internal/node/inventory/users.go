package inventory

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// diskUsers finds the processes that hold each disk or one of its partitions open, as the
// disk's holders: "pid 1234 (fusefat)", or "partition 1: pid 1234 (fusefat)". They fail
// NoHolders as a stacked device does. Called before the inventory opens any disk or starts a
// probe: the agent's own process is not counted, and its children are not running. A failed
// scan is a problem of every disk: none is proven unused.
//
// Only disks whose node under the host root is the block device sysfs numbers are looked for:
// a fixture tree's disks (regular files, numbers made up) are no device of this machine.
func diskUsers(p *procfs.Proc, host sysfs.Host, disks []sysfs.BlockDevice) (map[string][]string, error) {
	if p == nil {
		return nil, nil
	}
	devs := map[uint64]string{}
	owner := map[string]string{} // partition to its disk
	for _, d := range disks {
		num := unix.Mkdev(d.Major, d.Minor)
		if node, ok, err := procfs.BlockDeviceNumber(host.DevicePath(d.Name)); err != nil || !ok || node != num {
			continue
		}
		devs[num] = d.Name
		owner[d.Name] = d.Name
		if len(d.Partitions) == 0 {
			continue
		}
		parts, err := host.KernelPartitions(d.Name)
		if err != nil {
			return nil, fmt.Errorf("reading the partitions of %s (their users are unknown): %w", d.Name, err)
		}
		for n, part := range parts {
			dev, err := procfs.ParseDev(part.Dev)
			if err != nil {
				return nil, fmt.Errorf("partition %d of %s: %w", n, d.Name, err)
			}
			name := fmt.Sprintf("%s partition %d", d.Name, n)
			devs[dev], owner[name] = name, d.Name
		}
	}
	openers, err := p.Openers(devs)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, o := range openers {
		disk := owner[o.Device]
		h := o.String()
		if o.Device != disk {
			h = o.Device[len(disk)+1:] + ": " + h
		}
		out[disk] = append(out[disk], h)
	}
	return out, nil
}
