package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// newc writes a newc cpio archive the way GNU cpio does: a hard-linked file's data comes
// once, with its last name.
type entry struct {
	name       string
	mode       uint32
	ino, nlink uint32
	data       string
}

func newc(entries []entry) []byte {
	var b bytes.Buffer
	pad := func() {
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	for _, e := range append(entries, entry{name: "TRAILER!!!", nlink: 1}) {
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			e.ino, e.mode, 0, 0, e.nlink, 0, len(e.data), 0, 1, 0, 0, len(e.name)+1, 0)
		b.WriteString(e.name)
		b.WriteByte(0)
		pad()
		b.WriteString(e.data)
		pad()
	}
	return b.Bytes()
}

func TestArchiveIsAnImageLayoutContainerdCanName(t *testing.T) {
	dir := t.TempDir()
	cpio := filepath.Join(dir, "root.cpio")
	if err := os.WriteFile(cpio, newc([]entry{
		{name: ".", mode: 0o40755, ino: 1, nlink: 2},
		{name: "./dev", mode: 0o40755, ino: 2, nlink: 2},
		{name: "./dev/console", mode: 0o20600, ino: 3, nlink: 1},
		{name: "./init", mode: 0o100755, ino: 4, nlink: 1, data: "#!/bin/sh\n"},
		{name: "./bin", mode: 0o40755, ino: 5, nlink: 2},
		{name: "./bin/a", mode: 0o100755, ino: 6, nlink: 2},             // hard link, data later
		{name: "./bin/b", mode: 0o100755, ino: 6, nlink: 2, data: "ab"}, // the data
		{name: "./bin/c", mode: 0o120777, ino: 7, nlink: 1, data: "b"},  // symlink
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sleep")
	if err := os.WriteFile(bin, []byte("ELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	if err := run(out, "prism.local/e2e/t:v1", "/sleep", []string{bin + ":/usr/local/bin/sleep:0755"},
		[]string{cpio}, []string{"dev/", "init"}, nil); err != nil {
		t.Fatal(err)
	}

	blobs := map[string][]byte{}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		blobs[h.Name] = b
	}
	if string(blobs["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %q", blobs["oci-layout"])
	}
	blob := func(d descriptor) []byte {
		b, ok := blobs["blobs/sha256/"+d.Digest[len("sha256:"):]]
		if !ok {
			t.Fatalf("no blob %s", d.Digest)
		}
		sum := sha256.Sum256(b)
		if "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: digest or size does not match its content", d.Digest)
		}
		return b
	}
	var index struct{ Manifests []descriptor }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, blobs["index.json"])
	}
	if n := index.Manifests[0].Annotations["io.containerd.image.name"]; n != "prism.local/e2e/t:v1" {
		t.Errorf("image name %q", n)
	}
	var manifest struct {
		Config descriptor
		Layers []descriptor
	}
	if err := json.Unmarshal(blob(index.Manifests[0]), &manifest); err != nil || len(manifest.Layers) != 2 {
		t.Fatalf("manifest: %v %+v", err, manifest)
	}
	var cfg struct {
		Config struct{ Entrypoint []string }
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(blob(manifest.Config), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.RootFS.DiffIDs) != 2 || cfg.RootFS.DiffIDs[0] != manifest.Layers[0].Digest || fmt.Sprint(cfg.Config.Entrypoint) != "[/sleep]" {
		t.Errorf("config %+v", cfg)
	}

	got := map[string]string{}
	for _, l := range manifest.Layers {
		lr := tar.NewReader(bytes.NewReader(blob(l)))
		for {
			h, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(lr)
			got[h.Name] = fmt.Sprintf("%c %o %s%s", h.Typeflag, h.Mode, h.Linkname, b)
		}
	}
	want := map[string]string{
		"bin/":                "5 755 ",
		"bin/b":               "0 755 ab",
		"bin/a":               "1 755 bin/b",
		"bin/c":               "2 777 b",
		"usr/":                "5 755 ",
		"usr/local/":          "5 755 ",
		"usr/local/bin/":      "5 755 ",
		"usr/local/bin/sleep": "0 755 ELF",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("layers hold\n%v\nwant\n%v", got, want)
	}
}
