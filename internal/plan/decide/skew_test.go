package decide

import (
	"strings"
	"testing"
)

func TestAgentSkew(t *testing.T) {
	for _, tc := range []struct {
		operator, agent, want string
	}{
		{"v0.4.0", "v0.4.2", ""},
		{"0.4.0", "v0.3.9", ""}, // one minor older: a rolling upgrade
		{"v0.4.0", "0.5.0", ""}, // one minor newer: a rollback
		{"v0.4.0", "v0.2.7", "more than one minor release older"},
		{"v0.4.0", "v0.6.0", "more than one minor release newer"},
		{"v1.0.0", "v0.9.0", "across major versions"},
		{"v0.4.0", "af611f4", ""},           // a development build's commit
		{"v0.4.0", "v0.2.0-rc.1", ""},       // a prerelease is not a release
		{"v0.4.0", "v0.2.0-3-gabc1234", ""}, // git describe past a tag
		{"dev", "v0.1.0", ""},
		{"v0.4.0", "", ""}, // an agent that reports no version
	} {
		got := AgentSkew(tc.operator, tc.agent)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("AgentSkew(%q, %q) = %q, want %q", tc.operator, tc.agent, got, tc.want)
		}
	}
}

func FuzzAgentSkew(f *testing.F) {
	f.Add("v0.4.0", "v0.2.0")
	f.Add("1.2.3", "v1.2.3-rc.1")
	f.Fuzz(func(t *testing.T, operator, agent string) {
		why := AgentSkew(operator, agent)
		if why != "" && (release(operator) == "" || release(agent) == "") {
			t.Fatalf("%q, %q: refused with a version that is not a release: %s", operator, agent, why)
		}
		if AgentSkew(operator, operator) != "" {
			t.Fatalf("%q refuses itself", operator)
		}
	})
}
