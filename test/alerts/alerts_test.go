package alerts

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The alerts the brief asks for; a rule added or removed must update this list, the docs and
// the unit tests together.
var wantAlerts = []string{
	"PrismAgentDown",
	"PrismBlueFSSpillover",
	"PrismCacheDirtyTooLong",
	"PrismCacheFailed",
	"PrismDeviceWearCritical",
	"PrismDeviceWearHigh",
	"PrismDeviceWearOutBeforeWarranty",
	"PrismDeviceWearOutSoon",
	"PrismOSDDBSpillForecast",
	"PrismPolicyDBSpillForecast",
	"PrismQLCWriteAmplificationHigh",
}

func TestPromtoolCheckRules(t *testing.T) {
	out := RunPromtool(t, Root(), "check", "rules", RulesFile)
	if !strings.Contains(out, fmt.Sprintf("SUCCESS: %d rules found", len(wantAlerts))) {
		t.Errorf("promtool check rules: want %d rules\n%s", len(wantAlerts), out)
	}
}

func TestPromtoolUnitTests(t *testing.T) {
	RunPromtool(t, Root(), "test", "rules", TestsFile)
}

// TestEveryAlertIsTestedAndDocumented: every alert has a severity, a summary and description
// naming where it happens, a runbook_url to its runbook (which exists), a row in
// docs/alerts.md, and in the promtool tests at least one case where it fires and one where it
// does not; the tests name no alert that does not exist (such a case would pass vacuously).
func TestEveryAlertIsTestedAndDocumented(t *testing.T) {
	raw, err := os.ReadFile(Path(RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	alerts := ReadRuleFile(t, raw).Alerts()
	names := make([]string, 0, len(alerts))
	for n := range alerts {
		names = append(names, n)
	}
	sort.Strings(names)
	if !slices.Equal(names, wantAlerts) {
		t.Errorf("alerts in %s: got %v, want %v", RulesFile, names, wantAlerts)
	}

	doc, err := os.ReadFile(Path("docs/alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	firing, quiet := unitTestCases(t)
	for name, rules := range alerts {
		for _, r := range rules {
			switch r.Labels["severity"] {
			case "warning", "critical", "info":
			default:
				t.Errorf("%s: severity %q, want warning, critical or info", name, r.Labels["severity"])
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("%s: no %s annotation", name, a)
				}
			}
			// A per-policy alert (aggregated by policy) names the policy instead.
			if s := r.Annotations["summary"]; !strings.Contains(s, "$labels.policy") && (!strings.Contains(s, "$labels.node") ||
				!containsAny(s, "$labels.device", "$labels.cache", "$labels.ceph_daemon", "$labels.instance")) {
				t.Errorf("%s: summary %q does not name the node and the device (or cache, OSD, target), or the policy", name, s)
			}
			if got, want := r.Annotations["runbook_url"], DefaultRunbookBase+name+".md"; got != want {
				t.Errorf("%s: runbook_url %q, want %q", name, got, want)
			}
		}
		rb, err := os.ReadFile(Path("docs/runbooks/alerts/" + name + ".md"))
		if err != nil {
			t.Errorf("%s: no runbook: %v", name, err)
		} else {
			for _, section := range []string{"## Meaning", "## Confirm", "## Act"} {
				if !strings.Contains(string(rb), section) {
					t.Errorf("runbook of %s has no %q section", name, section)
				}
			}
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/alerts.md does not list %s", name)
		}
		if firing[name] == 0 {
			t.Errorf("%s: no promtool case where it fires", name)
		}
		if quiet[name] == 0 {
			t.Errorf("%s: no promtool case where it does not fire", name)
		}
	}
	for name := range firing {
		if _, ok := alerts[name]; !ok {
			t.Errorf("%s tests alert %s, which no rule defines", TestsFile, name)
		}
	}
	for name := range quiet {
		if _, ok := alerts[name]; !ok {
			t.Errorf("%s tests alert %s, which no rule defines", TestsFile, name)
		}
	}
}

// unitTestCases counts, per alert name, the promtool cases expecting it to fire and not to.
func unitTestCases(t *testing.T) (firing, quiet map[string]int) {
	t.Helper()
	raw, err := os.ReadFile(Path(TestsFile))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Tests []struct {
			AlertRuleTest []struct {
				AlertName string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		t.Fatal(err)
	}
	firing, quiet = map[string]int{}, map[string]int{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.AlertName]++
			} else {
				quiet[a.AlertName]++
			}
		}
	}
	return firing, quiet
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// thresholdMarker is a number the chart substitutes: "<number> # threshold:<value name>".
var thresholdMarker = regexp.MustCompile(`(?m)([0-9][0-9.]*) # threshold:(\w+)$`)

// TestThresholdMarkersMatchValues: each "# threshold:<name>" marker in the rule file names a
// value in monitoring.prometheusRule.thresholds whose default is the number written there, and
// each threshold value has a marker, so the literal file tested here is what the chart renders
// with default values.
func TestThresholdMarkersMatchValues(t *testing.T) {
	raw, err := os.ReadFile(Path(RulesFile))
	if err != nil {
		t.Fatal(err)
	}
	valuesRaw, err := os.ReadFile(Path("charts/prism/values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Monitoring struct {
			PrometheusRule struct {
				Thresholds map[string]float64 `json:"thresholds"`
			} `json:"prometheusRule"`
		} `json:"monitoring"`
	}
	if err := yaml.Unmarshal(valuesRaw, &values); err != nil {
		t.Fatal(err)
	}
	thresholds := values.Monitoring.PrometheusRule.Thresholds
	if len(thresholds) == 0 {
		t.Fatal("values.yaml has no monitoring.prometheusRule.thresholds")
	}
	seen := map[string]bool{}
	for _, m := range thresholdMarker.FindAllStringSubmatch(string(raw), -1) {
		num, name := m[1], m[2]
		seen[name] = true
		def, ok := thresholds[name]
		if !ok {
			t.Errorf("marker threshold:%s has no value monitoring.prometheusRule.thresholds.%s", name, name)
			continue
		}
		if v, err := strconv.ParseFloat(num, 64); err != nil || v != def {
			t.Errorf("threshold:%s is %s in the rule file but %v in values.yaml", name, num, def)
		}
	}
	for name := range thresholds {
		if !seen[name] {
			t.Errorf("monitoring.prometheusRule.thresholds.%s has no marker in %s", name, RulesFile)
		}
	}
	all := regexp.MustCompile(`# threshold:\w`).FindAllString(string(raw), -1)
	if got := thresholdMarker.FindAllString(string(raw), -1); len(all) != len(got) {
		t.Errorf("%d threshold markers, but only %d directly follow a number at the end of a line", len(all), len(got))
	}
}
