package rook

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prism-storage/prism/config/crd"
)

// The CRD's rule on spec.osd.ignoreHealthChecks refuses exactly the codes the gate never ignores.
func TestIgnoreHealthChecksRuleNamesTheBlockingChecks(t *testing.T) {
	b, err := crd.Bases.ReadFile("bases/prism.storage.io_hybridstoragepolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	i := strings.Index(y, "ignoreHealthChecks:")
	j := strings.Index(y[i:], "rule: '!self.exists(c, c in [")
	if i < 0 || j < 0 {
		t.Fatal("the CRD has no rule on ignoreHealthChecks")
	}
	rule := y[i+j:]
	rule = rule[:strings.Index(rule, "])'")]
	var inRule []string
	for _, m := range regexp.MustCompile(`''([A-Z0-9_]+)''`).FindAllStringSubmatch(rule, -1) {
		inRule = append(inRule, m[1])
	}
	var inGo []string
	for code, blocks := range blockingChecks {
		if blocks {
			inGo = append(inGo, code)
		}
	}
	sort.Strings(inRule)
	sort.Strings(inGo)
	if !slices.Equal(inRule, inGo) {
		t.Errorf("CRD rule refuses %v, the gate blocks on %v", inRule, inGo)
	}
}

func TestCheckBlocks(t *testing.T) {
	for _, tc := range []struct {
		check  HealthCheck
		ignore []string
		blocks bool
	}{
		{HealthCheck{Code: "PG_DAMAGED"}, nil, true},
		{HealthCheck{Code: "PG_DAMAGED"}, []string{"PG_DAMAGED"}, true},
		{HealthCheck{Code: "PG_DAMAGED", Muted: true}, nil, false},
		{HealthCheck{Code: "OSD_HOST_DOWN"}, nil, false},
		{HealthCheck{Code: "POOL_NO_REDUNDANCY"}, nil, false},
		{HealthCheck{Code: "CEPHADM_STRAY_DAEMON"}, nil, true},
		{HealthCheck{Code: "CEPHADM_STRAY_DAEMON"}, []string{"CEPHADM_STRAY_DAEMON"}, false},
	} {
		if got := checkBlocks(tc.check, tc.ignore); (got != "") != tc.blocks {
			t.Errorf("%+v ignoring %v: %q, want blocks %v", tc.check, tc.ignore, got, tc.blocks)
		}
	}
}
