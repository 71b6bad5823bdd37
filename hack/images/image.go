package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations that name the image in an OCI archive: containerd's importer (ctr images
// import, kind load image-archive) takes io.containerd.image.name; podman load and skopeo take
// org.opencontainers.image.ref.name, which may hold a whole reference.
const (
	AnnotationContainerdName = "io.containerd.image.name"
	AnnotationRefName        = "org.opencontainers.image.ref.name"
)

// Path is the image's search path for commands.
const Path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Spec describes Prism's image.
type Spec struct {
	Ref        string            // repository:tag, as the chart's default
	Arch       string            // the GOARCH and OCI architecture of the binaries and packages; amd64 when empty
	RootLayer  string            // path of the root layer: a gzip-compressed tar (BuildRootTar's output)
	Binaries   map[string]string // destination path in the image -> file on this machine
	Created    time.Time         // the config's creation time and the binaries' mtime
	Entrypoint []string
	Labels     map[string]string
	// SBOM is the image's SPDX document (SBOM), carried at SBOMPath; none when nil.
	SBOM []byte
}

// Image assembles the image: the root layer, then the binaries' layer.
func (s Spec) Image() (v1.Image, error) {
	root, err := tarball.LayerFromFile(s.RootLayer, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	var bins bytes.Buffer
	var docs map[string][]byte
	if s.SBOM != nil {
		docs = map[string][]byte{SBOMPath: s.SBOM}
	}
	if err := FileLayerTar(&bins, s.Binaries, docs, s.Created); err != nil {
		return nil, err
	}
	binLayer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(bins.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, root, binLayer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	p := s.Platform()
	cf.Architecture, cf.OS, cf.Variant = p.Architecture, p.OS, p.Variant
	cf.Created = v1.Time{Time: s.Created.UTC()}
	cf.Config.Entrypoint = s.Entrypoint
	cf.Config.Env = []string{"PATH=" + Path}
	cf.Config.User = fmt.Sprintf("%d:%d", NonRootUID, NonRootUID)
	cf.Config.WorkingDir = "/"
	cf.Config.Labels = s.Labels
	cf.History = []v1.History{
		{Created: cf.Created, CreatedBy: "hack/images: Debian packages of hack/images/packages.lock", Comment: "root"},
		{Created: cf.Created, CreatedBy: "hack/images: the Go binaries", Comment: "prism"},
	}
	return mutate.ConfigFile(img, cf)
}

// Platform is the image's OCI platform: linux and Spec.Arch, with arm64's variant v8 as
// containerd's platform matcher normalizes it (and as registries' arm64 images carry it).
func (s Spec) Platform() v1.Platform {
	p := v1.Platform{OS: "linux", Architecture: s.Arch}
	if p.Architecture == "" {
		p.Architecture = "amd64"
	}
	if p.Architecture == "arm64" {
		p.Variant = "v8"
	}
	return p
}

// WriteArchive writes the image as an OCI archive (a tar of an OCI image layout) to out, its
// index naming it s.Ref for containerd, podman and skopeo.
func (s Spec) WriteArchive(out string) (v1.Hash, error) {
	img, err := s.Image()
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, writeLayoutArchive(out, s.Created, func(p layout.Path, names layout.Option) error {
		return p.AppendImage(img, names)
	}, s.Ref)
}

// writeLayoutArchive writes an OCI archive (a tar of an OCI image layout, its files at mtime)
// to out, holding what add appends with names: the annotations that name it ref for
// containerd, podman and skopeo.
func writeLayoutArchive(out string, mtime time.Time, add func(p layout.Path, names layout.Option) error, ref string) error {
	dir, err := os.MkdirTemp(filepath.Dir(out), ".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := add(p, layout.WithAnnotations(map[string]string{
		AnnotationContainerdName: ref,
		AnnotationRefName:        ref,
	})); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarDir(dir, tmp, mtime); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}

// tarDir writes the files under dir into a tar at out, sorted, with fixed metadata.
func tarDir(dir, out string, mtime time.Time) error {
	var names []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "." {
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(n), Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Size: fi.Size(), Format: tar.FormatPAX}
		if fi.IsDir() {
			h.Name += "/"
			h.Mode, h.Typeflag, h.Size = 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !fi.IsDir() {
			src, err := os.Open(filepath.Join(dir, n))
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
