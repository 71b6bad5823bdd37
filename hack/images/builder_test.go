package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildDeb makes a real .deb with dpkg-deb --build: files maps paths to contents ("->target"
// makes a symlink), every file owned by root.
func buildDeb(t *testing.T, dir, name string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(dir, name+"-root")
	if err := os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755); err != nil {
		t.Fatal(err)
	}
	control := "Package: " + name + "\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: Prism <prism@example.invalid>\nDescription: test package " + name + "\n"
	if err := os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(control), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	deb := filepath.Join(dir, name+".deb")
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, deb).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb --build: %v\n%s", err, out)
	}
	return deb
}

func twoDebs(t *testing.T, dir string) []string {
	return []string{
		buildDeb(t, dir, "tool", map[string]string{
			"usr/sbin/tool":                     "#!tool\n",
			"sbin/tool-alias":                   "->../usr/sbin/tool",
			"usr/share/doc/tool/copyright":      "license\n",
			"usr/share/doc/tool/changelog.gz":   "history\n",
			"usr/share/man/man8/tool.8.gz":      "manual\n",
			"usr/share/locale/de/LC_MESSAGES/x": "übersetzt\n",
		}),
		buildDeb(t, dir, "libtool1", map[string]string{
			"usr/lib/x86_64-linux-gnu/libtool.so.1": "ELF-ish\n",
			"usr/share/doc/libtool1/copyright":      "license\n",
		}),
	}
}

func TestRootFSIsTheUnionOfThePackagesWithoutDocs(t *testing.T) {
	dir := t.TempDir()
	r := NewRootFS()
	for _, d := range twoDebs(t, dir) {
		if err := r.AddDeb(d); err != nil {
			t.Fatal(err)
		}
	}
	r.Finish(time.Unix(0, 0))
	have := map[string]bool{}
	for _, n := range r.Names() {
		have[n] = true
	}
	for _, want := range []string{
		"usr/", "usr/sbin/", "usr/sbin/tool", "sbin/tool-alias", "usr/lib/x86_64-linux-gnu/libtool.so.1",
		"usr/share/doc/tool/copyright", "usr/share/doc/libtool1/copyright",
		"tmp/", "root/", "etc/passwd", "etc/group", "var/lib/dpkg/status",
	} {
		if !have[want] {
			t.Errorf("%s missing from the root", want)
		}
	}
	for _, gone := range []string{"usr/share/doc/tool/changelog.gz", "usr/share/man/man8/tool.8.gz", "usr/share/locale/de/LC_MESSAGES/x"} {
		if have[gone] {
			t.Errorf("%s should have been dropped", gone)
		}
	}
	if e := r.entries["sbin/tool-alias"]; e.hdr.Typeflag != tar.TypeSymlink || e.hdr.Linkname != "../usr/sbin/tool" {
		t.Errorf("sbin/tool-alias: %+v, want a symlink to ../usr/sbin/tool", e.hdr)
	}
	if e := r.entries["tmp/"]; e.hdr.Mode != 0o1777 {
		t.Errorf("/tmp mode %o, want 1777", e.hdr.Mode)
	}
	status := string(r.entries["var/lib/dpkg/status"].data)
	for _, want := range []string{"Package: tool\nStatus: install ok installed\n", "Package: libtool1\nStatus: install ok installed\n", "Version: 1.0-1\n"} {
		if !strings.Contains(status, want) {
			t.Errorf("dpkg status lacks %q:\n%s", want, status)
		}
	}
	// dpkg-query reads the generated status as dpkg's own database.
	admin := filepath.Join(dir, "dpkg")
	os.MkdirAll(filepath.Join(admin, "info"), 0o755)
	os.WriteFile(filepath.Join(admin, "status"), []byte(status), 0o644)
	out, err := exec.Command("dpkg-query", "--admindir", admin, "-W", "-f", "${Package} ${Version} ${Status}\n").CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-query on the image's status: %v\n%s", err, out)
	}
	if got := string(out); got != "libtool1 1.0-1 install ok installed\ntool 1.0-1 install ok installed\n" {
		t.Errorf("dpkg-query lists:\n%s", got)
	}
}

func TestTwoPackagesShippingOneFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	a := buildDeb(t, dir, "a", map[string]string{"usr/bin/same": "a\n"})
	b := buildDeb(t, dir, "b", map[string]string{"usr/bin/same": "b\n"})
	r := NewRootFS()
	if err := r.AddDeb(a); err != nil {
		t.Fatal(err)
	}
	err := r.AddDeb(b)
	if err == nil || !strings.Contains(err.Error(), "usr/bin/same") {
		t.Fatalf("err = %v, want a conflict on usr/bin/same", err)
	}
}

// buildTestImage writes a root layer from test packages and an archive with one binary.
func buildTestImage(t *testing.T, dir string, debs []string, out string) {
	t.Helper()
	buildTestImageFor(t, dir, debs, out, "")
}

// buildTestImageFor is buildTestImage for an architecture; it returns the image's digest.
func buildTestImageFor(t *testing.T, dir string, debs []string, out, arch string) string {
	t.Helper()
	layer := filepath.Join(dir, "root.tar.gz")
	f, err := os.Create(layer)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if err := BuildRootTar(zw, debs, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	f.Close()
	bin := filepath.Join(dir, "prism-agent")
	os.WriteFile(bin, []byte("not really a binary\n"), 0o644)
	spec := Spec{
		Ref: "registry.example/prism/prism:9.9.9", Arch: arch, RootLayer: layer, Binaries: map[string]string{"/prism-agent": bin},
		Created: time.Unix(1700000000, 0), Entrypoint: []string{"/prism-manager"}, Labels: map[string]string{"a": "b"},
	}
	digest, err := spec.WriteArchive(out)
	if err != nil {
		t.Fatal(err)
	}
	return digest.String()
}

func TestArchiveReadsBackWithItsNameConfigAndFiles(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "img.oci.tar")
	buildTestImage(t, dir, twoDebs(t, dir), out)
	a, err := ReadArchive(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{AnnotationContainerdName, AnnotationRefName} {
		if a.Annotations[k] != "registry.example/prism/prism:9.9.9" {
			t.Errorf("annotation %s = %q", k, a.Annotations[k])
		}
	}
	c := a.Config.Config
	if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/prism-manager" || a.Config.OS != "linux" || a.Config.Architecture != "amd64" {
		t.Errorf("config: user %q entrypoint %q os %q arch %q", c.User, c.Entrypoint, a.Config.OS, a.Config.Architecture)
	}
	if !a.Config.Created.Time.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("created %v", a.Config.Created.Time)
	}
	// Both layers, flattened: the binary (executable, root's) and the packages' files.
	agent := a.Files["/prism-agent"]
	if agent == nil || string(agent.Data) != "not really a binary\n" || agent.Header.Mode != 0o755 || agent.Header.Uid != 0 {
		t.Fatalf("/prism-agent: %+v", agent)
	}
	// LookPath follows the image's PATH and its symlinks.
	final, f, err := a.LookPath("tool-alias")
	if err != nil || final != "/usr/sbin/tool" || string(f.Data) != "#!tool\n" {
		t.Errorf("LookPath(tool-alias) = %q, %v", final, err)
	}
	if _, _, err := a.LookPath("absent"); err == nil {
		t.Error("LookPath(absent) found something")
	}
}

func TestArchiveIsReproducible(t *testing.T) {
	dir := t.TempDir()
	debs := twoDebs(t, dir)
	sum := func(out string) [32]byte {
		buildTestImage(t, dir, debs, out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	first := sum(filepath.Join(dir, "1.oci.tar"))
	if second := sum(filepath.Join(dir, "2.oci.tar")); !bytes.Equal(first[:], second[:]) {
		t.Error("the same packages and binaries gave two different archives")
	}
}

// TestIndexArchiveListsEachPlatform: the multi-platform archive is one image index, named as
// the single archives are, listing each image under its config's platform with the digest of
// its own archive; the same archives give the same bytes.
func TestIndexArchiveListsEachPlatform(t *testing.T) {
	dir := t.TempDir()
	debs := twoDebs(t, dir)
	want := map[string]string{
		"linux/amd64":    buildTestImageFor(t, dir, debs, filepath.Join(dir, "amd64.oci.tar"), "amd64"),
		"linux/arm64/v8": buildTestImageFor(t, dir, debs, filepath.Join(dir, "arm64.oci.tar"), "arm64"),
	}
	if want["linux/amd64"] == want["linux/arm64/v8"] {
		t.Fatal("the amd64 and arm64 images have one digest: the platform is not in the config")
	}
	write := func(out string) [32]byte {
		if _, err := WriteIndexArchive(out, "registry.example/prism/prism:9.9.9", time.Unix(1700000000, 0),
			filepath.Join(dir, "amd64.oci.tar"), filepath.Join(dir, "arm64.oci.tar")); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	if first, second := write(filepath.Join(dir, "1.oci.tar")), write(filepath.Join(dir, "2.oci.tar")); first != second {
		t.Error("the same images gave two different index archives")
	}
	ia, err := ReadIndexArchive(filepath.Join(dir, "1.oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{AnnotationContainerdName, AnnotationRefName} {
		if ia.Index.Annotations[k] != "registry.example/prism/prism:9.9.9" {
			t.Errorf("annotation %s = %q", k, ia.Index.Annotations[k])
		}
	}
	got := map[string]string{}
	for i, m := range ia.Manifests {
		got[m.Platform.String()] = m.Digest.String()
		if c := ia.Configs[i].Platform().String(); c != m.Platform.String() {
			t.Errorf("%s is listed as %s", c, m.Platform)
		}
	}
	if len(got) != 2 || got["linux/amd64"] != want["linux/amd64"] || got["linux/arm64/v8"] != want["linux/arm64/v8"] {
		t.Errorf("the index lists %v, want %v", got, want)
	}
	if _, err := ReadArchive(filepath.Join(dir, "1.oci.tar")); err == nil {
		t.Error("ReadArchive read a multi-platform archive as one image")
	}
}

func TestReadLock(t *testing.T) {
	lock, err := ReadLock(strings.NewReader("# c\nlibc6 2.36-9+deb12u14 amd64 2758128 " + strings.Repeat("a", 64) + "\nlibfoo 1:2.0 all 10 " + strings.Repeat("b", 64) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lock) != 2 || lock[1].DebFileName() != "libfoo_1%3a2.0_all.deb" || lock[0].DebFileName() != "libc6_2.36-9+deb12u14_amd64.deb" {
		t.Errorf("%+v", lock)
	}
	if _, err := ReadLock(strings.NewReader("libc6 2.36 amd64 10 abc\n")); err == nil {
		t.Error("a short sha256 passed")
	}
}
