package ioclass

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prism-storage/prism/api/v1alpha1"
)

// Warnings lists problems that do not stop a policy from loading. Today: a
// class using filesystem-level conditions (Metadata, Directory, FileSize,
// Extension, FileNamePrefix, FileOffset). Those test the file an IO belongs
// to, and a Ceph OSD's data device is raw BlueStore with no filesystem, so
// they never match there (BlueStore's O_DIRECT buffers are anonymous memory,
// which is never metadata either). One warning per class, naming it.
func Warnings(spec *v1alpha1.ClassificationPolicySpec) []string {
	if spec == nil {
		return nil
	}
	var out []string
	for i := range spec.Classes {
		c := &spec.Classes[i]
		var used []string
		dead := false // some term has only filesystem-level alternatives
		for _, term := range c.AllOf {
			fsOnly := len(term.AnyOf) > 0
			for _, cond := range term.AnyOf {
				kind, ok := apiConditions[cond.Type]
				if !ok || !conditions[kind].fsLevel {
					fsOnly = false
					continue
				}
				if !slices.Contains(used, string(cond.Type)) {
					used = append(used, string(cond.Type))
				}
			}
			dead = dead || fsOnly
		}
		if len(used) == 0 {
			continue
		}
		effect := "so the class can never match there"
		if !dead {
			effect = "so those alternatives never match there (the class can still match through its other conditions)"
		}
		out = append(out, fmt.Sprintf("class %d %q uses %s: filesystem-level conditions see no file on a raw BlueStore device, %s",
			c.ID, c.Name, strings.Join(used, ", "), effect))
	}
	return out
}
