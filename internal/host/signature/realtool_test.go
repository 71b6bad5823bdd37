//go:build linux

package signature

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// These tests format image files with the real tools and use blkid as the
// oracle: the names Detect reports must equal blkid's TYPE/PTTYPE. Each test
// skips, naming the Debian package, when its tool is missing.

var debPkg = map[string]string{
	"blkid": "util-linux", "mkswap": "util-linux", "losetup": "mount",
	"mkfs.ext2": "e2fsprogs", "mkfs.ext3": "e2fsprogs", "mkfs.ext4": "e2fsprogs",
	"mkfs.xfs": "xfsprogs", "mkfs.btrfs": "btrfs-progs", "mkfs.vfat": "dosfstools",
	"sgdisk": "gdisk", "sfdisk": "fdisk", "cryptsetup": "cryptsetup-bin",
	"pvcreate": "lvm2", "mdadm": "mdadm",
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append(tools, "blkid") {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package %s)", tool, debPkg[tool])
		}
	}
}

func image(t *testing.T, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil { // sparse: costs no disk space
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, stdin string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "LVM_SUPPRESS_FD_WARNINGS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// blkidNames returns blkid's low-level probe result: TYPE and PTTYPE values.
func blkidNames(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-o", "export", path).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		return nil // blkid found nothing
	} else if err != nil {
		t.Fatalf("blkid -p %s: %v", path, err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		if k == "TYPE" || k == "PTTYPE" {
			names = append(names, v)
		}
	}
	sort.Strings(names)
	return names
}

func detectNames(t *testing.T, path string) ([]string, []Signature) {
	t.Helper()
	sigs, err := DetectPath(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range sigs {
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	sort.Strings(names)
	return names, sigs
}

func agree(t *testing.T, path string, want ...string) {
	t.Helper()
	oracle := blkidNames(t, path)
	got, sigs := detectNames(t, path)
	if fmt.Sprint(got) != fmt.Sprint(oracle) {
		t.Errorf("Detect %v (%v) disagrees with blkid %v", got, sigs, oracle)
	}
	if fmt.Sprint(oracle) != fmt.Sprint(want) {
		t.Errorf("blkid reported %v, test expected %v", oracle, want)
	}
}

func TestRealTools(t *testing.T) {
	const m = 1 << 20
	tests := []struct {
		name  string
		tools []string
		size  int64
		make  func(t *testing.T, img string)
		want  []string
	}{
		{"ext2", []string{"mkfs.ext2"}, 32 * m, func(t *testing.T, p string) { run(t, "", "mkfs.ext2", "-F", "-q", p) }, []string{"ext2"}},
		{"ext3", []string{"mkfs.ext3"}, 32 * m, func(t *testing.T, p string) { run(t, "", "mkfs.ext3", "-F", "-q", p) }, []string{"ext3"}},
		{"ext4", []string{"mkfs.ext4"}, 32 * m, func(t *testing.T, p string) { run(t, "", "mkfs.ext4", "-F", "-q", p) }, []string{"ext4"}},
		{"xfs", []string{"mkfs.xfs"}, 320 * m, func(t *testing.T, p string) { run(t, "", "mkfs.xfs", "-f", "-q", p) }, []string{"xfs"}},
		{"btrfs", []string{"mkfs.btrfs"}, 256 * m, func(t *testing.T, p string) { run(t, "", "mkfs.btrfs", "-f", "-q", p) }, []string{"btrfs"}},
		{"vfat fat16", []string{"mkfs.vfat"}, 32 * m, func(t *testing.T, p string) { run(t, "", "mkfs.vfat", p) }, []string{"vfat"}},
		{"vfat fat32", []string{"mkfs.vfat"}, 64 * m, func(t *testing.T, p string) { run(t, "", "mkfs.vfat", "-F", "32", p) }, []string{"vfat"}},
		{"swap", []string{"mkswap"}, 16 * m, func(t *testing.T, p string) { run(t, "", "mkswap", p) }, []string{"swap"}},
		{"gpt empty", []string{"sgdisk"}, 16 * m, func(t *testing.T, p string) { run(t, "", "sgdisk", "-o", p) }, []string{"gpt"}},
		{"gpt with partition", []string{"sgdisk"}, 16 * m, func(t *testing.T, p string) { run(t, "", "sgdisk", "-o", "-n", "1:0:0", p) }, []string{"gpt"}},
		{"dos empty", []string{"sfdisk"}, 16 * m, func(t *testing.T, p string) { run(t, "label: dos\n", "sfdisk", "-q", p) }, []string{"dos"}},
		{"dos with partition", []string{"sfdisk"}, 16 * m, func(t *testing.T, p string) { run(t, "label: dos\n,\n", "sfdisk", "-q", p) }, []string{"dos"}},
		{"luks1", []string{"cryptsetup"}, 32 * m, luksFormat("luks1"), []string{"crypto_LUKS"}},
		{"luks2", []string{"cryptsetup"}, 32 * m, luksFormat("luks2"), []string{"crypto_LUKS"}},
		{"zeros", nil, 16 * m, func(*testing.T, string) {}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need(t, tt.tools...)
			img := image(t, tt.size)
			tt.make(t, img)
			agree(t, img, tt.want...)
		})
	}
}

func luksFormat(typ string) func(*testing.T, string) {
	return func(t *testing.T, img string) {
		key := filepath.Join(t.TempDir(), "key")
		os.WriteFile(key, []byte("test key"), 0o600)
		// pbkdf2 with few iterations keeps the test fast; strength is irrelevant here.
		run(t, "", "cryptsetup", "luksFormat", "--batch-mode", "--type", typ,
			"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", key, img)
	}
}

// loop attaches img to a loop device for tools that refuse plain files.
func loop(t *testing.T, img string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to attach a loop device")
	}
	need(t, "losetup")
	out, err := exec.Command("losetup", "--find", "--show", img).Output()
	if err != nil {
		t.Skipf("no loop device available: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	return dev
}

func TestRealToolLVM(t *testing.T) {
	need(t, "pvcreate")
	img := image(t, 64<<20)
	dev := loop(t, img)
	run(t, "", "pvcreate", "-ff", "-y", dev)
	agree(t, dev, "LVM2_member")
	agree(t, img, "LVM2_member")
}

func TestRealToolMD(t *testing.T) {
	need(t, "mdadm")
	if _, err := os.Stat("/proc/mdstat"); err != nil {
		t.Skip("md driver not available (/proc/mdstat missing): mdadm --create cannot run here")
	}
	for _, meta := range []string{"1.2", "1.0", "0.90"} {
		t.Run(meta, func(t *testing.T) {
			a, b := image(t, 64<<20), image(t, 64<<20)
			da, db := loop(t, a), loop(t, b)
			md := "/dev/md/prism-sigtest"
			run(t, "y\n", "mdadm", "--create", md, "--run", "--metadata="+meta, "--level=1", "--raid-devices=2", da, db)
			run(t, "", "mdadm", "--stop", md)
			agree(t, a, "linux_raid_member")
		})
	}
}

// A disk whose first MiB was zeroed still carries its backup GPT header in
// the last LBA. blkid -p gives up without the protective MBR; Detect must
// not, because the partitions' data is still there.
func TestRealToolGPTBackupAfterWipe(t *testing.T) {
	need(t, "sgdisk")
	const size = 16 << 20
	img := image(t, size)
	run(t, "", "sgdisk", "-o", "-n", "1:0:0", img)
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 1<<20), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sigs, err := DetectPath(img)
	if err != nil {
		t.Fatal(err)
	}
	want := []Signature{{PartitionTable, "gpt", size - 512}}
	if fmt.Sprint(sigs) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", sigs, want)
	}
}
