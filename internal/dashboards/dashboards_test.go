package dashboards

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

const committedDir = "../../charts/prism/files/dashboards"

// TestCommittedJSONUpToDate regenerates the dashboards in memory and fails when
// the committed JSON differs (run `go generate ./internal/dashboards`).
func TestCommittedJSONUpToDate(t *testing.T) {
	files, err := Render()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(committedDir, name))
		if err != nil {
			t.Errorf("%s: %v (run: go generate ./internal/dashboards)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s drifted from internal/dashboards: run go generate ./internal/dashboards and commit\n%s", name, firstDiff(got, want))
		}
	}
	committed, err := filepath.Glob(filepath.Join(committedDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range committed {
		if _, ok := files[filepath.Base(f)]; !ok {
			t.Errorf("%s is committed but no dashboard generates it", f)
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n committed: " + gl + "\n generated: " + wl
		}
	}
	return ""
}

// TestDocReferenceUpToDate: the panel reference in docs/dashboards.md is what
// the dashboards contain (run `go generate ./internal/dashboards`).
func TestDocReferenceUpToDate(t *testing.T) {
	data, err := os.ReadFile("../../docs/dashboards.md")
	if err != nil {
		t.Fatal(err)
	}
	boards, err := All()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Reference(boards)
	if err != nil {
		t.Fatal(err)
	}
	want, err := SpliceReference(string(data), ref)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(data) {
		t.Errorf("docs/dashboards.md's panel reference drifted: run go generate ./internal/dashboards\n%s", firstDiff(data, []byte(want)))
	}
}

// TestRoundTrip reads each committed file into the SDK's dashboard type and
// writes it back: the result must be byte-for-byte the file (the SDK reads
// every panel, option and query Grafana would), and a strict read must accept it.
func TestRoundTrip(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	files, err := filepath.Glob(filepath.Join(committedDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed dashboards in %s (%v)", committedDir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard.Dashboard
		if err := json.Unmarshal(data, &d); err != nil {
			t.Errorf("%s: unmarshal: %v", f, err)
			continue
		}
		again, err := Marshal(d)
		if err != nil {
			t.Errorf("%s: marshal: %v", f, err)
			continue
		}
		if !bytes.Equal(again, data) {
			t.Errorf("%s does not round-trip through dashboard.Dashboard\n%s", f, firstDiff(again, data))
		}
		// Twice: marshal(unmarshal(marshal(unmarshal(x)))) is stable too.
		var d2 dashboard.Dashboard
		if err := json.Unmarshal(again, &d2); err != nil {
			t.Fatal(err)
		}
		if third, _ := Marshal(d2); !bytes.Equal(third, again) {
			t.Errorf("%s: second round trip differs", f)
		}
		var strict dashboard.Dashboard
		if err := strict.UnmarshalJSONStrict(data); err != nil {
			t.Errorf("%s: strict unmarshal: %v", f, err)
		}
		// The round-tripped panels are still Prometheus queries.
		qs, err := Queries(d)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		} else if len(qs) == 0 {
			t.Errorf("%s: no queries after the round trip", f)
		}
	}
}

// TestStructure checks what Grafana needs and what the brief asks of every dashboard.
func TestStructure(t *testing.T) {
	boards, err := All()
	if err != nil {
		t.Fatal(err)
	}
	wantVars := map[string][]string{
		UIDOverview: {"datasource", "node", "topn"},
		UIDNode:     {"datasource", "node", "device"},
		UIDDevice:   {"datasource", "node", "device"},
	}
	if len(boards) != len(wantVars) {
		t.Fatalf("%d dashboards, want %d", len(boards), len(wantVars))
	}
	for _, b := range boards {
		d := b.Dashboard
		uid := *d.Uid
		var names []string
		for _, v := range d.Templating.List {
			names = append(names, v.Name)
			switch v.Name {
			case "datasource":
				if v.Type != dashboard.VariableTypeDatasource || v.Query == nil || v.Query.String == nil || *v.Query.String != "prometheus" {
					t.Errorf("%s: datasource variable is not of type prometheus: %+v", uid, v)
				}
			case "node", "device":
				if v.Type != dashboard.VariableTypeQuery || v.Datasource == nil || *v.Datasource.Uid != "${datasource}" {
					t.Errorf("%s: variable %s must be a query on ${datasource}", uid, v.Name)
				}
			}
		}
		if strings.Join(names, ",") != strings.Join(wantVars[uid], ",") {
			t.Errorf("%s: variables %v, want %v", uid, names, wantVars[uid])
		}
		ids := map[uint32]bool{}
		panels := 0
		for _, pr := range d.Panels {
			if r := pr.RowPanel; r != nil {
				if ids[r.Id] {
					t.Errorf("%s: duplicate id %d", uid, r.Id)
				}
				ids[r.Id] = true
				continue
			}
			p := pr.Panel
			panels++
			title := *p.Title
			if p.Id == nil || ids[*p.Id] {
				t.Errorf("%s / %q: missing or duplicate id", uid, title)
			} else {
				ids[*p.Id] = true
			}
			if p.Datasource == nil || *p.Datasource.Type != "prometheus" || *p.Datasource.Uid != "${datasource}" {
				t.Errorf("%s / %q: panel data source is not ${datasource}", uid, title)
			}
			if p.GridPos == nil || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W == 0 || p.GridPos.H == 0 {
				t.Errorf("%s / %q: bad grid position %+v", uid, title, p.GridPos)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s / %q: no queries", uid, title)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				q, err := promQuery(tg)
				if err != nil {
					t.Fatal(err)
				}
				if q.RefId == "" || refs[q.RefId] {
					t.Errorf("%s / %q: missing or duplicate refId %q", uid, title, q.RefId)
				}
				refs[q.RefId] = true
				if q.Datasource == nil || *q.Datasource.Uid != "${datasource}" {
					t.Errorf("%s / %q / %s: query data source is not ${datasource}", uid, title, q.RefId)
				}
				if strings.TrimSpace(q.Expr) == "" {
					t.Errorf("%s / %q / %s: empty query", uid, title, q.RefId)
				}
			}
		}
		if panels < 8 {
			t.Errorf("%s: only %d panels", uid, panels)
		}
	}
}

// documentedMetrics reads the metric names of docs/metrics.md: every
// `prism_…` / `ceph_…` in backticks; "`_misses_total`" after
// "`prism_cache_class_hits_total{...,dir}`" is that family's sibling.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	last := ""
	for _, m := range regexp.MustCompile("`((?:prism|ceph)_[a-z0-9_]+|_[a-z0-9_]+)").FindAllStringSubmatch(string(data), -1) {
		name := m[1]
		if strings.HasPrefix(name, "_") {
			if last == "" {
				continue
			}
			parts := strings.Split(last, "_")
			if len(parts) < 3 {
				continue
			}
			name = strings.Join(parts[:len(parts)-2], "_") + name
		} else {
			last = name
		}
		names[name] = true
	}
	return names
}

func TestMetricNames(t *testing.T) {
	got := MetricNames(`sum by (tier) (rate(prism_a_total{node=~"$node"}[$__rate_interval]) * on (node, device) group_left (tier) prism_b{x="y"}) / 86400 + 1e10 or vector(0) and ceph_c`)
	want := []string{"prism_a_total", "prism_b", "ceph_c"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("MetricNames = %v, want %v", got, want)
	}
}

// TestQueriesUseDocumentedMetrics: every panel and variable query selects only
// metrics of docs/metrics.md (the agent's contract, plus the Ceph metrics it names).
func TestQueriesUseDocumentedMetrics(t *testing.T) {
	doc := documentedMetrics(t)
	for _, must := range []string{"prism_device_info", "prism_cache_class_misses_total", "ceph_bluefs_slow_used_bytes", "ceph_disk_occupation"} {
		if !doc[must] {
			t.Fatalf("docs/metrics.md parser missed %s (found %d names)", must, len(doc))
		}
	}
	boards, err := All()
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, b := range boards {
		qs, err := Queries(b.Dashboard)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, VariableQueries(b.Dashboard)...)
		for _, q := range qs {
			expr := q.Expr
			if p, ok := LabelValuesAsPromQL(expr); ok {
				expr = p
			}
			names := MetricNames(expr)
			if len(names) == 0 {
				t.Errorf("%s / %q / %s: selects no metric: %s", q.Dashboard, q.Panel, q.RefID, q.Expr)
			}
			for _, n := range names {
				used[n] = true
				if !doc[n] {
					t.Errorf("%s / %q / %s: %s is not in docs/metrics.md", q.Dashboard, q.Panel, q.RefID, n)
				}
			}
		}
	}
	var list []string
	for n := range used {
		list = append(list, n)
	}
	sort.Strings(list)
	t.Logf("%d metrics used: %s", len(list), strings.Join(list, " "))
}

func TestSubstitute(t *testing.T) {
	vals := map[string]string{"node": "n1", "device": "nvme0n1", "__rate_interval": "1m"}
	got := Substitute(`x{node="$node", device=~"${device}", d="[[device]]", k="${node:regex}"}[$__rate_interval] $unknown`, vals)
	want := `x{node="n1", device=~"nvme0n1", d="nvme0n1", k="n1"}[1m] $unknown`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if p, ok := LabelValuesAsPromQL(`label_values(prism_device_info{node="$node"}, device)`); !ok || p != `count by (device) (prism_device_info{node="$node"})` {
		t.Fatalf("LabelValuesAsPromQL = %q, %v", p, ok)
	}
}
