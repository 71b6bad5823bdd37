// Command ociarchive writes a test image as an OCI image layout in a tar archive, the form
// `ctr -n k8s.io images import` reads, with the Go standard library only: an OCI image layout
// is a tar of JSON documents and content-addressed blobs
// (https://github.com/opencontainers/image-spec/blob/main/image-layout.md). It is the e2e
// guest's way to get images into containerd without a registry or a container engine; it is
// test-only (Prism's own images are built by make images).
//
//	ociarchive -o out.tar -name prism.local/e2e/sleep:v1 -file bin/sleep:/sleep:0755 -entrypoint /sleep
//	ociarchive -o ceph.tar -name prism.local/e2e/ceph:v20.2.4 -cpio base.cpio -exclude dev/ -exclude init
//	ociarchive -o rook.tar -name prism.local/e2e/rook:v1.20.4 -cpio base.cpio -file rook:/usr/local/bin/rook:0755
//
// Each -cpio (a newc archive, as hack/guest/build.sh writes the guest's root) and the set of
// -file entries become one uncompressed layer each, in that order.
package main

import (
	"archive/tar"
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// epoch is every entry's time: the same inputs give the same digests.
var epoch = time.Unix(0, 0)

func main() {
	var files, cpios, excludes, env multi
	out := flag.String("o", "", "output tar (OCI image layout)")
	name := flag.String("name", "", "image reference, e.g. prism.local/e2e/sleep:v1")
	entrypoint := flag.String("entrypoint", "", "entrypoint, words separated by spaces")
	flag.Var(&files, "file", "SRC:DST[:MODE] a file for the last layer (repeatable)")
	flag.Var(&cpios, "cpio", "a newc cpio archive to turn into a layer (repeatable)")
	flag.Var(&excludes, "exclude", "a path prefix in the cpio archives to leave out, e.g. dev/ (repeatable)")
	flag.Var(&env, "env", "KEY=VALUE for the image config (repeatable)")
	flag.Parse()
	if *out == "" || *name == "" || (len(files) == 0 && len(cpios) == 0) {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *name, *entrypoint, files, cpios, excludes, env); err != nil {
		fmt.Fprintln(os.Stderr, "ociarchive:", err)
		os.Exit(1)
	}
}

func run(out, name, entrypoint string, files, cpios, excludes, env []string) error {
	tmp, err := os.MkdirTemp(path.Dir(out), ".ociarchive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var layers []descriptor
	for i, c := range cpios {
		d, err := writeLayer(path.Join(tmp, fmt.Sprintf("layer%d", i)), func(tw *tar.Writer) error { return cpioToTar(c, excludes, tw) })
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		layers = append(layers, d)
	}
	if len(files) > 0 {
		d, err := writeLayer(path.Join(tmp, "files"), func(tw *tar.Writer) error { return addFiles(files, tw) })
		if err != nil {
			return err
		}
		layers = append(layers, d)
	}

	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	cfg := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      epoch.UTC().Format(time.RFC3339),
		"config":       map[string]any{"Env": env},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": digests(layers)},
	}
	if entrypoint != "" {
		cfg["config"].(map[string]any)["Entrypoint"] = strings.Fields(entrypoint)
	}
	cfgJSON, _ := json.Marshal(cfg)
	cfgDesc := blobDesc("application/vnd.oci.image.config.v1+json", cfgJSON)
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        cfgDesc,
		"layers":        layers,
	})
	manDesc := blobDesc("application/vnd.oci.image.manifest.v1+json", manifest)
	tag := name[strings.LastIndex(name, ":")+1:]
	if strings.Contains(tag, "/") {
		return fmt.Errorf("-name %s: want a tag (name:tag)", name)
	}
	manDesc.Annotations = map[string]string{
		"io.containerd.image.name":          name, // the full name ctr import gives the image
		"org.opencontainers.image.ref.name": tag,
	}
	manDesc.Platform = &platform{Architecture: "amd64", OS: "linux"}
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.index.v1+json",
		"manifests":     []descriptor{manDesc},
	})

	f, err := os.Create(out + ".tmp")
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	put := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := put("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	for i, l := range layers {
		name := fmt.Sprintf("layer%d", i)
		if i == len(layers)-1 && len(files) > 0 {
			name = "files"
		}
		if err := putFile(tw, "blobs/sha256/"+strings.TrimPrefix(l.Digest, "sha256:"), path.Join(tmp, name)); err != nil {
			return err
		}
	}
	for _, b := range [][]byte{cfgJSON, manifest} {
		if err := put("blobs/sha256/"+sum(b), b); err != nil {
			return err
		}
	}
	if err := put("index.json", index); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s %s (%d layers)\n", name, manDesc.Digest, len(layers))
	return os.Rename(out+".tmp", out)
}

func digests(ds []descriptor) []string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.Digest // uncompressed layers: the diff ID is the digest
	}
	return s
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

func blobDesc(mt string, b []byte) descriptor {
	return descriptor{MediaType: mt, Digest: "sha256:" + sum(b), Size: int64(len(b))}
}

type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) { c.n += int64(len(p)); return c.h.Write(p) }

// writeLayer writes an uncompressed layer tar to file and describes it.
func writeLayer(file string, fill func(*tar.Writer) error) (descriptor, error) {
	f, err := os.Create(file)
	if err != nil {
		return descriptor{}, err
	}
	defer f.Close()
	ch := &countingHash{h: sha256.New()}
	bw := bufio.NewWriterSize(io.MultiWriter(f, ch), 1<<20)
	tw := tar.NewWriter(bw)
	if err := fill(tw); err != nil {
		return descriptor{}, err
	}
	if err := tw.Close(); err != nil {
		return descriptor{}, err
	}
	if err := bw.Flush(); err != nil {
		return descriptor{}, err
	}
	return descriptor{
		MediaType: "application/vnd.oci.image.layer.v1.tar",
		Digest:    "sha256:" + hex.EncodeToString(ch.h.Sum(nil)),
		Size:      ch.n,
	}, f.Close()
}

func putFile(tw *tar.Writer, name, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: st.Size(), ModTime: epoch}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// addFiles writes SRC:DST[:MODE] entries, with their parent directories.
func addFiles(specs []string, tw *tar.Writer) error {
	dirs := map[string]bool{}
	for _, spec := range specs {
		parts := strings.Split(spec, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return fmt.Errorf("-file %s: want SRC:DST[:MODE]", spec)
		}
		mode := int64(0o644)
		if len(parts) == 3 {
			m, err := strconv.ParseInt(parts[2], 8, 32)
			if err != nil {
				return fmt.Errorf("-file %s: %w", spec, err)
			}
			mode = m
		}
		dst := strings.TrimPrefix(path.Clean(parts[1]), "/")
		var parents []string
		for d := path.Dir(dst); d != "." && d != "/"; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
					return err
				}
			}
		}
		b, err := os.ReadFile(parts[0])
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: mode, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// cpioToTar copies a newc ("070701") cpio archive into tw, leaving out the excluded prefixes
// and device nodes (a container runtime gives the container its own /dev).
func cpioToTar(file string, excludes []string, tw *tar.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	pad := func(n int64) error {
		if p := (4 - n%4) % 4; p > 0 {
			if _, err := r.Discard(int(p)); err != nil {
				return err
			}
			off += p
		}
		return nil
	}
	hdr := make([]byte, 110)
	pending := map[string][]*tar.Header{} // "dev:major:minor:ino" -> names waiting for the data
	var after []*tar.Header               // hard links to write after the current entry
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return fmt.Errorf("header at %d: %w", off, err)
		}
		off += 110
		if string(hdr[:6]) != "070701" {
			return fmt.Errorf("at %d: not a newc cpio header", off-110)
		}
		field := func(i int) (int64, error) {
			v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
			return int64(v), err
		}
		var v [13]int64
		for i := range v {
			if v[i], err = field(i); err != nil {
				return fmt.Errorf("at %d: %w", off-110, err)
			}
		}
		ino, mode, uid, gid, nlink, mtime, size, devmaj, devmin := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
		nameLen := v[11]
		nb := make([]byte, nameLen)
		if _, err := io.ReadFull(r, nb); err != nil {
			return err
		}
		off += nameLen
		if err := pad(110 + nameLen); err != nil {
			return err
		}
		name := strings.TrimPrefix(strings.TrimRight(string(nb), "\x00"), "./")
		if name == "TRAILER!!!" {
			for _, hs := range pending { // links whose data never came: empty files
				for _, h := range hs {
					if err := tw.WriteHeader(h); err != nil {
						return err
					}
				}
			}
			return nil
		}
		data := io.LimitReader(r, size)
		skip := name == "." || name == ""
		for _, e := range excludes {
			if name == strings.TrimSuffix(e, "/") || strings.HasPrefix(name, e) {
				skip = true
			}
		}
		h := &tar.Header{Name: name, Mode: mode & 0o7777, Uid: int(uid), Gid: int(gid), ModTime: time.Unix(mtime, 0), Format: tar.FormatPAX}
		switch mode & 0o170000 {
		case 0o040000:
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case 0o100000:
			h.Typeflag, h.Size = tar.TypeReg, size
			// newc stores a hard-linked file's data once, with its last name; the other
			// names come first with size 0. Hold those back, then link them to the data.
			key := fmt.Sprintf("%d:%d:%d", devmaj, devmin, ino)
			if nlink > 1 && size == 0 && !skip {
				h.Name = name
				pending[key] = append(pending[key], h)
				skip = true
			} else if nlink > 1 && !skip {
				after = append(after, pending[key]...)
				for _, p := range pending[key] {
					p.Typeflag, p.Linkname = tar.TypeLink, name
				}
				delete(pending, key)
			}
		case 0o120000:
			b, err := io.ReadAll(data)
			if err != nil {
				return err
			}
			h.Typeflag, h.Linkname = tar.TypeSymlink, string(b)
			data = strings.NewReader("")
		default: // devices, fifos, sockets
			skip = true
		}
		if !skip {
			if err := tw.WriteHeader(h); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if h.Typeflag == tar.TypeReg {
				if _, err := io.Copy(tw, data); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		for _, l := range after {
			if err := tw.WriteHeader(l); err != nil {
				return fmt.Errorf("%s: %w", l.Name, err)
			}
		}
		after = after[:0]
		if _, err := io.Copy(io.Discard, data); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		off += size
		if err := pad(size); err != nil {
			return err
		}
	}
}
