package classificationpolicy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/advisor"
	"github.com/prism-storage/prism/internal/ioclass"
)

// findNodes lists the StorageNodes whose cache plan names the policy.
func (r *Reconciler) findNodes(ctx context.Context, s *scope) error {
	list := &prismv1.StorageNodeList{}
	if err := r.Client.List(ctx, list); err != nil {
		return fmt.Errorf("listing storage nodes: %w", err)
	}
	for _, sn := range list.Items {
		if policyOf(&sn) == s.policy.Name {
			s.nodes = append(s.nodes, sn)
		}
	}
	sort.Slice(s.nodes, func(i, j int) bool { return s.nodes[i].Name < s.nodes[j].Name })
	s.listed = true
	return nil
}

// policyOf is the ClassificationPolicy a StorageNode's cache plan names ("" for none).
func policyOf(sn *prismv1.StorageNode) string {
	if sn.Spec.Plan == nil || sn.Spec.Plan.Cache == nil {
		return ""
	}
	return sn.Spec.Plan.Cache.ClassificationPolicyName
}

// loadSummary counts the nodes that run the file with the given hash: their plan carries
// it, and every cache they report runs with exactly its classes (ids and rules, as casadm's
// per-class statistics name them). problems say, per other node, what is missing.
func loadSummary(nodes []prismv1.StorageNode, cfg ioclass.Config, hash string) (loaded int, problems []string) {
	want := map[int32]string{}
	for _, c := range cfg.Classes {
		want[int32(c.ID)] = c.Rule
	}
	for i := range nodes {
		if why := notLoaded(&nodes[i], want, hash); why != "" {
			problems = append(problems, nodes[i].Name+": "+why)
			continue
		}
		loaded++
	}
	return loaded, problems
}

func notLoaded(sn *prismv1.StorageNode, want map[int32]string, hash string) string {
	switch csv := sn.Spec.Plan.Cache.IOClassCSV; {
	case csv == "":
		return "its plan carries no IO class file yet"
	case advisor.CSVHash(csv) != hash:
		return "its plan carries another IO class file than " + short(hash)
	case len(sn.Status.Caches) == 0:
		return "reports no cache yet"
	}
	for _, c := range sn.Status.Caches {
		if c.State != prismv1.CacheRunning {
			msg := fmt.Sprintf("cache on %s is %s", c.FastDevice, c.State)
			if c.Message != "" {
				msg += " (" + c.Message + ")"
			}
			return msg
		}
		if why := classesDiffer(c.IOClasses, want); why != "" {
			return fmt.Sprintf("cache on %s %s", c.FastDevice, why)
		}
	}
	return ""
}

// classesDiffer compares the classes a cache reports with the file's. A reported class
// without a name is compared by id only.
func classesDiffer(got []prismv1.IOClassUsage, want map[int32]string) string {
	seen := map[int32]bool{}
	for _, u := range got {
		rule, ok := want[u.ID]
		switch {
		case !ok:
			return fmt.Sprintf("reports class %d, which the file does not have", u.ID)
		case u.Name != "" && u.Name != rule:
			return fmt.Sprintf("runs class %d as %q, the file has %q", u.ID, u.Name, rule)
		}
		seen[u.ID] = true
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if !seen[id] {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	if len(missing) > 0 {
		return "reports no statistics for classes " + strings.Join(missing, ", ") + ": they are not loaded"
	}
	return ""
}

// short abbreviates a hash for messages.
func short(hash string) string {
	if len(hash) > 19 {
		return hash[:19]
	}
	return hash
}
