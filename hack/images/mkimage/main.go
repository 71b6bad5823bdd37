// Command mkimage builds the pieces of Prism's image for hack/images/build.sh:
//
//	mkimage root --lock hack/images/packages.lock --debs DIR --out root.tar.gz
//	mkimage image --root root.tar.gz --bin /prism-manager=PATH --bin /prism-agent=PATH \
//	    --chart charts/prism --created UNIX --revision REV --out prism.oci.tar \
//	    [--arch arm64] [--lock hack/images/packages.lock --sbom-out prism.spdx.json]
//	mkimage index --chart charts/prism --created UNIX --out prism-multiarch.oci.tar ARCHIVE...
//	mkimage inspect ARCHIVE
package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prism-storage/prism/hack/images"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mkimage root|image|index|inspect ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "root":
		err = root(os.Args[2:])
	case "image":
		err = image(os.Args[2:])
	case "index":
		err = index(os.Args[2:])
	case "inspect":
		err = inspect(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

// root checks every locked .deb's SHA256 and writes the root layer, gzip-compressed.
func root(args []string) error {
	fs := flag.NewFlagSet("root", flag.ExitOnError)
	lockPath := fs.String("lock", "hack/images/packages.lock", "the lock file")
	debs := fs.String("debs", "", "directory holding the locked .debs")
	out := fs.String("out", "", "the layer to write (.tar.gz)")
	fs.Parse(args)
	f, err := os.Open(*lockPath)
	if err != nil {
		return err
	}
	lock, err := images.ReadLock(f)
	f.Close()
	if err != nil {
		return err
	}
	var paths []string
	for _, p := range lock {
		path := filepath.Join(*debs, p.DebFileName())
		if err := checkSHA256(path, p.SHA256); err != nil {
			return err
		}
		paths = append(paths, path)
	}
	tmp := *out + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	zw := gzip.NewWriter(w)
	if err := images.BuildRootTar(zw, paths, time.Unix(0, 0)); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, *out)
}

func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: SHA256 %s, the lock says %s", path, got, want)
	}
	return nil
}

type binFlags map[string]string

func (b binFlags) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binFlags) Set(v string) error {
	dest, src, ok := strings.Cut(v, "=")
	if !ok || !strings.HasPrefix(dest, "/") {
		return fmt.Errorf("--bin %q: want /DEST=PATH", v)
	}
	b[dest] = src
	return nil
}

func image(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	rootLayer := fs.String("root", "", "the root layer (.tar.gz)")
	arch := fs.String("arch", "amd64", "the architecture of the root layer's packages and of the binaries")
	bins := binFlags{}
	fs.Var(bins, "bin", "/DEST=PATH: a binary to put into the image (repeatable)")
	chart := fs.String("chart", "charts/prism", "the chart whose default image this is")
	created := fs.Int64("created", 0, "creation time, Unix seconds (the commit's time)")
	revision := fs.String("revision", "", "the source revision (label)")
	version := fs.String("version", "", "the binaries' version (label)")
	out := fs.String("out", "", "the OCI archive to write")
	lockPath := fs.String("lock", "", "the root layer's lock file, for the SBOM (none without it)")
	sbomOut := fs.String("sbom-out", "", "also write the SBOM here")
	fs.Parse(args)
	ref, err := images.ChartRef(*chart)
	if err != nil {
		return err
	}
	sbom, err := imageSBOM(ref, *lockPath, bins, time.Unix(*created, 0))
	if err != nil {
		return err
	}
	if sbom != nil && *sbomOut != "" {
		if err := os.WriteFile(*sbomOut, sbom, 0o644); err != nil {
			return err
		}
	}
	_, tag, _ := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":")
	spec := images.Spec{
		Ref:        ref,
		Arch:       *arch,
		RootLayer:  *rootLayer,
		Binaries:   bins,
		Created:    time.Unix(*created, 0),
		Entrypoint: []string{"/prism-manager"},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "prism",
			"org.opencontainers.image.source":   "https://github.com/prism-storage/prism",
			"org.opencontainers.image.version":  tag,
			"org.opencontainers.image.revision": *revision,
			"io.prism-storage.binary-version":   *version,
		},
		SBOM: sbom,
	}
	digest, err := spec.WriteArchive(*out)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", ref, digest, *out)
	return nil
}

// imageSBOM is the SPDX document of the root layer's locked packages and the binaries (nil
// without a lock).
func imageSBOM(ref, lockPath string, bins map[string]string, created time.Time) ([]byte, error) {
	if lockPath == "" {
		return nil, nil
	}
	f, err := os.Open(lockPath)
	if err != nil {
		return nil, err
	}
	lock, err := images.ReadLock(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	for dest, src := range bins {
		if data[dest], err = os.ReadFile(src); err != nil {
			return nil, err
		}
	}
	return images.SBOM(ref, lock, data, created)
}

// index writes the multi-platform archive of single-image archives, named as the chart's
// default image.
func index(args []string) error {
	fs := flag.NewFlagSet("index", flag.ExitOnError)
	chart := fs.String("chart", "charts/prism", "the chart whose default image this is")
	created := fs.Int64("created", 0, "the archive's file times, Unix seconds (the commit's time)")
	out := fs.String("out", "", "the OCI archive to write")
	fs.Parse(args)
	if fs.NArg() == 0 || *out == "" {
		return fmt.Errorf("usage: mkimage index --out ARCHIVE ARCHIVE...")
	}
	ref, err := images.ChartRef(*chart)
	if err != nil {
		return err
	}
	digest, err := images.WriteIndexArchive(*out, ref, time.Unix(*created, 0), fs.Args()...)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %s\n", ref, digest, *out)
	return nil
}

func inspect(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: mkimage inspect ARCHIVE")
	}
	if ia, err := images.ReadIndexArchive(args[0]); err == nil {
		fmt.Printf("ref %s\nindex %s\n", ia.Index.Annotations[images.AnnotationContainerdName], ia.Index.Digest)
		for _, m := range ia.Manifests {
			fmt.Printf("platform %s %s\n", m.Platform, m.Digest)
		}
		return nil
	}
	a, err := images.ReadArchive(args[0])
	if err != nil {
		return err
	}
	fi, err := os.Stat(args[0])
	if err != nil {
		return err
	}
	digest, err := a.Image.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("ref %s\ndigest %s\nplatform %s\narchive %.1f MB, layers %.1f MB compressed, %.1f MB of files unpacked (%d paths)\n",
		a.Annotations[images.AnnotationContainerdName], digest, a.Config.Platform(), mb(fi.Size()), mb(a.Size), mb(a.Unpacked), len(a.Files))
	return nil
}

func mb(n int64) float64 { return float64(n) / 1e6 }
