// Package images builds Prism's container image as an OCI archive without a container engine:
// a root layer made of Debian packages (the exact versions of hack/images/packages.lock, never
// installed on this machine: their data is read with dpkg-deb) and a layer with the static Go
// binaries, assembled with go-containerregistry. hack/images/build.sh drives it (make images).
package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"time"
)

// LockedPackage is one line of packages.lock.
type LockedPackage struct {
	Name, Version, Arch string
	Size                int64
	SHA256              string
}

// ReadLock parses packages.lock: "name version arch size sha256" per line, # comments.
func ReadLock(r io.Reader) ([]LockedPackage, error) {
	var out []LockedPackage
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, fmt.Errorf("packages.lock:%d: want name version arch size sha256, got %q", n, line)
		}
		var size int64
		if _, err := fmt.Sscan(f[3], &size); err != nil || size <= 0 {
			return nil, fmt.Errorf("packages.lock:%d: size %q", n, f[3])
		}
		if len(f[4]) != 64 {
			return nil, fmt.Errorf("packages.lock:%d: sha256 %q is not 64 hex digits", n, f[4])
		}
		out = append(out, LockedPackage{Name: f[0], Version: f[1], Arch: f[2], Size: size, SHA256: f[4]})
	}
	return out, sc.Err()
}

// DebFileName is the file name apt-get download gives a package: name_version_arch.deb, with
// the epoch's colon escaped as %3a.
func (p LockedPackage) DebFileName() string {
	return p.Name + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_" + p.Arch + ".deb"
}

// Deb is a package file to put into the root layer.
type Deb struct {
	Path string
}

// dropped reports whether a package path stays out of the image: manuals, info pages,
// translations and documentation, except each package's copyright file.
func dropped(name string) bool {
	for _, prefix := range []string{"usr/share/man/", "usr/share/info/", "usr/share/locale/", "usr/share/lintian/", "usr/share/bug/"} {
		if strings.HasPrefix(name, prefix) && name != prefix {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(name, "usr/share/doc/"); ok && rest != "" {
		parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
		// usr/share/doc/<pkg>/ and usr/share/doc/<pkg>/copyright stay.
		return !(len(parts) == 1 || (len(parts) == 2 && parts[1] == "copyright"))
	}
	return false
}

// entry is one file system object of a layer.
type entry struct {
	hdr  tar.Header
	data []byte
	from string // the package that shipped it
}

// RootFS is the union of Debian packages' data, as dpkg would unpack them onto an empty
// system (without running maintainer scripts), plus the files those scripts or a base image
// would provide that the image needs.
type RootFS struct {
	entries map[string]*entry
	status  bytes.Buffer // /var/lib/dpkg/status
}

// NewRootFS starts an empty root.
func NewRootFS() *RootFS { return &RootFS{entries: map[string]*entry{}} }

// cleanName turns a tar name ("./usr/bin/", "usr/bin/x") into the layer's form: relative, no
// leading "./", directories with a trailing slash.
func cleanName(name string, dir bool) string {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	if dir && name != "" {
		name += "/"
	}
	return name
}

// AddDeb unpacks one package's data (dpkg-deb --fsys-tarfile) and records its control fields
// in the dpkg status database, so that image scanners can list the image's packages.
func (r *RootFS) AddDeb(debPath string) error {
	control, err := exec.Command("dpkg-deb", "--field", debPath).Output()
	if err != nil {
		return fmt.Errorf("dpkg-deb --field %s: %w", debPath, err)
	}
	pkg := ""
	for _, line := range strings.Split(string(control), "\n") {
		if v, ok := strings.CutPrefix(line, "Package: "); ok {
			pkg = v
		}
	}
	if pkg == "" {
		return fmt.Errorf("%s: no Package field", debPath)
	}
	cmd := exec.Command("dpkg-deb", "--fsys-tarfile", debPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	addErr := r.addTar(out, pkg)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w: %s", debPath, err, stderr.String())
	}
	if addErr != nil {
		return fmt.Errorf("%s: %w", debPath, addErr)
	}
	// The status paragraph: the control fields with Status after Package, as dpkg writes it.
	para := strings.TrimRight(string(control), "\n")
	para = strings.Replace(para, "Package: "+pkg+"\n", "Package: "+pkg+"\nStatus: install ok installed\n", 1)
	r.status.WriteString(para + "\n\n")
	return nil
}

// addTar merges a package's data tar. A directory several packages ship keeps its first
// header; two packages shipping the same non-directory path is an error (dpkg would refuse it
// without Replaces, which the image's packages do not need).
func (r *RootFS) addTar(rd io.Reader, pkg string) error {
	tr := tar.NewReader(rd)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		isDir := h.Typeflag == tar.TypeDir
		name := cleanName(h.Name, isDir)
		if name == "" || dropped(name) {
			continue
		}
		if prev, ok := r.entries[name]; ok {
			if isDir && prev.hdr.Typeflag == tar.TypeDir {
				continue
			}
			return fmt.Errorf("%s ships %s, which %s ships too", pkg, name, prev.from)
		}
		e := &entry{from: pkg, hdr: tar.Header{
			Name: name, Typeflag: h.Typeflag, Mode: h.Mode, Uid: h.Uid, Gid: h.Gid,
			Uname: h.Uname, Gname: h.Gname, ModTime: h.ModTime, Linkname: h.Linkname,
			Devmajor: h.Devmajor, Devminor: h.Devminor,
		}}
		switch h.Typeflag {
		case tar.TypeReg:
			e.data, err = io.ReadAll(tr)
			if err != nil {
				return err
			}
			e.hdr.Size = int64(len(e.data))
		case tar.TypeLink:
			e.hdr.Linkname = cleanName(h.Linkname, false)
		case tar.TypeSymlink, tar.TypeDir:
		default:
			return fmt.Errorf("%s: unexpected tar entry type %q", name, h.Typeflag)
		}
		r.entries[name] = e
	}
}

// Generated files, owned by root, at the given time.
func (r *RootFS) addGenerated(name string, mode int64, data []byte, mtime time.Time) {
	typ := byte(tar.TypeReg)
	if strings.HasSuffix(name, "/") {
		typ = tar.TypeDir
	}
	r.entries[name] = &entry{from: "hack/images", data: data, hdr: tar.Header{
		Name: name, Typeflag: typ, Mode: mode, Size: int64(len(data)), Uname: "root", Gname: "root", ModTime: mtime,
	}}
}

// NonRootUID is the image's default user (and group): not root, not any Debian system user.
const NonRootUID = 65532

// Finish adds what maintainer scripts and a base image would: /tmp, /root, the users the
// image runs as, and the dpkg status database.
func (r *RootFS) Finish(mtime time.Time) {
	r.addGenerated("tmp/", 0o1777, nil, mtime)
	r.addGenerated("root/", 0o700, nil, mtime)
	r.addGenerated("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:%d:%d:nonroot:/:/usr/sbin/nologin\n", NonRootUID, NonRootUID)), mtime)
	r.addGenerated("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)), mtime)
	r.addGenerated("var/lib/dpkg/status", 0o644, r.status.Bytes(), mtime)
	// Parent directories no package shipped (none in Debian's packages, but a generated
	// file's parent must exist).
	for name := range r.entries {
		for dir := path.Dir(strings.TrimSuffix(name, "/")); dir != "."; dir = path.Dir(dir) {
			if _, ok := r.entries[dir+"/"]; !ok {
				r.addGenerated(dir+"/", 0o755, nil, mtime)
			}
		}
	}
}

// Names lists the root's paths, sorted.
func (r *RootFS) Names() []string {
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WriteTar writes the root as an uncompressed layer tar, sorted by name (each directory
// before its contents), so the same packages always give the same bytes.
func (r *RootFS) WriteTar(w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, n := range r.Names() {
		e := r.entries[n]
		hdr := e.hdr
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&hdr); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// BuildRootTar reads the packages in order and writes the root layer tar to w.
func BuildRootTar(w io.Writer, debs []string, mtime time.Time) error {
	r := NewRootFS()
	for _, d := range debs {
		if err := r.AddDeb(d); err != nil {
			return err
		}
	}
	r.Finish(mtime)
	return r.WriteTar(w)
}

// FileLayerTar writes a layer of whole files: each source file at its destination path in the
// image, mode 0755 (the Go binaries), and each document (destination -> content) mode 0644,
// owned by root, at mtime.
func FileLayerTar(w io.Writer, files map[string]string, docs map[string][]byte, mtime time.Time) error {
	r := NewRootFS()
	for dest, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		r.addGenerated(cleanName(dest, false), 0o755, data, mtime)
	}
	for dest, data := range docs {
		r.addGenerated(cleanName(dest, false), 0o644, data, mtime)
	}
	for name := range r.entries {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			r.addGenerated(dir+"/", 0o755, nil, mtime)
		}
	}
	return r.WriteTar(w)
}
