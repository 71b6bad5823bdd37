package inventory

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/prism-storage/prism/internal/host/procfs"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// diskUsers finds the processes that hold each disk or one of its partitions open, and the
// loop devices bound to them, as the disk's holders: "pid 1234 (fusefat)", "partition 1: pid
// 1234 (fusefat)", "loop3 (a loop device on it)". They fail NoHolders as a stacked device
// does. Called before the inventory opens any disk or starts a
// probe: the agent's own process is not counted, and its children are not running. Openers
// get procfs.BriefOpen to close the disk (another program's inventory or probe).
//
// problems are the disks whose users are unknown: one whose partitions could not be read, or
// every disk when the scan of the processes or of the loop devices failed (none is then
// proven unused).
//
// Only disks whose node under the host root is the block device sysfs numbers are looked for:
// a fixture tree's disks (regular files, numbers made up) are no device of this machine.
func diskUsers(ctx context.Context, p *procfs.Proc, host sysfs.Host, disks []sysfs.BlockDevice) (users map[string][]string, problems map[string]error) {
	if p == nil {
		return nil, nil
	}
	problems = map[string]error{}
	devs := map[uint64]string{}
	owner := map[string]string{} // partition to its disk
	for _, d := range disks {
		num := unix.Mkdev(d.Major, d.Minor)
		if node, ok, err := procfs.BlockDeviceNumber(host.DevicePath(d.Name)); err != nil || !ok || node != num {
			continue
		}
		if err := partitionNumbers(host, d, devs, owner); err != nil {
			problems[d.Name] = err
			continue
		}
		devs[num] = d.Name
		owner[d.Name] = d.Name
	}
	openers, err := p.SettledOpeners(ctx, devs, procfs.BriefOpen)
	if err != nil {
		for _, d := range disks {
			problems[d.Name] = err
		}
		return nil, problems
	}
	// A loop device bound to a disk leaves no other trace (sysfs.LoopBackings).
	loops, err := host.LoopBackings()
	if err != nil {
		for _, d := range disks {
			problems[d.Name] = err
		}
		return nil, problems
	}
	users = map[string][]string{}
	add := func(dev, user string) {
		disk := owner[dev]
		if dev != disk {
			user = dev[len(disk)+1:] + ": " + user
		}
		users[disk] = append(users[disk], user)
	}
	for _, o := range openers {
		add(o.Device, o.String())
	}
	for _, l := range loops {
		if dev, ok := devs[l.Backing]; ok && l.Backing != 0 {
			add(dev, l.Loop+" (a loop device on it)")
		}
	}
	return users, problems
}

// partitionNumbers adds the device numbers of d's kernel partitions to devs, named
// "<disk> partition N", and owner maps those names to d.
func partitionNumbers(host sysfs.Host, d sysfs.BlockDevice, devs map[uint64]string, owner map[string]string) error {
	if len(d.Partitions) == 0 {
		return nil
	}
	parts, err := host.KernelPartitions(d.Name)
	if err != nil {
		return fmt.Errorf("reading its partitions (their users are unknown): %w", err)
	}
	for n, part := range parts {
		dev, err := procfs.ParseDev(part.Dev)
		if err != nil {
			return fmt.Errorf("partition %d: %w", n, err)
		}
		name := fmt.Sprintf("%s partition %d", d.Name, n)
		devs[dev], owner[name] = name, d.Name
	}
	return nil
}
