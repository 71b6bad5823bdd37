// Package procfs finds the processes that hold a block device open, from /proc/<pid>/fd of
// a procfs mount. A process that opened a device without O_EXCL (a FUSE file system's
// daemon, a program reading or writing the device) shows in no holder list, in no mount
// table entry with the device's number and in no refused exclusive open: only here.
package procfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Opener is one process with one of the looked-for devices open.
type Opener struct {
	PID int
	// Comm is the process's name (/proc/<pid>/comm), "" when it exited before it was read.
	Comm string
	// Device is the name the caller gave the device number the process has open.
	Device string
}

// String is what a refusal names: "pid 1234 (fusefat)".
func (o Opener) String() string { return fmt.Sprintf("pid %d (%s)", o.PID, o.Comm) }

// Proc is a procfs mount, normally "/proc". It must be the procfs of the host's PID namespace
// (the agent runs with hostPID): a procfs of a pod's namespace lists the pod's processes only.
type Proc struct {
	Dir string
	// Ignore are processes not looked at, known not to hold the devices: a test harness
	// gives its own ancestors (a sandbox's supervisor may refuse to show its files even to
	// root). The agent ignores none.
	Ignore []int
}

// Openers lists the processes that have one of devs (device number, unix.Mkdev, to a name
// for the caller) open through a file descriptor, by PID, except the calling process itself
// (procfs's "self": the agent's own reads and exclusive hold). A file descriptor is matched
// by what it refers to: a block device node with that device number, wherever the node is
// and whatever its path.
//
// A process or descriptor that goes away during the scan is skipped: it no longer holds
// anything. Any other failure, a permission refused on another process's descriptors above
// all, fails the scan: a scan that could not look at every process proves no device unused.
func (p Proc) Openers(devs map[uint64]string) ([]Opener, error) {
	if len(devs) == 0 {
		return nil, nil
	}
	self, err := p.self()
	if err != nil {
		return nil, err
	}
	d, err := os.Open(p.Dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("listing the processes in %s: %w", p.Dir, err)
	}
	var out []Opener
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 || pid == self || slices.Contains(p.Ignore, pid) {
			continue
		}
		found, err := p.openedBy(pid, devs)
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	slices.SortFunc(out, func(a, b Opener) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return strings.Compare(a.Device, b.Device)
	})
	return out, nil
}

// SettledOpeners is Openers, with the openers it finds given up to grace to close the
// devices, and a failed look up to grace to succeed: it looks again every pollInterval and
// returns the first look that succeeds and finds none, or the last. A probe's open (a udev
// worker after a device is closed, another inventory reading every disk, smartctl) lasts
// milliseconds to a second, and so does a process that hides its files while it starts (a
// sandbox's spawner); a FUSE daemon or a program using the device stays. The answer is what
// the last look saw, as true as a single look then.
func (p Proc) SettledOpeners(ctx context.Context, devs map[uint64]string, grace time.Duration) ([]Opener, error) {
	deadline := time.Now().Add(grace)
	for {
		found, err := p.Openers(devs)
		if err == nil && len(found) == 0 || !time.Now().Before(deadline) {
			return found, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(pollInterval, time.Until(deadline))):
		}
	}
}

// BriefOpen is the grace Prism gives the openers of a device: longer than a probe's open,
// short enough to wait for before every write.
const BriefOpen = 2 * time.Second

// pollInterval is how often SettledOpeners looks again.
const pollInterval = 100 * time.Millisecond

// self is the calling process's PID as this procfs numbers it. PID 1 cannot be a host's
// agent: it is the init of its own PID namespace (a pod without hostPID), which shows none of
// the host's processes.
func (p Proc) self() (int, error) {
	link, err := os.Readlink(filepath.Join(p.Dir, "self"))
	if err != nil {
		return 0, fmt.Errorf("finding this process in %s: %w", p.Dir, err)
	}
	pid, err := strconv.Atoi(link)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s/self is %q, not a process ID", p.Dir, link)
	}
	if pid == 1 {
		return 0, fmt.Errorf("this process is PID 1 in %s, the init of its own PID namespace, so it cannot see which host processes hold devices open (run it in the host's PID namespace: hostPID)", p.Dir)
	}
	return pid, nil
}

// openedBy lists the looked-for devices process pid has open, each once.
func (p Proc) openedBy(pid int, devs map[uint64]string) ([]Opener, error) {
	dir := filepath.Join(p.Dir, strconv.Itoa(pid), "fd")
	fds, err := readNames(dir)
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot tell what pid %d (%s) has open: %w", pid, p.comm(pid), err)
	}
	var out []Opener
	for _, fd := range fds {
		path := filepath.Join(dir, fd)
		dev, ok, err := BlockDeviceNumber(path)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot tell what pid %d (%s) has open as descriptor %s: %w", pid, p.comm(pid), fd, err)
		}
		name, want := devs[dev]
		if !ok || !want || slices.ContainsFunc(out, func(o Opener) bool { return o.Device == name }) {
			continue
		}
		out = append(out, Opener{PID: pid, Device: name})
	}
	if len(out) > 0 {
		comm := p.comm(pid)
		for i := range out {
			out[i].Comm = comm
		}
	}
	return out, nil
}

// comm is a process's name, "" when it has exited.
func (p Proc) comm(pid int) string {
	b, _ := os.ReadFile(filepath.Join(p.Dir, strconv.Itoa(pid), "comm"))
	return strings.TrimSuffix(string(b), "\n")
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// gone reports the errors of a process or descriptor that went away during the scan.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// Ancestors lists the calling process's parent, its parent, and so on up to the PID
// namespace's init, as this procfs numbers them: what a test harness passes as Ignore.
func (p Proc) Ancestors() ([]int, error) {
	var out []int
	for pid := "self"; len(out) < 4096; { // a chain of parents ends at 0; the bound is for a corrupt fixture

		b, err := os.ReadFile(filepath.Join(p.Dir, pid, "stat"))
		if err != nil {
			return out, err
		}
		ppid, err := ParentPID(b)
		if err != nil || ppid == 0 {
			return out, err
		}
		out = append(out, ppid)
		pid = strconv.Itoa(ppid)
	}
	return out, fmt.Errorf("more than %d ancestors in %s", len(out), p.Dir)
}

// IgnoringAncestors is p with the calling process's ancestors added to Ignore: what a test
// harness scans, whose ancestors did not open the devices it made and may hide their files.
func (p Proc) IgnoringAncestors() (Proc, error) {
	a, err := p.Ancestors()
	if err != nil {
		return p, fmt.Errorf("finding this process's ancestors in %s: %w", p.Dir, err)
	}
	p.Ignore = append(slices.Clip(p.Ignore), a...)
	return p, nil
}

// ParentPID reads the parent's PID from a /proc/<pid>/stat line: the second field after the
// command name, which is in parentheses and may itself hold spaces and parentheses.
func ParentPID(stat []byte) (int, error) {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat line %q has no command name in parentheses", truncate(s))
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("stat line %q ends before the parent's PID", truncate(s))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return 0, fmt.Errorf("stat line %q: parent PID %q is not a number", truncate(s), f[1])
	}
	return ppid, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ParseDev parses a device number as sysfs and mountinfo write it, "major:minor".
func ParseDev(s string) (uint64, error) {
	a, b, ok := strings.Cut(s, ":")
	major, err1 := strconv.ParseUint(a, 10, 32)
	minor, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("device number %q is not major:minor", s)
	}
	return unix.Mkdev(uint32(major), uint32(minor)), nil
}
