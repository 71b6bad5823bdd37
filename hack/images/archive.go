package images

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Archive is an OCI archive read back: its one image, the annotations the index gives it, and
// its flattened file system.
type Archive struct {
	Annotations map[string]string
	Image       v1.Image
	Config      *v1.ConfigFile
	Files       map[string]*File // by absolute path ("/usr/bin/x"), directories without trailing slash
	// Size is the sum of the compressed layers (what a registry or an import transfers);
	// Unpacked the sum of the regular files' sizes.
	Size, Unpacked int64
}

// File is one object of the flattened file system.
type File struct {
	Header tar.Header
	Data   []byte
}

// ReadArchive unpacks an OCI archive into a temporary directory and reads it with
// go-containerregistry's layout package; it wants exactly one image in index.json (a
// multi-platform archive is ReadIndexArchive's).
func ReadArchive(archive string) (*Archive, error) {
	dir, err := os.MkdirTemp("", "prism-oci-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	desc, img, err := layoutImage(archive, dir)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	a := &Archive{Annotations: desc.Annotations, Image: img, Config: cf, Files: map[string]*File{}}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		size, err := l.Size()
		if err != nil {
			return nil, err
		}
		a.Size += size
	}
	flat := mutate.Extract(img)
	defer flat.Close()
	tr := tar.NewReader(flat)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		f := &File{Header: *h}
		if h.Typeflag == tar.TypeReg {
			if f.Data, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
			a.Unpacked += int64(len(f.Data))
		}
		a.Files[path.Clean("/"+h.Name)] = f
	}
	return a, nil
}

// Resolve follows symbolic and hard links inside the image, from an absolute path, through
// every component; it returns the final path and its file, or an error naming the broken link.
func (a *Archive) Resolve(p string) (string, *File, error) {
	for hops := 0; hops < 40; hops++ {
		// Resolve the parent directories first (a component may itself be a symlink).
		parts := strings.Split(strings.TrimPrefix(path.Clean(p), "/"), "/")
		cur := "/"
		redirected := false
		for i, part := range parts {
			next := path.Join(cur, part)
			f, ok := a.Files[next]
			if !ok {
				return "", nil, fmt.Errorf("%s: %s does not exist in the image", p, next)
			}
			switch f.Header.Typeflag {
			case tar.TypeSymlink:
				target := f.Header.Linkname
				if !path.IsAbs(target) {
					target = path.Join(cur, target)
				}
				p = path.Join(append([]string{target}, parts[i+1:]...)...)
				redirected = true
			case tar.TypeLink:
				p = path.Join(append([]string{"/" + f.Header.Linkname}, parts[i+1:]...)...)
				redirected = true
			}
			if redirected {
				break
			}
			cur = next
		}
		if !redirected {
			return cur, a.Files[cur], nil
		}
	}
	return "", nil, fmt.Errorf("%s: too many levels of links", p)
}

// LookPath finds a command as the image's PATH would.
func (a *Archive) LookPath(cmd string) (string, *File, error) {
	if strings.Contains(cmd, "/") {
		return a.Resolve(cmd)
	}
	pathEnv := ""
	for _, e := range a.Config.Config.Env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if _, ok := a.Files[path.Join(dir, cmd)]; !ok {
			continue
		}
		final, f, err := a.Resolve(path.Join(dir, cmd))
		if err != nil {
			return "", nil, err
		}
		if f.Header.Typeflag == tar.TypeReg && f.Header.Mode&0o111 != 0 {
			return final, f, nil
		}
	}
	return "", nil, fmt.Errorf("%s: not an executable file in the image's PATH %s", cmd, pathEnv)
}

func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Name)))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			out, err := os.Create(name)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected entry %s in an OCI archive", archive, h.Name)
		}
	}
}
