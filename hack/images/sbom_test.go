package images

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSBOMIsAPureFunctionOfTheImage: the same lock and binaries give the same document
// (two builds, one digest); every locked package and every module of the binary's build info
// is in it, with a valid, unique SPDX id and the package's checksum.
func TestSBOMIsAPureFunctionOfTheImage(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	lockMap := readLockFile(t, "packages.lock")
	var lock []LockedPackage
	for _, p := range lockMap {
		lock = append(lock, p)
	}
	created := time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)
	a, err := SBOM("ghcr.io/prism-storage/prism:0.1.0", lock, map[string][]byte{"/prism-manager": bin}, created)
	if err != nil {
		t.Fatal(err)
	}
	// The lock's map order differs from the file's: the document does not depend on it.
	lock = append(lock[1:], lock[0])
	b, err := SBOM("ghcr.io/prism-storage/prism:0.1.0", lock, map[string][]byte{"/prism-manager": bin}, created)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := ReadSBOM(a)
	if err != nil {
		t.Fatal(err)
	}
	checkSBOM(t, pkgs, lockMap, map[string][]byte{"/prism-manager": bin})
	if !bytes.Equal(a, b) {
		t.Error("the same packages in another order give another document")
	}
}

var spdxID = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)

// checkSBOM holds the document's packages to the lock and to the binaries' build info.
func checkSBOM(t *testing.T, pkgs []SPDXPackage, lock map[string]LockedPackage, bins map[string][]byte) {
	t.Helper()
	ids := map[string]bool{}
	purls := map[string]SPDXPackage{}
	for _, p := range pkgs {
		if !spdxID.MatchString(p.SPDXID) || ids[p.SPDXID] {
			t.Errorf("SPDX id %q: invalid or used twice", p.SPDXID)
		}
		ids[p.SPDXID] = true
		purls[p.Purl()] = p
	}
	for _, l := range lock {
		p, ok := purls["pkg:deb/debian/"+l.Name+"@"+purlEscape(l.Version)+"?arch="+l.Arch+"&distro=debian-12"]
		if !ok || len(p.Checksums) != 1 || p.Checksums[0].Value != l.SHA256 {
			t.Errorf("Debian package %s %s %s: %+v", l.Name, l.Version, l.Arch, p)
		}
	}
	for dest, data := range bins {
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		found := false
		for _, p := range pkgs {
			if p.Name == dest && len(p.Checksums) == 1 && p.Checksums[0].Value == hex.EncodeToString(sum[:]) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no package with its name and SHA256", dest)
		}
		for _, m := range info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			if _, ok := purls["pkg:golang/"+m.Path+"@"+purlEscape(m.Version)]; !ok {
				t.Errorf("%s: module %s %s is not in the SBOM", dest, m.Path, m.Version)
			}
		}
		if _, ok := purls["pkg:golang/stdlib@"+purlEscape(info.GoVersion)]; !ok {
			t.Errorf("%s: its Go (%s) is not in the SBOM", dest, info.GoVersion)
		}
	}
	if len(lock) == 0 || len(pkgs) < len(lock)+1 {
		t.Errorf("%d packages in the SBOM for %d locked ones", len(pkgs), len(lock))
	}
}

// TestBuiltImageSBOMListsItsContents: the image carries its SBOM, and it names exactly the
// Debian packages the image's dpkg status lists and the modules of the binaries it holds.
func TestBuiltImageSBOMListsItsContents(t *testing.T) {
	checkImageSBOM(t, builtArchive(t), readLockFile(t, "packages.lock"))
}

// checkImageSBOM holds an image's SBOM to its dpkg status, its lock and its binaries.
func checkImageSBOM(t *testing.T, a *Archive, lock map[string]LockedPackage) {
	t.Helper()
	f := a.Files[SBOMPath]
	if f == nil {
		t.Fatalf("no SBOM at %s: run make images", SBOMPath)
	}
	if f.Header.Mode&0o777 != 0o644 {
		t.Errorf("%s mode %o, want 0644", SBOMPath, f.Header.Mode&0o777)
	}
	pkgs, err := ReadSBOM(f.Data)
	if err != nil {
		t.Fatal(err)
	}
	status := a.Files["/var/lib/dpkg/status"]
	if status == nil {
		t.Fatal("the image has no dpkg status")
	}
	installed := map[string]LockedPackage{}
	sc := bufio.NewScanner(bytes.NewReader(status.Data))
	var name string
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "Package":
			name = v
		case "Version":
			l, ok := lock[name]
			if !ok || l.Version != v {
				t.Errorf("dpkg status lists %s %s, the lock %+v", name, v, l)
			}
			installed[name] = l
		case "Architecture":
			if l := lock[name]; l.Arch != v {
				t.Errorf("dpkg status lists %s for %s, the lock for %s", name, v, l.Arch)
			}
		}
	}
	if len(installed) != len(lock) {
		t.Errorf("dpkg status lists %d packages, the lock %d", len(installed), len(lock))
	}
	bins := map[string][]byte{}
	for _, b := range []string{"/prism-manager", "/prism-agent"} {
		if f := a.Files[b]; f != nil {
			bins[b] = f.Data
		}
	}
	if len(bins) != 2 {
		t.Errorf("the image holds %d of Prism's two binaries", len(bins))
	}
	checkSBOM(t, pkgs, installed, bins)
	t.Logf("%s: %d packages (%d Debian)", SBOMPath, len(pkgs), len(installed))
}
