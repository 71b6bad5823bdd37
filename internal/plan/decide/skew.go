package decide

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// AgentSkew says why an agent of version agent must not get plans from an operator of version
// operator ("" when it may). Both are release versions (vMAJOR.MINOR.PATCH, the chart's
// appVersion with a v, or the same without it): the agent may be one minor release older or
// newer than the operator within one major, the window of a rolling upgrade or rollback
// (docs/version-skew.md). A version that is not a release (a development build's commit, "dev",
// none reported) is not checked: it says nothing about what the binary understands.
func AgentSkew(operator, agent string) string {
	op, ag := release(operator), release(agent)
	if op == "" || ag == "" {
		return ""
	}
	if semver.Major(op) != semver.Major(ag) {
		return fmt.Sprintf("its agent is %s and this operator %s: across major versions the plan's meaning may differ; upgrade the agent (docs/version-skew.md)", ag, op)
	}
	om, am := minor(op), minor(ag)
	switch {
	case am < om-1:
		return fmt.Sprintf("its agent is %s, more than one minor release older than this operator (%s): it may not understand the plan; upgrade the agent (docs/version-skew.md)", ag, op)
	case am > om+1:
		return fmt.Sprintf("its agent is %s, more than one minor release newer than this operator (%s): upgrade the operator (docs/version-skew.md)", ag, op)
	}
	return ""
}

// release is v as a canonical release version ("" when it is not one: a prerelease or build
// suffix, a commit, "dev").
func release(v string) string {
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !semver.IsValid(v) || semver.Prerelease(v) != "" || semver.Build(v) != "" || strings.Count(v, ".") != 2 {
		return ""
	}
	return semver.Canonical(v)
}

func minor(v string) int {
	var maj, min int
	fmt.Sscanf(semver.MajorMinor(v), "v%d.%d", &maj, &min)
	return min
}
