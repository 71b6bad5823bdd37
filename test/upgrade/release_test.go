package upgrade

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/test/support/release"
	"github.com/prism-storage/prism/test/support/testenv"
)

const (
	previousRelease = release.Previous
	oldVersion      = release.PreviousVersion
	newVersion      = release.CurrentVersion
	// skewedVersion is this tree built as a release two minors after the previous one: its
	// operator must leave the previous release's agents alone.
	skewedVersion = "v0.3.0"
)

// binaries are one Prism's operator and agent, and the CRDs of its tree.
type binaries struct {
	manager, agent, crds string
}

// cacheDir is where built releases are kept between runs (hack/envtest-bins.sh's cache).
func cacheDir() string {
	if d := os.Getenv("PRISM_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "prism")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "prism")
}

// previous returns the previous release's binaries, built from its commit once and cached
// under the cache dir keyed by the commit and version.
func previous(t *testing.T) binaries {
	t.Helper()
	dir := filepath.Join(cacheDir(), "upgrade", previousRelease+"-"+oldVersion)
	b := binaries{manager: filepath.Join(dir, "prism-manager"), agent: filepath.Join(dir, "prism-agent"), crds: filepath.Join(dir, "crds")}
	if _, err := os.Stat(b.agent); err == nil {
		return b
	}
	repo := testenv.RepoRoot()
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", previousRelease+"^{commit}").Run(); err != nil {
		t.Fatalf("commit %s (the previous release) is not in %s: a shallow clone? git fetch --unshallow (%v)", previousRelease, repo, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := extract(repo, previousRelease, src); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	t.Logf("building the previous release %s (cold: several minutes on 2 cores; cached in %s)", previousRelease[:7], dir)
	if err := build(src, out, oldVersion); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(src, "config", "crd", "bases"), filepath.Join(out, "crds")); err != nil {
		t.Fatal(err)
	}
	// Rename makes the cache entry appear whole or not at all.
	if err := os.Rename(out, dir); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(b.agent); statErr != nil {
			t.Fatal(err)
		}
	}
	return b
}

// current builds this tree's operator and agent into a temporary directory.
func current(t *testing.T, version string) binaries {
	t.Helper()
	out := t.TempDir()
	repo := testenv.RepoRoot()
	if err := build(repo, out, version); err != nil {
		t.Fatal(err)
	}
	return binaries{manager: filepath.Join(out, "prism-manager"), agent: filepath.Join(out, "prism-agent"),
		crds: filepath.Join(repo, "config", "crd", "bases")}
}

// build builds the operator and the agent of the tree at src into out (their -X main.version
// is version). Neither agent links libblkid (no -tags libblkid): both probe with wipefs, so
// old and new read the fixture hosts alike.
func build(src, out, version string) error {
	for _, b := range []struct{ bin, pkg string }{{"prism-manager", "./cmd/manager"}, {"prism-agent", "./cmd/agent"}} {
		if err := goBuild(src, filepath.Join(out, b.bin), b.pkg, version); err != nil {
			return err
		}
	}
	return nil
}

func goBuild(src, out, pkg, version string) error {
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+version, "-o", out, pkg)
	cmd.Dir = src
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s in %s: %v\n%s", pkg, src, err, msg)
	}
	return nil
}

// currentOperator builds this tree's operator alone, as version.
func currentOperator(t *testing.T, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "prism-manager")
	if err := goBuild(testenv.RepoRoot(), out, "./cmd/manager", version); err != nil {
		t.Fatal(err)
	}
	return out
}

// extract writes the tree of commit into dir (git archive, read here: no tar command).
func extract(repo, commit, dir string) error {
	cmd := exec.Command("git", "-C", repo, "archive", "--format=tar", commit)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(stdout)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading git archive %s: %w", commit, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			continue // pax_global_header and anything outside dir
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o777)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		if err != nil {
			return err
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", commit, err, stderr.String())
	}
	return nil
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
