// Tests of the e2e guest scripts' pieces that run without a guest: hack/e2e/guest-cluster.sh's
// functions, run with bash and a fake ctr, the wiring between run.sh and the guest script, and
// hack/e2e/workdisk.sh (its cache key and checks; as root, with a forky guest built, the disk).
package e2e_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// function returns the shell function NAME from src (from "NAME() {" to the first "}" line).
func function(t *testing.T, src, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?ms)^` + name + `\(\) \{\n.*?^\}\n`).FindString(src)
	if m == "" {
		t.Fatalf("no function %s", name)
	}
	return m
}

// `ctr -n k8s.io images ls name==REF` as containerd 2.1 prints it (state/images.txt of a run).
const fakeCtr = `#!/bin/bash
echo "REF TYPE DIGEST SIZE PLATFORMS LABELS"
[[ $5 == name==prism.local/e2e/rook-ceph:v1 ]] &&
  echo "prism.local/e2e/rook-ceph:v1 application/vnd.oci.image.manifest.v1+json sha256:aaa 658.2 MiB linux/amd64 io.cri-containerd.image=managed"
exit 0
`

func TestHaveImageMatchesNameAndDigest(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ctr"), []byte(fakeCtr), 0o755); err != nil {
		t.Fatal(err)
	}
	fn := function(t, read(t, "guest-cluster.sh"), "have_image")
	for _, c := range []struct {
		name, images, file string
		want               bool
	}{
		{"same name and digest", "sleep.tar=prism.local/e2e/sleep:v1@sha256:bbb rook-ceph.tar=prism.local/e2e/rook-ceph:v1@sha256:aaa", "/mnt/host/images/rook-ceph.tar", true},
		{"another build of the image", "rook-ceph.tar=prism.local/e2e/rook-ceph:v1@sha256:ccc", "/mnt/host/images/rook-ceph.tar", false},
		{"not in containerd", "sleep.tar=prism.local/e2e/sleep:v1@sha256:bbb", "/mnt/host/images/sleep.tar", false},
		{"archive not described", "sleep.tar=prism.local/e2e/sleep:v1@sha256:bbb", "/mnt/host/images/rook-ceph.tar", false},
		{"nothing described", "", "/mnt/host/images/rook-ceph.tar", false},
	} {
		cmd := exec.Command("bash", "-c", fn+`have_image "$1"`, "bash", c.file)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "E2E_IMAGES="+c.images)
		err := cmd.Run()
		if got := err == nil; got != c.want {
			t.Errorf("%s: have_image = %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

// Rook v1.20.2's operator cannot save its mons without the csi.ceph.io CRDs (the second
// rook run): run.sh must write them into the guest and the guest apply them before the chart.
func TestRookStageInstallsCSICRDsBeforeTheChart(t *testing.T) {
	run := read(t, "run.sh")
	write := `go run ./hack/e2e/crds -group csi.ceph.io) <"$rookdir/csi-operator.yaml" >"$work/overlay/opt/e2e/csi-crds.yaml"`
	every := regexp.MustCompile(`(?s)\nif \[\[ \$stage != node \]\]; then\n[^\n]*\n(.*?)\nfi\n`).FindAllStringSubmatch(run, -1)
	written := false
	for _, m := range every {
		written = written || strings.Contains(m[1], write)
	}
	if !written {
		t.Error("run.sh does not write /opt/e2e/csi-crds.yaml for every stage with Rook's chart (if [[ $stage != node ]])")
	}
	chart := function(t, read(t, "guest-cluster.sh"), "rook_chart")
	apply := strings.Index(chart, "k apply --server-side -f /opt/e2e/csi-crds.yaml")
	helm := strings.Index(chart, "helm --kubeconfig")
	if apply < 0 || helm < 0 || apply > helm {
		t.Errorf("rook_chart applies the csi.ceph.io CRDs at %d, runs helm at %d: want the CRDs first", apply, helm)
	}
	// The apiserver under TCG times some of the creates out (two of five on 2026-11-26): retried.
	if !regexp.MustCompile(`for try in [0-9 ]+; do\n\s+k apply --server-side -f /opt/e2e/csi-crds.yaml`).MatchString(chart) {
		t.Error("rook_chart does not retry applying the csi.ceph.io CRDs")
	}
	if !strings.Contains(read(t, "rook-bins.sh"), "deploy/examples/csi-operator.yaml") {
		t.Error("rook-bins.sh does not take csi-operator.yaml from Rook's zip")
	}
}

// TestImageRefReadsBothIndexForms: run.sh names each archive's image by the index.json of the
// archive, which hack/e2e/ociarchive writes compact and hack/images (make images) indented; the
// indented one failed the first merged `run.sh prism` ("no image name or digest in index.json").
func TestImageRefReadsBothIndexForms(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	fn := function(t, read(t, "run.sh"), "image_ref")
	// Both recorded from real archives: sleep.tar of an e2e run, and make images' prism.oci.tar.
	compact := `{"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939","size":400,"annotations":{"io.containerd.image.name":"prism.local/e2e/sleep:v1","org.opencontainers.image.ref.name":"v1"},"platform":{"architecture":"amd64","os":"linux"}}],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}`
	indented := `{
   "schemaVersion": 2,
   "mediaType": "application/vnd.oci.image.index.v1+json",
   "manifests": [
      {
         "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "size": 565,
         "digest": "sha256:c8ed93f52d8b7ace010b9a75fc11345011af7ba966fd40f895f108fe537572e6",
         "annotations": {
            "io.containerd.image.name": "ghcr.io/prism-storage/prism:0.1.0",
            "org.opencontainers.image.ref.name": "ghcr.io/prism-storage/prism:0.1.0"
         },
         "artifactType": "application/vnd.oci.image.config.v1+json"
      }
   ]
}`
	for _, c := range []struct{ name, index, want string }{
		{"compact", compact, "prism.local/e2e/sleep:v1@sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939"},
		{"indented", indented, "ghcr.io/prism-storage/prism:0.1.0@sha256:c8ed93f52d8b7ace010b9a75fc11345011af7ba966fd40f895f108fe537572e6"},
		{"no name", `{"manifests":[{"digest":"sha256:aa"}]}`, ""},
	} {
		out, err := exec.Command("bash", "-c", fn+`image_ref "$1"`, "bash", c.index).Output()
		if got := strings.TrimSpace(string(out)); got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%s: image_ref = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// workdisk runs hack/e2e/workdisk.sh's function FN with ARGS (the script returns before its
// main part when sourced).
func workdisk(t *testing.T, fn string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command("bash", append([]string{"-c", `source ./workdisk.sh; ` + fn + ` "$@"`, "bash"}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}

// TestWorkdiskKeyIsTheGuestAndTheImages: the host-made work disk is reused only for the same
// guest build, size, script and images (by name and digest), whatever the archives' paths
// or order.
func TestWorkdiskKeyIsTheGuestAndTheImages(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	guest := "/c/guest/forky-327c56ade3220890"
	sleep := "prism.local/e2e/sleep:v1@sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939"
	rook := "prism.local/e2e/rook-ceph:v1.20.2-ceph-20.2.4@sha256:806a7c91189de9db7dc248e37b802a0a3e9c632ab39ace9ef481a240d422a065"
	key := func(args ...string) string {
		k, err := workdisk(t, "workdisk_key", args...)
		if err != nil || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(k) {
			t.Fatalf("workdisk_key %q = %q, %v; want 16 hex digits", args, k, err)
		}
		return k
	}
	base := key(guest, "64G", "s1", "/w1/share/images/sleep.tar="+sleep, "/w1/share/images/rook-ceph.tar="+rook)
	for _, c := range []struct {
		name string
		args []string
		same bool
	}{
		{"other paths, other order", []string{guest, "64G", "s1", "/w2/rook-ceph.tar=" + rook, "/w2/sleep.tar=" + sleep}, true},
		{"another guest build", []string{"/c/guest/forky-0000000000000000", "64G", "s1", "/w1/sleep.tar=" + sleep, "/w1/rook-ceph.tar=" + rook}, false},
		{"another size", []string{guest, "32G", "s1", "/w1/sleep.tar=" + sleep, "/w1/rook-ceph.tar=" + rook}, false},
		{"another script", []string{guest, "64G", "s2", "/w1/sleep.tar=" + sleep, "/w1/rook-ceph.tar=" + rook}, false},
		{"another build of an image", []string{guest, "64G", "s1", "/w1/sleep.tar=" + sleep, "/w1/rook-ceph.tar=" + strings.Replace(rook, "sha256:8", "sha256:9", 1)}, false},
		{"one image fewer", []string{guest, "64G", "s1", "/w1/sleep.tar=" + sleep}, false},
	} {
		if got := key(c.args...); (got == base) != c.same {
			t.Errorf("%s: key %s, first %s: want same=%v", c.name, got, base, c.same)
		}
	}
}

// TestWorkdiskChecksWhatContainerdLists: after importing, the script requires each image under
// its name with its manifest digest in `ctr images ls` (containerd 2.1.9's output, recorded).
func TestWorkdiskChecksWhatContainerdLists(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	listing := `REF                                           TYPE                                       DIGEST                                                                  SIZE      PLATFORMS   LABELS 
prism.local/e2e/rook-ceph:v1.20.2-ceph-20.2.4 application/vnd.oci.image.manifest.v1+json sha256:806a7c91189de9db7dc248e37b802a0a3e9c632ab39ace9ef481a240d422a065 658.2 MiB linux/amd64 -      
prism.local/e2e/sleep:v1                      application/vnd.oci.image.manifest.v1+json sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939 5.6 MiB   linux/amd64 -      `
	for _, c := range []struct {
		name, image, digest string
		want                bool
	}{
		{"listed", "prism.local/e2e/sleep:v1", "sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939", true},
		{"another digest", "prism.local/e2e/sleep:v1", "sha256:806a7c91189de9db7dc248e37b802a0a3e9c632ab39ace9ef481a240d422a065", false},
		{"a prefix of a name", "prism.local/e2e/sleep", "sha256:d6abb312dd7992cefac0037053ed5bc7dfa799be98cae18f7e49c6baad655939", false},
		{"the header", "REF", "DIGEST", false},
	} {
		_, err := workdisk(t, "in_containerd", listing, c.image, c.digest)
		if got := err == nil; got != c.want {
			t.Errorf("%s: in_containerd = %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

// TestRunMakesTheWorkDiskOnTheHost: without PRISM_E2E_WORKDISK, run.sh hands every archive with
// its NAME@DIGEST to workdisk.sh, boots on an overlay of the disk it prints, with the size the
// disk was made with, and tells the guest to keep its containerd (E2E_REUSE_WORK).
func TestRunMakesTheWorkDiskOnTheHost(t *testing.T) {
	run := read(t, "run.sh")
	for _, want := range []string{
		`archives+=("$f=$ref")`,
		`base=$("$here/workdisk.sh" "$guest" "$worksize" "${archives[@]}")`,
		`qemu-img create -q -f qcow2 -b "$base" -F qcow2 "$work/vm/disk-e2e-work.qcow2"`,
		`echo "E2E_REUSE_WORK=${base:+1}"`,
		`disks=(--disk "e2e-work:$worksize")`,
	} {
		if !strings.Contains(run, want) {
			t.Errorf("run.sh lacks %s", want)
		}
	}
	if strings.Index(run, `archives+=("$f=$ref")`) > strings.Index(run, `"$here/workdisk.sh"`) {
		t.Error("run.sh calls workdisk.sh before it has named every archive")
	}
	// The disk holds containerd's root at containerd/, where the guest binds /var/lib/containerd.
	if !strings.Contains(read(t, "workdisk.sh"), `root="$tmp/fs/containerd"`) ||
		!strings.Contains(read(t, "guest-cluster.sh"), `mount --bind "/var/lib/e2e/$d" "/var/lib/$d"`) {
		t.Error("workdisk.sh's containerd root and the guest's bind of /var/lib/e2e/containerd disagree")
	}
}

// forkyGuest is the newest forky guest hack/guest/build.sh has cached, or "".
func forkyGuest() string {
	root := os.Getenv("PRISM_GUEST_CACHE")
	if root == "" {
		home, _ := os.UserHomeDir()
		root = filepath.Join(home, ".cache/prism/guest")
	}
	oks, _ := filepath.Glob(filepath.Join(root, "forky-*/ok"))
	sort.Slice(oks, func(i, j int) bool {
		a, _ := os.Stat(oks[i])
		b, _ := os.Stat(oks[j])
		return a.ModTime().After(b.ModTime())
	})
	if len(oks) == 0 {
		return ""
	}
	return filepath.Dir(oks[0])
}

// archiveFiles reads NAMES from an OCI archive (tar).
func archiveFiles(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
}

// debugfsCat is FILE of the ext4 file system in the raw image DISK, read with debugfs.
func debugfsCat(t *testing.T, disk, file string) []byte {
	t.Helper()
	out, err := exec.Command("debugfs", "-R", "cat "+file, disk).Output()
	if err != nil {
		t.Fatalf("debugfs cat %s: %v", file, err)
	}
	return out
}

// TestWorkdiskImportsWithTheGuestsContainerd (root, a cached forky guest): the disk
// workdisk.sh makes holds, under containerd/, the archive's manifest in containerd's content
// store and its file unpacked in an overlayfs snapshot, as the guest's import would leave
// them; a second call with the same images reuses the disk.
func TestWorkdiskImportsWithTheGuestsContainerd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (containerd mounts its snapshots)")
	}
	guest := forkyGuest()
	if guest == "" {
		t.Skip("no forky guest built (PRISM_GUEST_SUITE=forky hack/guest/build.sh)")
	}
	for _, tool := range []string{"qemu-img", "debugfs", "unshare", "cpio", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (hack/install-deps.sh guest)", tool)
		}
	}
	dir := t.TempDir()
	ociarchive := filepath.Join(dir, "ociarchive")
	if out, err := exec.Command("go", "build", "-o", ociarchive, "./ociarchive").CombinedOutput(); err != nil {
		t.Fatalf("go build ociarchive: %v\n%s", err, out)
	}
	hello := []byte("made on the host\n")
	if err := os.WriteFile(filepath.Join(dir, "hello"), hello, 0o644); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "hello.tar")
	name := "prism.local/e2e/workdisk-test:v1"
	if out, err := exec.Command(ociarchive, "-o", archive, "-name", name, "-file", filepath.Join(dir, "hello")+":/hello:0644").CombinedOutput(); err != nil {
		t.Fatalf("ociarchive: %v\n%s", err, out)
	}
	files := archiveFiles(t, archive)
	var index struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v, %d manifests", err, len(index.Manifests))
	}
	digest := index.Manifests[0].Digest
	cache := filepath.Join(dir, "cache")
	make := func() (string, string) {
		cmd := exec.Command("./workdisk.sh", guest, "64M", archive+"="+name+"@"+digest)
		cmd.Env = append(os.Environ(), "PRISM_CACHE_DIR="+cache)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("workdisk.sh: %v\n%s", err, stderr.String())
		}
		return strings.TrimSpace(string(out)), stderr.String()
	}
	disk, _ := make()
	if filepath.Dir(disk) != filepath.Join(cache, "e2e/workdisk") || filepath.Ext(disk) != ".qcow2" {
		t.Fatalf("workdisk.sh printed %q, want a .qcow2 in %s/e2e/workdisk", disk, cache)
	}
	raw := filepath.Join(dir, "disk.raw")
	if out, err := exec.Command("qemu-img", "convert", "-O", "raw", disk, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v\n%s", err, out)
	}
	hex := strings.TrimPrefix(digest, "sha256:")
	if got, want := debugfsCat(t, raw, "/containerd/io.containerd.content.v1.content/blobs/sha256/"+hex), files["blobs/sha256/"+hex]; !bytes.Equal(got, want) || len(want) == 0 {
		t.Errorf("the disk's content store has manifest %q, the archive %q", got, want)
	}
	if got := debugfsCat(t, raw, "/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/1/fs/hello"); !bytes.Equal(got, hello) {
		t.Errorf("the disk's first overlayfs snapshot has /hello = %q, want %q (unpacked)", got, hello)
	}
	again, stderr := make()
	if again != disk || !strings.Contains(stderr, "cached") {
		t.Errorf("second call: %q (%s), want the cached %q", again, strings.TrimSpace(stderr), disk)
	}
}

// TestNvmetRemoveDrive: hack/guest/nvmet-loop.sh --remove SERIAL (the replace-data-disk
// drill's dead drive) disables the drive's namespace before removing it from its own
// subsystem, deletes a sparse file behind it, and touches no other drive: not another
// subsystem, never a disk behind a namespace. Against a configfs tree of plain directories,
// where rmdir is a function that records what it removed and the namespace's enable then.
func TestNvmetRemoveDrive(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	src := read(t, "../guest/nvmet-loop.sh")
	fns := function(t, src, "nqn_of") + function(t, src, "remove_drive")
	for _, c := range []struct {
		name, serial string
		backing      string // the removed drive's device_path; "sparse" for a file in sparse_dir
		wantErr      string
		wantRemoved  bool // the backing file is deleted
	}{
		{"a drive over a sparse file", "PRISM-E2E-QLC3", "sparse", "", true},
		{"a drive over a disk", "PRISM-E2E-QLC3", "/dev/nvme0n3", "", false},
		{"no such drive", "PRISM-E2E-QLC9", "sparse", "no namespace for serial PRISM-E2E-QLC9", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, sparse := filepath.Join(dir, "nvmet"), filepath.Join(dir, "sparse")
			files := map[string]string{}
			for _, d := range []struct{ serial, backing string }{{"PRISM-E2E-QLC3", c.backing}, {"PRISM-E2E-QLC", "sparse"}} {
				backing := d.backing
				if backing == "sparse" {
					backing = filepath.Join(sparse, d.serial+".img")
					files[d.serial] = backing
				}
				ns := filepath.Join(cfg, "subsystems", "nqn.2024-01.io.prism-storage:guest-"+strings.ToLower(d.serial), "namespaces", "1")
				for name, body := range map[string]string{filepath.Join(ns, "enable"): "1\n", filepath.Join(ns, "device_path"): backing + "\n", backing: "x"} {
					if strings.HasPrefix(name, "/dev/") {
						continue
					}
					if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			script := fns + `rmdir() { echo "rmdir $1 enable=$(cat "$1/enable")"; rm -r "$1"; }
cfg=$1 sparse_dir=$2
remove_drive "$3"`
			var stderr bytes.Buffer
			cmd := exec.Command("bash", "-c", script, "bash", cfg, sparse, c.serial)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(stderr.String(), c.wantErr) {
					t.Fatalf("remove_drive %s: %v, stderr %q; want an error %q", c.serial, err, stderr.String(), c.wantErr)
				}
			} else if err != nil {
				t.Fatalf("remove_drive %s: %v\n%s", c.serial, err, stderr.String())
			}
			ns := filepath.Join(cfg, "subsystems", "nqn.2024-01.io.prism-storage:guest-prism-e2e-qlc3", "namespaces", "1")
			if want := "rmdir " + ns + " enable=0"; c.wantErr == "" && !strings.Contains(string(out), want) {
				t.Errorf("output %q, want %q: the namespace disabled, then removed", out, want)
			}
			if _, err := os.Stat(ns); (err == nil) != (c.wantErr != "") {
				t.Errorf("namespace %s after the removal: %v", ns, err)
			}
			if _, err := os.Stat(files["PRISM-E2E-QLC3"]); c.backing == "sparse" && (err == nil) == c.wantRemoved {
				t.Errorf("the removed drive's sparse file: %v, want deleted %v", err, c.wantRemoved)
			}
			other := filepath.Join(cfg, "subsystems", "nqn.2024-01.io.prism-storage:guest-prism-e2e-qlc", "namespaces", "1")
			if b, err := os.ReadFile(filepath.Join(other, "enable")); err != nil || string(b) != "1\n" {
				t.Errorf("the other drive's namespace: enable %q, %v; want it untouched", b, err)
			}
			if _, err := os.Stat(files["PRISM-E2E-QLC"]); err != nil {
				t.Errorf("the other drive's sparse file: %v", err)
			}
		})
	}
}

// TestDrillsOnlyWhenAsked: the failure drills reach the suite only with PRISM_E2E_DRILLS=1 in
// the chain stage: run.sh refuses them elsewhere and writes E2E_DRILLS for the guest, whose
// drill_env then gives the suite its settings and suite_timeout 190 min; without it the suite
// gets no drill setting and its 100 min, as before.
func TestDrillsOnlyWhenAsked(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	src := read(t, "guest-cluster.sh")
	fns := function(t, src, "drill_env") + function(t, src, "suite_timeout")
	for _, c := range []struct {
		stage, drills string
		wantEnv       []string
		wantTimeout   string
	}{
		{"chain", "", nil, "100m"},
		{"chain", "0", nil, "100m"},
		{"prism", "1", nil, "100m"},
		{"chain", "1", []string{
			"PRISM_E2E_DRILLS=1",
			"PRISM_E2E_DRILL_ADD=prism-nvmet-loop /etc/prism-e2e-nvmet-drill-add.txt",
			"PRISM_E2E_DRILL_REPLACE=prism-nvmet-loop /etc/prism-e2e-nvmet-drill-new.txt",
			"PRISM_E2E_DRILL_FAIL=prism-nvmet-loop --remove",
			"PRISM_E2E_RUNBOOKS=/opt/e2e/runbooks",
		}, "190m"},
	} {
		cmd := exec.Command("bash", "-c", fns+`drill_env; echo "timeout $(suite_timeout)"`)
		cmd.Env = append(os.Environ(), "E2E_STAGE="+c.stage, "E2E_DRILLS="+c.drills)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s, E2E_DRILLS=%q: %v", c.stage, c.drills, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		env, timeout := lines[:len(lines)-1], lines[len(lines)-1]
		if strings.Join(env, "\n") != strings.Join(c.wantEnv, "\n") || timeout != "timeout "+c.wantTimeout {
			t.Errorf("%s, E2E_DRILLS=%q: env %q, %s; want %q, timeout %s", c.stage, c.drills, env, timeout, c.wantEnv, c.wantTimeout)
		}
	}
	// The files drill_env names are the ones run.sh writes into the guest's overlay.
	run := read(t, "run.sh")
	for _, want := range []string{
		`>"$work/overlay/etc/prism-e2e-nvmet-drill-add.txt"`,
		`>"$work/overlay/etc/prism-e2e-nvmet-drill-new.txt"`,
		`cp -r "$repo/docs/runbooks" "$work/overlay/opt/e2e/runbooks"`,
		`echo "E2E_DRILLS=$drills"`,
		`[[ -z $drills || ($drills == 1 && $stage == chain) ]] || {`,
	} {
		if !strings.Contains(run, want) {
			t.Errorf("run.sh lacks %s", want)
		}
	}
	if stage := function(t, src, "prism_stage"); !strings.Contains(stage, `done < <(drill_env)`) {
		t.Error("prism_stage does not read drill_env")
	}
	if run := function(t, src, "run_suite"); !strings.Contains(run, `timeout=$(suite_timeout)`) ||
		!strings.Contains(run, `-test.timeout "$timeout" -ginkgo.timeout "$timeout"`) {
		t.Error("run_suite does not give the suite suite_timeout's limit")
	}
	// The suite reads each setting drill_env gives.
	suite := read(t, "../../test/e2e/e2e_suite_test.go")
	for _, name := range []string{"PRISM_E2E_DRILLS", "PRISM_E2E_DRILL_ADD", "PRISM_E2E_DRILL_REPLACE", "PRISM_E2E_DRILL_FAIL", "PRISM_E2E_RUNBOOKS"} {
		if !strings.Contains(suite, `"`+name+`"`) {
			t.Errorf("test/e2e does not read %s", name)
		}
	}
}

// TestUpgradeDrillWiring: PRISM_E2E_UPGRADE_FROM reaches the guest (run.sh's env file), whose
// upgrade_drill hands the suite every variable test/e2e/upgrade_test.go reads and runs that
// container alone; without it the suite's arguments are as before.
func TestUpgradeDrillWiring(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	run := read(t, "run.sh")
	for _, v := range []string{"E2E_UPGRADE_FROM", "E2E_UPGRADE_IMAGE", "E2E_UPGRADE_VERSION", "E2E_VERSION"} {
		if !strings.Contains(run, `echo "`+v+`=`) {
			t.Errorf("run.sh does not write %s into the guest's env file", v)
		}
	}
	if !strings.Contains(run, `"$work/overlay/opt/e2e/prism-previous"`) {
		t.Error("run.sh does not put the previous chart at /opt/e2e/prism-previous")
	}
	fn := function(t, read(t, "guest-cluster.sh"), "upgrade_drill")
	show := `mark() { :; }; suite_env=(X=1) suite_args=(); upgrade_drill; printf '%s\n' "${suite_env[@]}" "${suite_args[@]}"`
	drill := func(env ...string) []string {
		cmd := exec.Command("bash", "-c", fn+show)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(out))
	}
	if got := drill(); len(got) != 1 || got[0] != "X=1" {
		t.Errorf("without E2E_UPGRADE_FROM: suite env and args %v, want only X=1", got)
	}
	got := strings.Join(drill("E2E_UPGRADE_FROM=bfde010", "E2E_UPGRADE_IMAGE=prism.local/e2e/prism:v0.1.0",
		"E2E_UPGRADE_VERSION=v0.1.0", "E2E_VERSION=v0.2.0"), " ")
	if !strings.Contains(got, "-ginkgo.label-filter=upgrade") {
		t.Errorf("with E2E_UPGRADE_FROM: %s: no -ginkgo.label-filter=upgrade", got)
	}
	spec := read(t, "../../test/e2e/upgrade_test.go")
	names := regexp.MustCompile(`os\.Getenv\("(PRISM_E2E_[A-Z_]+)"\)`).FindAllStringSubmatch(spec, -1)
	if len(names) < 5 {
		t.Fatalf("upgrade_test.go reads %d variables; want its upgradeSettings' five", len(names))
	}
	for _, n := range names {
		if !regexp.MustCompile(`(^| )` + n[1] + `=[^ ]+`).MatchString(got) {
			t.Errorf("upgrade_drill does not set %s (test/e2e/upgrade_test.go reads it): %s", n[1], got)
		}
	}
}

// TestRebootSecondBootReversesTheDisks: the reboot drill's second boot gives QEMU the same
// disks with each --disk pair kept and the pairs in the reverse order, so the kernel names the
// drives otherwise (run.sh PRISM_E2E_REBOOT).
func TestRebootSecondBootReversesTheDisks(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	loop := regexp.MustCompile(`(?m)^  for \(\(i = \$\{#disks\[@\]\} - 1; .*$`).FindString(read(t, "run.sh"))
	if loop == "" {
		t.Fatal("run.sh: no loop reversing the disks for the second boot")
	}
	script := `disks=(--disk e2e-work:64G --disk e2e-fast:1 --disk e2e-qlc:2); reversed=()` + "\n" + loop + "\n" + `echo "${reversed[*]}"`
	out, err := exec.Command("bash", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "--disk e2e-qlc:2 --disk e2e-fast:1 --disk e2e-work:64G"; got != want {
		t.Errorf("reversed disks %q, want %q", got, want)
	}
}

// TestChildrenListsADaemonsProcesses: reboot_shutdown stops each daemon's restart loop and the
// daemon under it, found by parent pid (guest-cluster.sh children).
func TestChildrenListsADaemonsProcesses(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	fn := function(t, read(t, "guest-cluster.sh"), "children")
	script := fn + `(sleep 30 & sleep 30 & wait) & loop=$!; sleep 0.5; children $loop | wc -l; kill $(children $loop) $loop`
	out, err := exec.Command("bash", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "2" {
		t.Errorf("children of a subshell with two sleeps: %s lines, want 2", got)
	}
}

// TestLingerWaitsForARunningScript: a script of cmd/ that the stage's watcher started keeps
// the cluster up past the linger's time; linger once ended under a write count that the
// watcher was running, and the guest powered off.
func TestLingerWaitsForARunningScript(t *testing.T) {
	log, got := runWatcherThenLinger(t, map[string]string{"bench": "7"}, 1)
	_, end := scriptSpan(t, log, "bench", got)
	var over int
	if _, err := fmt.Sscanf(lineWith(got, "linger over"), "%d", &over); err != nil || over < end {
		t.Errorf("linger was over at %d, before the watcher's script ended at %d (%v):\n%s", over, end, err, got)
	}
}

// TestLingerRunsScriptsOneAtATime: once linger begins, the stage's watcher starts no further
// script, and linger starts none before the watcher's ends. Two at once let a recording's
// destroy and purge run beside the write count's setup (2026-12-07).
func TestLingerRunsScriptsOneAtATime(t *testing.T) {
	log, got := runWatcherThenLinger(t, map[string]string{"a": "3", "b": "1"}, 2)
	aStart, aEnd := scriptSpan(t, log, "a", got)
	bStart, bEnd := scriptSpan(t, log, "b", got)
	if bStart < aEnd && aStart < bEnd {
		t.Errorf("scripts ran at once: a %d-%d, b %d-%d:\n%s\n%s", aStart, aEnd, bStart, bEnd, log, got)
	}
	if !strings.Contains(got, "lingering up to") || !strings.Contains(got, "by hand: cmd/b.sh exit 0") {
		t.Errorf("linger did not run the second script itself:\n%s", got)
	}
}

// runWatcherThenLinger runs guest-cluster.sh's live_cmds (polling every second) with the
// given scripts (name: seconds each runs) in cmd/, then linger (E2E_LINGER=linger) 1.5 s
// later, as the stage's end does. It returns the scripts' log and the marks.
func runWatcherThenLinger(t *testing.T, scripts map[string]string, linger int) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	src := read(t, "guest-cluster.sh")
	dir := t.TempDir()
	out, cmdDir, logFile := filepath.Join(dir, "out"), filepath.Join(dir, "cmd"), filepath.Join(dir, "log")
	if err := os.MkdirAll(cmdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, secs := range scripts {
		body := fmt.Sprintf("echo \"%s start $(date +%%s%%N)\" >>%s; sleep %s; echo \"%s end $(date +%%s%%N)\" >>%s\n",
			name, logFile, secs, name, logFile)
		if err := os.WriteFile(filepath.Join(cmdDir, name+".sh"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	funcs := function(t, src, "run_cmds") + function(t, src, "live_cmds") +
		function(t, src, "linger") + function(t, src, "watcher_running")
	for old, repl := range map[string]string{"/mnt/host/cmd": cmdDir, "while sleep 10; do": "while sleep 1; do"} {
		if !strings.Contains(funcs, old) {
			t.Fatalf("guest-cluster.sh's watcher and linger no longer contain %q", old)
		}
		funcs = strings.ReplaceAll(funcs, old, repl)
	}
	script := funcs + `mark() { echo "$(date +%s%N) $*"; }
live_cmds &
watcher_pid=$!
sleep 1.5
linger
if kill -0 $watcher_pid 2>/dev/null; then echo "watcher still running after linger"; kill $watcher_pid; fi
`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = append(os.Environ(), fmt.Sprintf("E2E_LINGER=%d", linger), "out="+out)
	cmd.WaitDelay = 5 * time.Second
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("watcher and linger: %v\n%s", err, got)
	}
	if strings.Contains(string(got), "watcher still running") {
		t.Errorf("the stage's watcher ran on after linger:\n%s", got)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("no script ran: %v\n%s", err, got)
	}
	return string(log), string(got)
}

// scriptSpan: when script NAME started and ended (ms), from its log lines.
func scriptSpan(t *testing.T, log, name, marks string) (int, int) {
	t.Helper()
	var start, end int
	for _, l := range strings.Split(log, "\n") {
		var n, what string
		var ns int64
		if _, err := fmt.Sscanf(l, "%s %s %d", &n, &what, &ns); err != nil || n != name {
			continue
		}
		switch what {
		case "start":
			start = int(ns / 1e6)
		case "end":
			end = int(ns / 1e6)
		}
	}
	if start == 0 || end == 0 {
		t.Fatalf("script %s did not run to its end:\n%s\n%s", name, log, marks)
	}
	return start, end
}

// lineWith: the first line of s containing sub, with its mark time in ms first.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			var ns int64
			if _, err := fmt.Sscanf(l, "%d", &ns); err == nil {
				return fmt.Sprint(ns/1e6) + l[strings.Index(l, " "):]
			}
		}
	}
	return ""
}
