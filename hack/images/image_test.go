package images

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/prism-storage/prism/hack/depscan"
)

const repoRoot = "../.."

// agentTools is the agent's argv[0]s, checked against a few it is known to run, so a scanner
// that silently finds nothing cannot pass the tests below.
func agentTools(t *testing.T) map[string][]string {
	t.Helper()
	abs, _ := filepath.Abs(repoRoot)
	found, err := AgentCommands(abs)
	if err != nil {
		t.Fatal(err)
	}
	for _, known := range []string{"wipefs", "blkid", "partx", "sfdisk", "udevadm", "smartctl", "nsenter", "casadm"} {
		if _, ok := found[known]; !ok {
			t.Errorf("the scan of cmd/agent's packages misses %s (found %v)", known, found)
		}
	}
	return found
}

// readLockFile reads a lock of this directory (packages.lock, packages.arm64.lock) by name.
func readLockFile(t *testing.T, file string) map[string]LockedPackage {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lock, err := ReadLock(f)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]LockedPackage{}
	for _, p := range lock {
		m[p.Name] = p
	}
	return m
}

// imageRoot is hack/packages.txt's image-root group.
func imageRoot(t *testing.T) []string {
	rows, err := depscan.ReadColumns(filepath.Join(repoRoot, "hack", "packages.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		if r[0] == "image-root" {
			out = append(out, r[1])
		}
	}
	return out
}

// TestEveryAgentToolIsLocked needs no image: each command the agent runs, except the host's,
// comes (hack/depscan/commands.tsv) from a package of the image's lock.
func TestEveryAgentToolIsLocked(t *testing.T) {
	tools := agentTools(t)
	lock := readLockFile(t, "packages.lock")
	rows, err := depscan.ReadColumns(filepath.Join(repoRoot, "hack", "depscan", "commands.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	pkgOf := map[string]string{}
	for _, r := range rows {
		pkgOf[r[0]] = r[1]
	}
	for _, top := range imageRoot(t) {
		if _, ok := lock[top]; !ok {
			t.Errorf("image-root package %s is not in packages.lock: run hack/images/lock.sh", top)
		}
	}
	for tool, where := range tools {
		if HostTools[tool] != "" {
			continue
		}
		pkg := pkgOf[tool]
		if pkg == "" {
			t.Errorf("%s (%s): not in hack/depscan/commands.tsv", tool, strings.Join(where, ", "))
			continue
		}
		if _, ok := lock[pkg]; !ok {
			t.Errorf("the agent runs %s (%s), from package %s, which the image lacks: add %s to hack/packages.txt's image-root group and the Dockerfile, then run hack/images/lock.sh", tool, strings.Join(where, ", "), pkg, pkg)
		}
	}
}

// TestHostToolsRunOnTheHost: a tool left out of the image must reach the host through nsenter,
// which the chart turns on with the tool's flag (--host-tools, --db-volumes).
func TestHostToolsRunOnTheHost(t *testing.T) {
	tools := agentTools(t)
	if _, ok := tools["nsenter"]; !ok {
		t.Fatal("the agent never runs nsenter, so it cannot run host tools")
	}
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "charts", "prism", "templates", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for tool, flag := range HostTools {
		if !strings.Contains(string(tmpl), flag) {
			t.Errorf("%s is left out of the image but the chart never passes %s", tool, flag)
		}
	}
}

// TestDockerfileInstallsTheSameTools: the Dockerfile's final stage installs image-root's
// Debian packages (its base image, debian:12-slim, already has base-files).
func TestDockerfileInstallsTheSameTools(t *testing.T) {
	df, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// The last install is the final stage's (the build stage installs libblkid-dev first).
	all := regexp.MustCompile(`apt-get install -y (?:-q )?--no-install-recommends ([a-z0-9 .+-]+?) &&`).FindAllSubmatch(df, -1)
	if len(all) == 0 {
		t.Fatal("no apt-get install line in the Dockerfile")
	}
	m := all[len(all)-1]
	got := strings.Fields(string(m[1]))
	var want []string
	for _, p := range imageRoot(t) {
		if p != "base-files" {
			want = append(want, p)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the Dockerfile installs %v; hack/packages.txt's image-root has %v", got, want)
	}
}

// TestChartRunsTheBuiltName renders the chart as helm install does: every image it runs is the
// name make images gives the archive.
func TestChartRunsTheBuiltName(t *testing.T) {
	dir := filepath.Join(repoRoot, "charts", "prism")
	ref, err := ChartRef(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(c, chartutil.Values{}, chartutil.ReleaseOptions{Name: "prism", Namespace: "prism-system", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(c, top)
	if err != nil {
		t.Fatal(err)
	}
	imageLine := regexp.MustCompile(`(?m)^\s*-?\s*image:\s*"?([^"\s]+)"?\s*$`)
	n := 0
	for name, content := range files {
		for _, m := range imageLine.FindAllStringSubmatch(content, -1) {
			n++
			if m[1] != ref {
				t.Errorf("%s runs image %s; make images builds %s", name, m[1], ref)
			}
		}
	}
	if n < 2 {
		t.Errorf("found %d image lines in the rendered chart, want the operator's and the agent's", n)
	}
}

// builtArchive is make images' output (PRISM_IMAGE_ARCHIVE overrides the path).
func builtArchive(t *testing.T) *Archive {
	return builtArchiveAt(t, "PRISM_IMAGE_ARCHIVE", "prism.oci.tar", "make images")
}

// builtArm64Archive is make images-arm64's output (PRISM_IMAGE_ARCHIVE_ARM64 overrides it).
func builtArm64Archive(t *testing.T) *Archive {
	return builtArchiveAt(t, "PRISM_IMAGE_ARCHIVE_ARM64", "prism-arm64.oci.tar", "make images-arm64")
}

// builtArchivePath is the path of a built archive: the environment variable's, or bin/images'.
func builtArchivePath(t *testing.T, env, name, target string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join(repoRoot, "bin", "images", name)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no image archive at %s: run %s (hack/test.sh does)", p, target)
	}
	return p
}

func builtArchiveAt(t *testing.T, env, name, target string) *Archive {
	t.Helper()
	a, err := ReadArchive(builtArchivePath(t, env, name, target))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// libDirs is the dynamic linker's system search path for the image's architecture (Debian's
// glibc multiarch directories; the image has no ld.so.cache).
func libDirs(a *Archive) []string {
	triplet := "x86_64-linux-gnu"
	if a.Config != nil && a.Config.Architecture == "arm64" {
		triplet = "aarch64-linux-gnu"
	}
	return []string{"/lib/" + triplet, "/usr/lib/" + triplet, "/lib", "/usr/lib"}
}

// checkELF checks that an executable's interpreter and every shared library it needs,
// transitively, are in the image, searching its RUNPATH/RPATH and the system directories.
func checkELF(a *Archive, file string, data []byte, seen map[string]bool) []string {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil // a script
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp := make([]byte, p.Filesz)
			p.ReadAt(interp, 0)
			name := strings.TrimRight(string(interp), "\x00")
			if _, f, err := a.Resolve(name); err != nil || f.Header.Typeflag != tar.TypeReg {
				problems = append(problems, file+": interpreter "+name+" is not in the image")
			}
		}
	}
	needed, _ := f.DynString(elf.DT_NEEDED)
	var runpath []string
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		v, _ := f.DynString(tag)
		for _, s := range v {
			for _, d := range strings.Split(s, ":") {
				runpath = append(runpath, strings.ReplaceAll(d, "$ORIGIN", path.Dir(file)))
			}
		}
	}
	for _, lib := range needed {
		found := false
		for _, d := range append(runpath, libDirs(a)...) {
			final, lf, err := a.Resolve(path.Join(d, lib))
			if err != nil || lf.Header.Typeflag != tar.TypeReg {
				continue
			}
			found = true
			if !seen[final] {
				seen[final] = true
				problems = append(problems, checkELF(a, final, lf.Data, seen)...)
			}
			break
		}
		if !found {
			problems = append(problems, file+": needs "+lib+", which is not in the image")
		}
	}
	return problems
}

// TestBuiltImageHoldsEveryAgentTool: in the archive make images wrote, each command the agent
// runs (except the host's) is an executable on the image's PATH whose interpreter and shared
// libraries are in the image too; the host's tools are absent (a stale copy must never run
// against the host's module); the binaries are static; the name is the chart's default.
func TestBuiltImageHoldsEveryAgentTool(t *testing.T) {
	a := builtArchive(t)
	ref, err := ChartRef(filepath.Join(repoRoot, "charts", "prism"))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Annotations[AnnotationContainerdName]; got != ref {
		t.Errorf("the archive names its image %q, the chart runs %q: run make images", got, ref)
	}
	checkAgentTools(t, a)
	for _, bin := range []string{"/prism-manager", "/prism-agent"} {
		f := a.Files[bin]
		if f == nil || f.Header.Mode&0o111 == 0 {
			t.Errorf("%s: not an executable in the image", bin)
			continue
		}
		e, err := elf.NewFile(bytes.NewReader(f.Data))
		if err != nil {
			t.Errorf("%s: %v", bin, err)
			continue
		}
		for _, p := range e.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked; the image builds it static (CGO_ENABLED=0, or libblkid and glibc linked statically: hack/build-agent.sh)", bin)
			}
		}
	}
	if f := a.Files["/prism-agent"]; f != nil {
		tags, err := agentBuildTags(f.Data)
		switch {
		case err != nil:
			t.Errorf("/prism-agent: %v", err)
		case os.Geteuid() == 0 && !strings.Contains(tags, "libblkid"):
			// As root, make images installs libblkid-dev first (hack/images/build.sh).
			t.Errorf("/prism-agent was built with tags %q: as root make images links libblkid in (decision 0034)", tags)
		default:
			t.Logf("/prism-agent build tags: %q", tags)
		}
	}
	_ = checkMachine(t, a, elf.EM_X86_64)
	if got := strings.Join(a.Config.Config.Entrypoint, " "); got != "/prism-manager" {
		t.Errorf("entrypoint %q, want /prism-manager (the chart's agent sets its command)", got)
	}
	t.Logf("%s: %.1f MB of layers, %.1f MB unpacked", ref, float64(a.Size)/1e6, float64(a.Unpacked)/1e6)
}

// checkAgentTools: each command the agent runs, except the host's, is an executable on the
// image's PATH whose interpreter and shared libraries are in the image too; the host's tools
// are absent (a stale copy must never run against the host's module).
func checkAgentTools(t *testing.T, a *Archive) {
	t.Helper()
	for tool, where := range agentTools(t) {
		if HostTools[tool] != "" {
			if final, _, err := a.LookPath(tool); err == nil {
				t.Errorf("%s is in the image at %s; the agent runs the host's (%s)", tool, final, HostTools[tool])
			}
			continue
		}
		final, f, err := a.LookPath(tool)
		if err != nil {
			t.Errorf("the agent runs %s (%s): %v (run make images after changing the lock)", tool, strings.Join(where, ", "), err)
			continue
		}
		for _, p := range checkELF(a, final, f.Data, map[string]bool{}) {
			t.Errorf("%s: %s", tool, p)
		}
		t.Logf("%s -> %s (%d bytes)", tool, final, len(f.Data))
	}
}

// TestBuiltImageToolsRun (root): the image's flattened file system, unpacked; each agent tool
// runs in it (chroot) and prints its version, with only the image's libraries.
func TestBuiltImageToolsRun(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root (chroot)")
	}
	a := builtArchive(t)
	dir := t.TempDir()
	for name, f := range a.Files {
		target := filepath.Join(dir, name)
		h := f.Header
		var err error
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(target), 0o755)
			err = os.WriteFile(target, f.Data, os.FileMode(h.Mode&0o777))
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(target), 0o755)
			err = os.Symlink(h.Linkname, target)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, f := range a.Files { // hard links once their targets exist
		if f.Header.Typeflag == tar.TypeLink {
			if err := os.Link(filepath.Join(dir, f.Header.Linkname), filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for tool := range agentTools(t) {
		if HostTools[tool] != "" {
			continue
		}
		final, _, err := a.LookPath(tool)
		if err != nil {
			t.Errorf("%s: %v", tool, err)
			continue
		}
		cmd := exec.Command(final, "--version")
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: dir}
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=" + Path}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s --version in the image: %v\n%s", final, err, out)
			continue
		}
		t.Logf("%s: %s", tool, strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0])
	}
}

// TestCheckELFFindsAMissingLibrary: the library check on a real dynamic executable (this
// machine's /bin/true), in an image that has it but not its C library, nor its interpreter.
func TestCheckELFFindsAMissingLibrary(t *testing.T) {
	data, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip(err)
	}
	a := &Archive{Files: map[string]*File{
		"/bin":      {Header: tar.Header{Typeflag: tar.TypeDir}},
		"/bin/true": {Header: tar.Header{Typeflag: tar.TypeReg, Mode: 0o755}, Data: data},
	}}
	problems := strings.Join(checkELF(a, "/bin/true", data, map[string]bool{}), "\n")
	for _, want := range []string{"needs libc.so.6", "interpreter /lib64/ld-linux-x86-64.so.2"} {
		if !strings.Contains(problems, want) {
			t.Errorf("checkELF did not report %q; it said:\n%s", want, problems)
		}
	}
}

// agentBuildTags are the build tags Go recorded in a binary ("libblkid,netgo,osusergo" for the
// agent that links libblkid; "" for the wipefs one).
func agentBuildTags(binary []byte) (string, error) {
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		return "", err
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value, nil
		}
	}
	return "", nil
}
