//go:build linux && cgo && libblkid

package blkid

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// tool skips the test when a command is missing, naming its Debian package.
func tool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (Debian package %s)", name, pkg)
	}
}

func sh(t *testing.T, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LVM_SUPPRESS_FD_WARNINGS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// attach puts img on a loop device of its own and detaches that device (only it) when the
// test ends.
func attach(t *testing.T, img string) string {
	t.Helper()
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device available: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if err := exec.Command("losetup", "--detach", dev).Run(); err != nil {
			t.Errorf("detaching %s: %v", dev, err)
		}
	})
	return dev
}

// wipefsSays is what the wipefs child finds on path, through the agent's executor and parser.
func wipefsSays(t *testing.T, path string) []Signature {
	t.Helper()
	argv, err := WipefsArgv(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := hostexec.Local{}.Run(context.Background(), argv, nil)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := ParseWipefs(out)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

func probeSays(t *testing.T, path string) []Signature {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sigs, err := ProbeFile(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

// The in-process probe finds what the wipefs child finds, signature for signature, in the
// same order, on loop devices carrying real formats written by the real tools (and on their
// image files, which libblkid probes as well). As root; each case skips without its tool.
func TestProbeFileFindsWhatWipefsFinds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach loop devices")
	}
	tool(t, "wipefs", "util-linux")
	tool(t, "losetup", "mount")
	const size = 64 << 20
	zero := func(t *testing.T, dev string, off, n int64) {
		f, err := os.OpenFile(dev, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(make([]byte, n), off); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		tools  [][2]string // command, Debian package
		format func(t *testing.T, dev string)
		want   []string // the types both must find, in order
	}{
		{"empty", nil, func(*testing.T, string) {}, nil},
		{"ext4", [][2]string{{"mkfs.ext4", "e2fsprogs"}}, func(t *testing.T, dev string) {
			sh(t, "mkfs.ext4", "-q", "-F", dev)
		}, []string{"ext4"}},
		{"GPT with a partition", [][2]string{{"sgdisk", "gdisk"}}, func(t *testing.T, dev string) {
			sh(t, "sgdisk", "-o", "-n", "1:0:0", dev)
		}, []string{"gpt", "gpt", "PMBR"}},
		{"GPT without its protective MBR", [][2]string{{"sgdisk", "gdisk"}}, func(t *testing.T, dev string) {
			sh(t, "sgdisk", "-o", "-n", "1:0:0", dev)
			zero(t, dev, 0, 512)
		}, nil}, // whatever wipefs says: the point is that both say the same
		{"DOS table over ext4", [][2]string{{"mkfs.ext4", "e2fsprogs"}, {"sfdisk", "fdisk"}}, func(t *testing.T, dev string) {
			sh(t, "mkfs.ext4", "-q", "-F", dev)
			cmd := exec.Command("sfdisk", "--quiet", "--wipe", "never", dev)
			cmd.Stdin = strings.NewReader("label: dos\n,,L\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sfdisk: %v\n%s", err, out)
			}
		}, nil},
		{"LVM physical volume", [][2]string{{"pvcreate", "lvm2"}}, func(t *testing.T, dev string) {
			sh(t, "pvcreate", "-ff", "-y", dev)
		}, []string{"LVM2_member"}},
		{"swap", [][2]string{{"mkswap", "util-linux"}}, func(t *testing.T, dev string) {
			sh(t, "mkswap", dev)
		}, []string{"swap"}},
		{"ZFS labels full of uberblocks (hundreds of signatures)", nil, func(t *testing.T, dev string) {
			// No zpool here: the uberblock magic in every 1 KiB slot of each of the four
			// labels' rings, which is what libblkid looks for; wipefs lists each it finds.
			f, err := os.OpenFile(dev, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			magic := binary.LittleEndian.AppendUint64(nil, 0x00bab10c)
			for _, label := range []int64{0, 256 << 10, size - 512<<10, size - 256<<10} {
				for slot := range int64(128) {
					if _, err := f.WriteAt(magic, label+128<<10+slot<<10); err != nil {
						t.Fatal(err)
					}
				}
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range tc.tools {
				tool(t, c[0], c[1])
			}
			img := filepath.Join(t.TempDir(), "disk.img")
			if err := os.WriteFile(img, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(img, size); err != nil {
				t.Fatal(err)
			}
			dev := attach(t, img)
			tc.format(t, dev)
			sh(t, "sync")
			for _, path := range []string{dev, img} {
				child, inproc := wipefsSays(t, path), probeSays(t, path)
				if !reflect.DeepEqual(inproc, child) {
					t.Errorf("%s: in process %v, wipefs %v", path, inproc, child)
				}
				var types []string
				for _, s := range inproc {
					types = append(types, s.Type)
				}
				if tc.want != nil && !reflect.DeepEqual(types, tc.want) {
					t.Errorf("%s: found %q, want %q", path, types, tc.want)
				}
				if strings.HasPrefix(tc.name, "ZFS") && len(inproc) < 100 {
					t.Errorf("%s: %d signatures, want one per uberblock libblkid finds (hundreds)", path, len(inproc))
				}
				if tc.name == "empty" && len(inproc) != 0 {
					t.Errorf("%s: found %v on an empty device", path, inproc)
				}
				if len(inproc) > 8 {
					t.Logf("%s: %d signatures, the first %v", path, len(inproc), inproc[0])
				} else {
					t.Logf("%s: %v", path, inproc)
				}
			}
		})
	}
}

// A file libblkid cannot probe (a directory) is an error, never an empty list.
func TestProbeFileFailsOnWhatItCannotProbe(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if sigs, err := ProbeFile(f, dir); err == nil {
		t.Errorf("probing a directory: %v, want an error", sigs)
	}
}
