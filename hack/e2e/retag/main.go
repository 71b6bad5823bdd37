// Command retag copies an OCI image archive (an OCI layout as a tar, one manifest) under
// another image name: only the name annotations of index.json's manifest change, so the
// manifest, its digest and every blob stay as they were. The e2e upgrade drill imports the
// previous release's image beside this tree's, and both releases' charts name the same
// repository and tag (hack/e2e/previous-release.sh).
//
//	retag -in ARCHIVE -out ARCHIVE -name REF
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// The annotations containerd's import reads the image name from (hack/images/image.go).
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

func main() {
	in := flag.String("in", "", "the OCI archive to read")
	out := flag.String("out", "", "the OCI archive to write")
	name := flag.String("name", "", "the new image reference, e.g. prism.local/e2e/prism:v0.1.0")
	flag.Parse()
	if *in == "" || *out == "" || *name == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := retagFile(*in, *out, *name); err != nil {
		fmt.Fprintln(os.Stderr, "retag:", err)
		os.Exit(1)
	}
}

func retagFile(in, out, name string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := out + ".tmp"
	dst, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := retag(src, dst, name); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// retag copies the tar r to w, index.json renamed to name.
func retag(r io.Reader, w io.Writer, name string) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	seen := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if h.Name != "index.json" {
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := io.Copy(tw, tr); err != nil {
				return err
			}
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if body, err = renameIndex(body, name); err != nil {
			return err
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
		seen = true
	}
	if !seen {
		return errors.New("no index.json: not an OCI layout")
	}
	return tw.Close()
}

// renameIndex sets the name annotations of an index.json's one manifest; every other field is
// kept as it was (numbers too).
func renameIndex(index []byte, name string) ([]byte, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(index))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	manifests, _ := doc["manifests"].([]any)
	if len(manifests) != 1 {
		return nil, fmt.Errorf("index.json: manifests: want one manifest, have %d", len(manifests))
	}
	m, ok := manifests[0].(map[string]any)
	if !ok {
		return nil, errors.New("index.json: manifests[0]: not an object")
	}
	ann, _ := m["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		m["annotations"] = ann
	}
	ann[annotationContainerdName] = name
	ann[annotationRefName] = name
	return json.Marshal(doc)
}
