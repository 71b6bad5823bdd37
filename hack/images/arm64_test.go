package images

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestArm64LockPinsTheSameVersions needs no image: the arm64 image has the same software as
// the amd64 one, so its lock names the same packages at the same versions, and a package
// built once for every architecture (Architecture: all) is the very same .deb in both.
func TestArm64LockPinsTheSameVersions(t *testing.T) {
	amd64 := readLockFile(t, "packages.lock")
	arm64 := readLockFile(t, "packages.arm64.lock")
	for name, a := range amd64 {
		b, ok := arm64[name]
		switch {
		case !ok:
			t.Errorf("%s %s is in packages.lock, not in packages.arm64.lock: run hack/images/lock.sh --arch arm64", name, a.Version)
		case b.Version != a.Version:
			t.Errorf("%s: %s on amd64, %s on arm64", name, a.Version, b.Version)
		case a.Arch == "all" && (b.Arch != "all" || b.SHA256 != a.SHA256):
			t.Errorf("%s is Architecture: all on amd64, yet on arm64 %s %s", name, b.Arch, b.SHA256)
		case a.Arch != "all" && (a.Arch != "amd64" || b.Arch != "arm64"):
			t.Errorf("%s: %s in packages.lock, %s in packages.arm64.lock", name, a.Arch, b.Arch)
		}
	}
	for name := range arm64 {
		if _, ok := amd64[name]; !ok {
			t.Errorf("%s is in packages.arm64.lock only", name)
		}
	}
}

// elfMachines counts the image's ELF files by machine (e_machine), following no links: every
// regular file is read, the Debian packages' and Prism's alike.
// checkMachine fails the test for every ELF file of the image built for another machine than
// want, and when fewer than 50 are built for it (the Debian packages alone ship more). It
// returns how many are built for want.
func checkMachine(t *testing.T, a *Archive, want elf.Machine) int {
	t.Helper()
	machines, err := elfMachines(a)
	if err != nil {
		t.Fatal(err)
	}
	for m, names := range machines {
		if m != want {
			t.Errorf("%d ELF files for %s in the %s image, e.g. %s", len(names), m, want, names[0])
		}
	}
	n := len(machines[want])
	if n < 50 {
		t.Errorf("%d ELF files for %s; the packages alone ship more", n, want)
	}
	return n
}

func elfMachines(a *Archive) (map[elf.Machine][]string, error) {
	out := map[elf.Machine][]string{}
	for name, f := range a.Files {
		if f.Header.Typeflag != tar.TypeReg || !bytes.HasPrefix(f.Data, []byte(elf.ELFMAG)) {
			continue
		}
		e, err := elf.NewFile(bytes.NewReader(f.Data))
		if err != nil {
			return nil, err
		}
		out[e.Machine] = append(out[e.Machine], name)
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out, nil
}

// TestBuiltArm64ImageByItsFiles: make images-arm64's archive cannot run here, so it is checked
// by its contents. Its config says linux/arm64/v8; every ELF file in it is for aarch64; each
// command the agent runs is on its PATH with its interpreter and libraries in arm64's
// directories, and the host's tools are absent; Prism's binaries are static Go with GOARCH=arm64 and
// CGO_ENABLED=0 in their build info; its SBOM lists exactly its own packages (its dpkg status,
// packages.arm64.lock) and binaries; it is named as the chart's default, like the amd64 image.
func TestBuiltArm64ImageByItsFiles(t *testing.T) {
	a := builtArm64Archive(t)
	if p := a.Config.Platform(); p.OS != "linux" || p.Architecture != "arm64" || p.Variant != "v8" {
		t.Errorf("config platform %s, want linux/arm64/v8", p)
	}
	ref, err := ChartRef(filepath.Join(repoRoot, "charts", "prism"))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Annotations[AnnotationContainerdName]; got != ref {
		t.Errorf("the archive names its image %q, the chart runs %q", got, ref)
	}
	native := checkMachine(t, a, elf.EM_AARCH64)
	checkAgentTools(t, a)
	for _, bin := range []string{"/prism-manager", "/prism-agent"} {
		f := a.Files[bin]
		if f == nil || f.Header.Mode&0o111 == 0 {
			t.Errorf("%s: not an executable in the image", bin)
			continue
		}
		if problems := checkELF(a, bin, f.Data, map[string]bool{}); len(problems) > 0 {
			t.Errorf("%s: %v", bin, problems)
		}
		info, err := buildinfo.Read(bytes.NewReader(f.Data))
		if err != nil {
			t.Errorf("%s: %v", bin, err)
			continue
		}
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if settings["GOOS"] != "linux" || settings["GOARCH"] != "arm64" || settings["CGO_ENABLED"] != "0" {
			t.Errorf("%s was built with GOOS=%s GOARCH=%s CGO_ENABLED=%s, want linux arm64 0", bin, settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
		}
		t.Logf("%s: %s, %s %s/%s CGO_ENABLED=%s", bin, info.Path, info.GoVersion, settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
	}
	if e := a.Files["/prism-agent"]; e != nil {
		if f, err := elf.NewFile(bytes.NewReader(e.Data)); err == nil {
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Error("/prism-agent is dynamically linked")
				}
			}
		}
	}
	checkImageSBOM(t, a, readLockFile(t, "packages.arm64.lock"))
	t.Logf("%d aarch64 ELF files; %.1f MB of layers, %.1f MB unpacked", native, float64(a.Size)/1e6, float64(a.Unpacked)/1e6)
}

// TestBuiltImagesShareOneIndex: make images-multiarch's archive is one image index with
// exactly the two built images, each under its own platform, byte for byte the images of
// prism.oci.tar and prism-arm64.oci.tar.
func TestBuiltImagesShareOneIndex(t *testing.T) {
	ia, err := ReadIndexArchive(builtArchivePath(t, "PRISM_IMAGE_ARCHIVE_MULTIARCH", "prism-multiarch.oci.tar", "make images-multiarch"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ChartRef(filepath.Join(repoRoot, "charts", "prism"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ia.Index.Annotations[AnnotationContainerdName]; got != ref {
		t.Errorf("the index is named %q, the chart runs %q", got, ref)
	}
	want := map[string]string{}
	for platform, a := range map[string]*Archive{"linux/amd64": builtArchive(t), "linux/arm64/v8": builtArm64Archive(t)} {
		d, err := a.Image.Digest()
		if err != nil {
			t.Fatal(err)
		}
		want[platform] = d.String()
	}
	got := map[string]string{}
	for i, m := range ia.Manifests {
		got[m.Platform.String()] = m.Digest.String()
		if c := ia.Configs[i].Platform(); c.String() != m.Platform.String() {
			t.Errorf("the index lists %s for an image whose config says %s", m.Platform, c)
		}
	}
	if len(got) != 2 || got["linux/amd64"] != want["linux/amd64"] || got["linux/arm64/v8"] != want["linux/arm64/v8"] {
		t.Errorf("the index lists %v; the built archives are %v (rebuild them together: make images-multiarch)", got, want)
	}
}

// TestElfMachinesReadsEveryELF: the architecture check on real files, this machine's /bin/true
// and a script: one ELF of the host's machine, the script not counted.
func TestElfMachinesReadsEveryELF(t *testing.T) {
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	a := &Archive{Files: map[string]*File{
		"/bin/true":   {Header: tar.Header{Typeflag: tar.TypeReg}, Data: data},
		"/bin/script": {Header: tar.Header{Typeflag: tar.TypeReg}, Data: []byte("#!/bin/sh\n")},
	}}
	m, err := elfMachines(a)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := elf.NewFile(bytes.NewReader(data))
	if len(m) != 1 || len(m[host.Machine]) != 1 || m[host.Machine][0] != "/bin/true" {
		t.Errorf("elfMachines = %v, want /bin/true under %s", m, host.Machine)
	}
}
