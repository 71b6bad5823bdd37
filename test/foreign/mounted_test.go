//go:build linux

package foreign

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mounter mounts one format from one device on one directory, with the kernel's driver or,
// where this kernel has none, with the format's FUSE tool. Its cleanup thaws and unmounts
// whatever is still mounted, also when the test failed half-way.
type mounter struct {
	e       *env
	f       format
	l       *loop
	dir     string
	fuse    bool // FUSE, not the kernel's driver
	mounted bool
	frozen  bool
}

func (e *env) newMounter(t *testing.T, f format, l *loop) *mounter {
	t.Helper()
	m := &mounter{e: e, f: f, l: l, dir: filepath.Join(e.dir, "mnt-"+l.name+"-"+randomHex(t, 3))}
	if err := os.Mkdir(m.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fsfreeze, umount := e.tool(t, "fsfreeze", ""), e.tool(t, "umount", "")
	t.Cleanup(func() {
		if m.frozen {
			if err := cleanupRun(fsfreeze, "--unfreeze", m.dir); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if m.mounted {
			if err := unmountRetrying(umount, m.dir); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	return m
}

func unmountRetrying(umount, dir string) error {
	var err error
	for range 20 {
		if err = cleanupRun(umount, dir); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return err
}

// kernelHas reports whether /proc/filesystems lists a driver.
func kernelHas(t *testing.T, fstype string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == fstype {
			return true
		}
	}
	return false
}

// mount mounts read-only or read-write. It skips when neither the kernel nor FUSE can
// (naming why), and returns an error when a way that should work fails.
func (m *mounter) mount(t *testing.T, rw bool) error {
	t.Helper()
	spec := m.f.mount
	if !m.fuse {
		opts := "ro"
		if rw {
			opts = "rw,noatime"
		}
		_, err := run(m.e.ctx, "", m.e.tool(t, "mount", ""), "-t", spec.fstype, "-o", opts, m.l.dev, m.dir)
		if err == nil {
			m.mounted = true
			return nil
		}
		if kernelHas(t, spec.fstype) {
			return err
		}
		if spec.fuseRO == nil {
			t.Skipf("this kernel has no %s driver (/proc/filesystems lacks it; %v) and there is no FUSE tool for %s", spec.fstype, err, m.f.name)
		}
		m.fuse = true
		t.Logf("this kernel has no %s driver: mounting with %s (FUSE)", spec.fstype, spec.fuseRO[0])
	}
	argv := spec.fuseRO
	if rw {
		argv = spec.fuseRW
	}
	if argv == nil {
		t.Skipf("this kernel has no %s driver and %s only mounts read-only", spec.fstype, spec.fuseRO[0])
	}
	full := []string{m.e.tool(t, argv[0], spec.fusePkg)}
	for _, a := range argv[1:] {
		full = append(full, strings.NewReplacer("{dev}", m.l.dev, "{dir}", m.dir).Replace(a))
	}
	if _, err := run(m.e.ctx, "", full...); err != nil {
		return err
	}
	m.mounted = true
	// A FUSE daemon may detach before the kernel lists the mount.
	for range 50 {
		if m.isMounted(t) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s is not a mount point after it returned", strings.Join(full, " "), m.dir)
}

func (m *mounter) isMounted(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(" "+m.dir+" "))
}

func (m *mounter) unmount(t *testing.T) {
	t.Helper()
	if err := unmountRetrying(m.e.tool(t, "umount", ""), m.dir); err != nil {
		t.Fatal(err)
	}
	m.mounted = false
}

// writeKnown writes the known file through the mount and fsyncs it.
func (m *mounter) writeKnown(t *testing.T) {
	t.Helper()
	f, err := os.Create(filepath.Join(m.dir, knownName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(m.e.known); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// quiesce stops a read-write mount from writing during the pass, so that its bytes can be
// compared: fsfreeze where the file system supports it (journal commits, log covering and
// background threads wait), else a sync of the file system (for drivers with no background
// writer: ext2, vfat, the FUSE tools).
func (m *mounter) quiesce(t *testing.T) string {
	t.Helper()
	_, err := run(m.e.ctx, "", m.e.tool(t, "fsfreeze", ""), "--freeze", m.dir)
	if err == nil {
		m.frozen = true
		return "frozen (fsfreeze)"
	}
	if _, serr := run(m.e.ctx, "", m.e.tool(t, "sync", "coreutils"), "--file-system", m.dir); serr != nil {
		t.Fatal(serr)
	}
	msg := err.Error()
	return "synced (fsfreeze: " + msg[strings.LastIndex(msg, ": ")+2:] + ")"
}

func (m *mounter) thaw(t *testing.T) {
	t.Helper()
	if m.frozen {
		m.e.must(t, m.e.tool(t, "fsfreeze", ""), "--unfreeze", m.dir)
		m.frozen = false
	}
}

// checkKnown unmounts, mounts read-only again (so that nothing is served from the page cache
// of the mount that saw the pass) and compares the known file.
func (m *mounter) checkKnown(t *testing.T) {
	t.Helper()
	m.unmount(t)
	if err := m.mount(t, false); err != nil {
		t.Errorf("after the pass, %s no longer mounts: %v", m.f.name, err)
		return
	}
	got, err := os.ReadFile(filepath.Join(m.dir, knownName))
	switch {
	case err != nil:
		t.Errorf("after the pass, the file written before it cannot be read: %v", err)
	case !bytes.Equal(got, m.e.known):
		t.Errorf("after the pass, the file written before it differs (%d bytes, want %d)", len(got), len(m.e.known))
	}
	m.unmount(t)
}

// TestForeignMounted mounts each mountable format read-only and, where writable, read-write
// (a file written through the mount first), and runs the partitioner while it is mounted.
// Also: an active swap area, and a device held by a device-mapper linear mapping.
func TestForeignMounted(t *testing.T) {
	e := setup(t)
	for _, f := range formats {
		if f.mount == nil {
			continue
		}
		modes := []string{"ro"}
		if f.mount.rw {
			modes = append(modes, "rw")
		}
		for _, mode := range modes {
			t.Run(f.name+"/"+mode, func(t *testing.T) {
				l := e.prepare(t, f, devSize)
				name := foundName(e.probe(t, l.dev))
				m := e.newMounter(t, f, l)
				if f.mount.rw {
					if err := m.mount(t, true); err != nil {
						t.Fatal(err)
					}
					m.writeKnown(t)
				}
				how := "mounted read-only"
				if mode == "ro" {
					if f.mount.rw {
						m.unmount(t)
					}
					if err := m.mount(t, false); err != nil {
						t.Fatal(err)
					}
				} else {
					how = "mounted read-write, " + m.quiesce(t)
				}
				via := "kernel " + f.mount.fstype
				if m.fuse {
					via = "FUSE"
				}
				t.Logf("%s on %s, %s (%s), holders %v", f.name, l.dev, how, via, holders(t, l.name))
				e.refusesAndKeeps(t, l, planFor(t, planOpts{slots: 2, cache: true}, l), name)
				m.thaw(t)
				m.checkKnown(t)
			})
		}
	}

	t.Run("swap/active", func(t *testing.T) {
		// A 64 MiB swap area at the start of the device: little for the kernel to page out
		// to it during the test.
		f := format{name: "swap-active", pkg: "util-linux", make: []cmd{mk("mkswap", "{dev}", "65536")}}
		swapon, swapoff := e.tool(t, "swapon", ""), e.tool(t, "swapoff", "")
		l := e.prepare(t, f, devSize)
		name := foundName(e.probe(t, l.dev))
		if _, err := run(e.ctx, "", swapon, l.dev); err != nil {
			t.Skipf("cannot activate swap here: %v", err)
		}
		t.Cleanup(func() {
			if err := cleanupRun(swapoff, l.dev); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		e.refusesAndKeeps(t, l, planFor(t, planOpts{slots: 2, cache: true}, l), name)
	})

	t.Run("dm-linear/holder", func(t *testing.T) {
		// No signature at all: only the holder says the device is in use.
		dmsetup := e.tool(t, "dmsetup", "")
		l := e.attach(t, "dm-linear", devSize)
		name := "prism-test-" + e.tag + "-linear"
		if _, err := run(e.ctx, "", dmsetup, "create", name, "--table", fmt.Sprintf("0 %d linear %s 0", l.size/512, l.dev)); err != nil {
			t.Skipf("dmsetup cannot create a mapping here: %v", err)
		}
		t.Cleanup(func() {
			if err := cleanupRun(dmsetup, "remove", "--retry", name); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		hs := holders(t, l.name)
		if len(hs) != 1 {
			t.Fatalf("holders of %s after dmsetup create: %v", l.name, hs)
		}
		e.refusesAndKeeps(t, l, planFor(t, planOpts{slots: 2, cache: true}, l), hs[0])
	})
}
