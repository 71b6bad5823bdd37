package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// index is an index.json as hack/images writes it (indented), one manifest.
const index = `{
   "schemaVersion": 2,
   "mediaType": "application/vnd.oci.image.index.v1+json",
   "manifests": [
      {
         "mediaType": "application/vnd.oci.image.manifest.v1+json",
         "size": 565,
         "digest": "sha256:67ba7120f137631d5bcff41ec4f0feccad5d76552d2ad16dbeac409b06868cbf",
         "annotations": {
            "io.containerd.image.name": "ghcr.io/prism-storage/prism:0.1.0",
            "org.opencontainers.image.ref.name": "ghcr.io/prism-storage/prism:0.1.0"
         },
         "artifactType": "application/vnd.oci.image.config.v1+json"
      }
   ]
}`

type file struct{ name, body string }

func archive(t *testing.T, files ...file) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func entries(t *testing.T, b []byte) []file {
	t.Helper()
	var out []file
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, file{h.Name, string(body)})
	}
}

func TestRetagRenamesOnlyTheIndex(t *testing.T) {
	blob := file{"blobs/sha256/67ba", `{"config":{}}`}
	layout := file{"oci-layout", `{"imageLayoutVersion":"1.0.0"}`}
	var out bytes.Buffer
	if err := retag(bytes.NewReader(archive(t, layout, blob, file{"index.json", index})), &out, "prism.local/e2e/prism:v0.1.0"); err != nil {
		t.Fatal(err)
	}
	got := entries(t, out.Bytes())
	if len(got) != 3 || got[0] != layout || got[1] != blob || got[2].name != "index.json" {
		t.Fatalf("entries %v: want oci-layout and the blob as they were, then index.json", got)
	}
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Manifests     []struct {
			MediaType, Digest, ArtifactType string
			Size                            int64
			Annotations                     map[string]string
		}
	}
	if err := json.Unmarshal([]byte(got[2].body), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Manifests[0]
	if m.Annotations["io.containerd.image.name"] != "prism.local/e2e/prism:v0.1.0" ||
		m.Annotations["org.opencontainers.image.ref.name"] != "prism.local/e2e/prism:v0.1.0" {
		t.Errorf("annotations %v: want both names prism.local/e2e/prism:v0.1.0", m.Annotations)
	}
	if m.Digest != "sha256:67ba7120f137631d5bcff41ec4f0feccad5d76552d2ad16dbeac409b06868cbf" || m.Size != 565 ||
		m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.ArtifactType == "" || doc.SchemaVersion != 2 {
		t.Errorf("manifest %+v (schema %d): the digest, size and types must stay", m, doc.SchemaVersion)
	}
}

func TestRetagRefusesWhatIsNotOneImage(t *testing.T) {
	two := strings.Replace(index, `"manifests": [`, `"manifests": [{"digest": "sha256:00"},`, 1)
	for name, files := range map[string][]file{
		"no index.json":       {{"oci-layout", "{}"}},
		"two manifests":       {{"index.json", two}},
		"index.json not JSON": {{"index.json", "{"}},
		"manifest not object": {{"index.json", `{"manifests": ["x"]}`}},
	} {
		err := retag(bytes.NewReader(archive(t, files...)), io.Discard, "x:y")
		if err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// FuzzRenameIndex: any input either fails or comes out as JSON naming the new image.
func FuzzRenameIndex(f *testing.F) {
	f.Add([]byte(index))
	f.Add([]byte(`{"manifests":[{}]}`))
	f.Add([]byte(`{"manifests":[{"annotations":null}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := renameIndex(in, "prism.local/e2e/prism:v0.1.0")
		if err != nil {
			return
		}
		var doc struct {
			Manifests []struct{ Annotations map[string]string }
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("output is not JSON: %v: %s", err, out)
		}
		if len(doc.Manifests) != 1 || doc.Manifests[0].Annotations["io.containerd.image.name"] != "prism.local/e2e/prism:v0.1.0" {
			t.Fatalf("output %s does not name the image", out)
		}
	})
}
