package fixturehost

import (
	"os"
	"path/filepath"
	"sort"
)

// NodesDir is where the simulated nodes are described, relative to the repository root.
const NodesDir = "test/fixtures/nodes"

// UnknownDrivesDir holds nodes of drives the drive database does not know, built from their
// raw evidence (evidence.go); its README.md gives each value's public source.
const UnknownDrivesDir = "test/fixtures/unknown-drives"

// IdentifyDir is where recorded NVMe Identify pages live, relative to the repository root.
const IdentifyDir = "internal/host/nvme/testdata"

// SmartctlDir is where recorded smartctl reports live, relative to the repository root.
const SmartctlDir = "internal/host/smart/testdata"

// smartctlFixtures is SmartctlDir given IdentifyDir's location (Build takes the latter).
func smartctlFixtures(identifyFixtures string) string {
	return filepath.Join(identifyFixtures, "..", "..", "smart", "testdata")
}

// LoadAll reads every node description in dir, sorted by node name.
func LoadAll(dir string) ([]Node, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for _, f := range files {
		n, err := Load(f)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, nil
}

// BuildAll builds every node under out/<node>/ and returns the host roots by node name.
func BuildAll(nodes []Node, out, identifyFixtures string) (map[string]string, error) {
	roots := map[string]string{}
	for _, n := range nodes {
		root := filepath.Join(out, n.Name)
		if err := os.RemoveAll(root); err != nil {
			return nil, err
		}
		if err := Build(n, root, identifyFixtures); err != nil {
			return nil, err
		}
		roots[n.Name] = root
	}
	return roots, nil
}

// BuildNode builds the fixture node named name (test/fixtures/nodes/<name>.yaml in the
// repository at repo) into the host root dir.
func BuildNode(repo, name, dir string) (Node, error) {
	n, err := Load(filepath.Join(repo, NodesDir, name+".yaml"))
	if err != nil {
		return Node{}, err
	}
	return n, Build(n, dir, filepath.Join(repo, IdentifyDir))
}
