// Tests of the e2e guest scripts' pieces that run without a guest: hack/e2e/guest-cluster.sh's
// functions, run with bash and a fake ctr, and the wiring between run.sh and the guest script.
package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
