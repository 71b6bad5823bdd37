package images

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// SBOMPath is where the image carries its SPDX document.
const SBOMPath = "/usr/share/doc/prism/sbom.spdx.json"

// SPDX 2.3 JSON, the fields Prism fills (https://spdx.github.io/spdx-spec/v2.3/).
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	DocumentDescribes []string           `json:"documentDescribes"`
	Packages          []SPDXPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// SPDXPackage is one package of the document: the image, a Debian package, a Go binary or a
// Go module.
type SPDXPackage struct {
	SPDXID           string            `json:"SPDXID"`
	Name             string            `json:"name"`
	VersionInfo      string            `json:"versionInfo,omitempty"`
	Supplier         string            `json:"supplier,omitempty"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	PrimaryPurpose   string            `json:"primaryPackagePurpose,omitempty"`
	Checksums        []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs,omitempty"`
	Comment          string            `json:"comment,omitempty"`
}

type spdxChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// Purl returns the package URL of the package ("" when it has none).
func (p SPDXPackage) Purl() string {
	for _, r := range p.ExternalRefs {
		if r.Type == "purl" {
			return r.Locator
		}
	}
	return ""
}

var spdxIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// SBOM is the image's SPDX document: the Debian packages of the lock and, for each Go binary
// (destination path -> its bytes), the binary and the modules its build info lists. It is a
// pure function of its inputs (the namespace hashes them), so two builds write the same bytes.
func SBOM(ref string, lock []LockedPackage, binaries map[string][]byte, created time.Time) ([]byte, error) {
	ids := map[string]bool{}
	id := func(kind, name string) string {
		base := "SPDXRef-" + kind + "-" + strings.Trim(spdxIDUnsafe.ReplaceAllString(name, "-"), "-")
		out := base
		for n := 2; ids[out]; n++ {
			out = fmt.Sprintf("%s-%d", base, n)
		}
		ids[out] = true
		return out
	}
	image := SPDXPackage{SPDXID: id("Image", "prism"), Name: ref, DownloadLocation: "NOASSERTION", PrimaryPurpose: "CONTAINER",
		Supplier: "Organization: prism-storage"}
	if _, tag, ok := strings.Cut(ref[strings.LastIndex(ref, "/")+1:], ":"); ok {
		image.VersionInfo = tag
	}
	doc := spdxDocument{SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: ref,
		CreationInfo:      spdxCreationInfo{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: prism hack/images mkimage"}},
		DocumentDescribes: []string{image.SPDXID}, Packages: []SPDXPackage{image}}
	rel := func(a, typ, b string) { doc.Relationships = append(doc.Relationships, spdxRelationship{a, typ, b}) }
	rel(doc.SPDXID, "DESCRIBES", image.SPDXID)

	lock = append([]LockedPackage(nil), lock...)
	sort.Slice(lock, func(i, j int) bool {
		return lock[i].Name+" "+lock[i].Arch < lock[j].Name+" "+lock[j].Arch
	})
	for _, p := range lock {
		pkg := SPDXPackage{SPDXID: id("Deb", p.Name+"-"+p.Arch), Name: p.Name, VersionInfo: p.Version, Supplier: "Organization: Debian",
			DownloadLocation: "NOASSERTION", Checksums: []spdxChecksum{{"SHA256", p.SHA256}}, PrimaryPurpose: "LIBRARY",
			ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", fmt.Sprintf("pkg:deb/debian/%s@%s?arch=%s&distro=debian-12", p.Name, purlEscape(p.Version), p.Arch)}}}
		doc.Packages = append(doc.Packages, pkg)
		rel(image.SPDXID, "CONTAINS", pkg.SPDXID)
	}
	dests := make([]string, 0, len(binaries))
	for d := range binaries {
		dests = append(dests, d)
	}
	sort.Strings(dests)
	for _, dest := range dests {
		data := binaries[dest]
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: reading its Go build info: %w", dest, err)
		}
		sum := sha256.Sum256(data)
		bin := SPDXPackage{SPDXID: id("Bin", dest), Name: dest, VersionInfo: info.Main.Version, Supplier: "Organization: prism-storage",
			DownloadLocation: "NOASSERTION", PrimaryPurpose: "APPLICATION", Checksums: []spdxChecksum{{"SHA256", hex.EncodeToString(sum[:])}},
			ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + info.Main.Path + "@" + purlEscape(info.Main.Version)}},
			Comment:      "built with " + info.GoVersion + buildTags(info)}
		doc.Packages = append(doc.Packages, bin)
		rel(image.SPDXID, "CONTAINS", bin.SPDXID)
		std := SPDXPackage{SPDXID: id("Go", dest+"-stdlib"), Name: "stdlib", VersionInfo: info.GoVersion, DownloadLocation: "NOASSERTION",
			PrimaryPurpose: "LIBRARY", ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/stdlib@" + purlEscape(info.GoVersion)}}}
		doc.Packages = append(doc.Packages, std)
		rel(bin.SPDXID, "DEPENDS_ON", std.SPDXID)
		for _, m := range info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			dep := SPDXPackage{SPDXID: id("Go", dest+"-"+m.Path), Name: m.Path, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
				PrimaryPurpose: "LIBRARY", ExternalRefs: []spdxExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + m.Path + "@" + purlEscape(m.Version)}}}
			if m.Sum != "" {
				dep.Comment = "go.sum " + m.Sum
			}
			doc.Packages = append(doc.Packages, dep)
			rel(bin.SPDXID, "DEPENDS_ON", dep.SPDXID)
		}
	}
	// The namespace names this document's content: the same inputs, the same document.
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	doc.DocumentNamespace = "https://github.com/prism-storage/prism/spdx/" + spdxIDUnsafe.ReplaceAllString(ref, "-") + "-" + hex.EncodeToString(sum[:8])
	return json.MarshalIndent(doc, "", " ")
}

func buildTags(info *buildinfo.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key == "-tags" && s.Value != "" {
			return ", tags " + s.Value
		}
	}
	return ""
}

// purlEscape escapes a version for a package URL (":" of an epoch, "+" of a Debian revision).
func purlEscape(v string) string {
	return strings.NewReplacer("%", "%25", ":", "%3A", "+", "%2B", " ", "%20").Replace(v)
}

// ReadSBOM reads an SPDX document as SBOM writes it: its packages.
func ReadSBOM(b []byte) ([]SPDXPackage, error) {
	var doc spdxDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("SBOM: %w", err)
	}
	if doc.SPDXVersion != "SPDX-2.3" {
		return nil, fmt.Errorf("SBOM: spdxVersion %q, want SPDX-2.3", doc.SPDXVersion)
	}
	return doc.Packages, nil
}
