package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// prometheusKey runs prometheus-image.sh's image_key in a copy of the script whose locks are
// prometheusLock and imagesLock (hack/e2e/prometheus.lock, hack/images/packages.lock).
func prometheusKey(t *testing.T, prometheusLock, imagesLock string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{
		"hack/e2e/prometheus-image.sh": read(t, "prometheus-image.sh"),
		"hack/e2e/prometheus.lock":     prometheusLock,
		"hack/images/packages.lock":    imagesLock,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("bash", "-c", `source "$1"; image_key s1`, "bash", filepath.Join(root, "hack/e2e/prometheus-image.sh")).Output()
	k := strings.TrimSpace(string(out))
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(k) {
		t.Fatalf("image_key = %q, %v; want 16 hex digits", k, err)
	}
	return k
}

// TestPrometheusImageKeyFollowsThePins: the cached archive is rebuilt when the prometheus pin or
// the amd64 libc6 pin changes, and only then (another package of Prism's image does not count).
func TestPrometheusImageKeyFollowsThePins(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	prom := "# comment\nprometheus 2.42.0+ds-5+deb12u1 amd64 19257088 81d5\n"
	images := "libc6 2.36-9+deb12u14 amd64 2759320 ba4f\nlibc6 2.36-9+deb12u14 arm64 2 cc\nutil-linux 2.38 amd64 1 aa\n"
	base := prometheusKey(t, prom, images)
	for _, c := range []struct {
		name         string
		prom, images string
		same         bool
	}{
		{"another comment", "# other\n" + prom, images, true},
		{"another package of Prism's image", prom, strings.Replace(images, "util-linux 2.38", "util-linux 2.39", 1), true},
		{"libc6 for arm64", prom, strings.Replace(images, "arm64 2 cc", "arm64 3 dd", 1), true},
		{"another prometheus", strings.Replace(prom, "deb12u1", "deb12u2", 1), images, false},
		{"another amd64 libc6", prom, strings.Replace(images, "deb12u14 amd64", "deb12u15 amd64", 1), false},
	} {
		if got := prometheusKey(t, c.prom, c.images); (got == base) != c.same {
			t.Errorf("%s: key %s, first %s: want same=%v", c.name, got, base, c.same)
		}
	}
}

// TestPrometheusImageWiring: run.sh puts the archive in the share before it names the archives
// for the work disk (so the disk's key and containerd hold it), and the guest tells the suite
// the image name the script writes.
func TestPrometheusImageWiring(t *testing.T) {
	script := read(t, "prometheus-image.sh")
	m := regexp.MustCompile(`(?m)^image=(\S+)$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("prometheus-image.sh names no image=")
	}
	if want := "PRISM_E2E_PROMETHEUS_IMAGE=" + m[1]; !strings.Contains(read(t, "guest-cluster.sh"), want) {
		t.Errorf("guest-cluster.sh lacks %s", want)
	}
	run := read(t, "run.sh")
	put := strings.Index(run, `"$share/images/prometheus.tar"`)
	if put < 0 || put > strings.Index(run, `archives+=("$f=$ref")`) {
		t.Error("run.sh does not put prometheus.tar in the share before it names the archives")
	}
}

// TestPrometheusImageRuns (root, the pinned .deb already in hack/images' pool): the archive holds
// one layer whose root runs Debian's prometheus --version with nothing from this host.
func TestPrometheusImageRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (chroot)")
	}
	pool := os.Getenv("PRISM_IMAGES_CACHE")
	if pool == "" {
		home, _ := os.UserHomeDir()
		pool = filepath.Join(home, ".cache/prism/images")
	}
	debs, _ := filepath.Glob(filepath.Join(pool, "debs", "prometheus_*.deb"))
	if len(debs) == 0 {
		t.Skip("no prometheus .deb in " + pool + "/debs (hack/e2e/prometheus-image.sh downloads it)")
	}
	dir := t.TempDir()
	oci := filepath.Join(dir, "ociarchive")
	if out, err := exec.Command("go", "build", "-o", oci, "./ociarchive").CombinedOutput(); err != nil {
		t.Fatalf("go build ociarchive: %v\n%s", err, out)
	}
	cmd := exec.Command("./prometheus-image.sh", oci)
	cmd.Env = append(os.Environ(), "PRISM_CACHE_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("prometheus-image.sh: %v", err)
	}
	files := archiveFiles(t, strings.TrimSpace(string(out)))
	var index struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json %s: %v", files["index.json"], err)
	}
	if name := index.Manifests[0].Annotations["io.containerd.image.name"]; !strings.HasPrefix(name, "prism.local/e2e/prometheus:") {
		t.Errorf("image name %q", name)
	}
	var manifest struct {
		Layers []struct{ Digest string } `json:"layers"`
	}
	if err := json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(index.Manifests[0].Digest, "sha256:")], &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v, %d layers", err, len(manifest.Layers))
	}
	layer := filepath.Join(dir, "layer.tar")
	if err := os.WriteFile(layer, files["blobs/sha256/"+strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")], 0o644); err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-C", rootfs, "-xf", layer).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	ver, err := exec.Command("chroot", "--userspec=65534:65534", rootfs, "/bin/prometheus", "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(ver), "prometheus, version 2.42.0+ds") {
		t.Fatalf("prometheus --version in the image's root: %v\n%s", err, ver)
	}
}
