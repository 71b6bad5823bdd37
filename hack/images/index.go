package images

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WriteIndexArchive writes the multi-platform image: an OCI archive whose index.json names
// (for containerd, podman and skopeo, as WriteArchive does) one image index, the object a
// registry serves under a multi-architecture tag, which lists each single-image archive's
// image with the platform of its config. The images keep their digests: a node that imports
// the index for its platform gets the very image of that platform's own archive.
func WriteIndexArchive(out, ref string, created time.Time, archives ...string) (v1.Hash, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, archive := range archives {
		dir, err := os.MkdirTemp(filepath.Dir(out), ".layout-")
		if err != nil {
			return v1.Hash{}, err
		}
		// The blobs are read from dir when the index is written below.
		defer os.RemoveAll(dir)
		_, img, err := layoutImage(archive, dir)
		if err != nil {
			return v1.Hash{}, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return v1.Hash{}, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, writeLayoutArchive(out, created, func(p layout.Path, names layout.Option) error {
		return p.AppendIndex(idx, names)
	}, ref)
}

// layoutImage unpacks a single-image OCI archive into dir and returns its descriptor in
// index.json and its image, read from dir.
func layoutImage(archive, dir string) (v1.Descriptor, v1.Image, error) {
	if err := untar(archive, dir); err != nil {
		return v1.Descriptor{}, nil, err
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return v1.Descriptor{}, nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, nil, err
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsImage() {
		return v1.Descriptor{}, nil, fmt.Errorf("%s: want one image in index.json, found %d descriptors", archive, len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	return im.Manifests[0], img, err
}

// IndexArchive is a multi-platform OCI archive read back: the index's descriptor in
// index.json (its annotations name it) and the platforms' images, in the index's order.
type IndexArchive struct {
	Index     v1.Descriptor
	Manifests []v1.Descriptor // each with its Platform
	Configs   []*v1.ConfigFile
}

// ReadIndexArchive reads an archive WriteIndexArchive wrote: exactly one image index in
// index.json, listing images only.
func ReadIndexArchive(archive string) (*IndexArchive, error) {
	dir, err := os.MkdirTemp("", "prism-oci-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := untar(archive, dir); err != nil {
		return nil, err
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	tm, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(tm.Manifests) != 1 || !tm.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: want one image index in index.json, found %+v", archive, tm.Manifests)
	}
	out := &IndexArchive{Index: tm.Manifests[0]}
	idx, err := top.ImageIndex(out.Index.Digest)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", archive, d.Digest, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		// Every layer's blob is in the archive (a registry push or ctr import needs them all).
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range layers {
			ld, err := l.Digest()
			if err != nil {
				return nil, err
			}
			if _, err := os.Stat(filepath.Join(dir, "blobs", ld.Algorithm, ld.Hex)); err != nil {
				return nil, fmt.Errorf("%s: %s's layer %s: %w", archive, d.Platform, ld, err)
			}
		}
		out.Manifests = append(out.Manifests, d)
		out.Configs = append(out.Configs, cf)
	}
	return out, nil
}
