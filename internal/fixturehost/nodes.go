package fixturehost

import (
	"os"
	"path/filepath"
	"sort"
)

// NodesDir is where the simulated nodes are described, relative to the repository root.
const NodesDir = "test/fixtures/nodes"

// IdentifyDir is where recorded NVMe Identify pages live, relative to the repository root.
const IdentifyDir = "internal/nvme/testdata"

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
