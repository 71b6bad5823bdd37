package webui

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestPromQLBuildsOnlyThePagesQueries(t *testing.T) {
	for _, tc := range []struct {
		kind, params string
		want         string // the PromQL, or the error's start
		ok           bool
	}{
		{"instant", "name=fleet_nodes", "count(count by (node) (prism_device_info))", true},
		{"instant", "name=node_order&k=50", "bottomk(50, min by (node) (prism_device_wearout_timestamp_seconds) or", true},
		{"instant", "name=device_info&nodes=n1,rack-2.n3", `prism_device_info{node=~"n1|rack-2\\.n3"}`, true},
		{"instant", "name=osd_db_used&osds=osd.0,osd.12", `prism_osd_db_used_bytes{ceph_daemon=~"osd\\.0|osd\\.12"}`, true},
		{"range", "name=chart_days&nodes=n1", `min by (node) ((prism_device_wearout_timestamp_seconds{node=~"n1"} - time()) / 86400)`, true},
		{"instant", "query=up", "query: arbitrary PromQL is not answered; ask for one of the page's queries by name (device_dwpd, ", false},
		{"instant", "name=fleet_nodes&query=up", "query: arbitrary PromQL is not answered", false},
		{"instant", "name=", `name: "" is not one of the page's instant queries (device_dwpd`, false},
		{"instant", "name=up", `name: "up" is not one of the page's instant queries`, false},
		{"instant", "name=chart_wear&nodes=n1", `name: "chart_wear" is not one of the page's instant queries`, false},
		{"range", "name=fleet_nodes", `name: "fleet_nodes" is not one of the page's range queries (chart_days, chart_wear)`, false},
		{"instant", "name=node_order", `k: "" is not a whole number from 1 to 100000`, false},
		{"instant", "name=node_order&k=0", `k: "0" is not a whole number`, false},
		{"instant", "name=node_order&k=1)+or+vector(1", `k: "1) or vector(1" is not a whole number`, false},
		{"instant", "name=fleet_nodes&k=3", "k: query fleet_nodes takes no such parameter", false},
		{"instant", "name=device_info", "nodes: the list is empty", false},
		{"instant", "name=device_info&nodes=n1,N2", `nodes: "N2" is not a node name`, false},
		{"instant", "name=device_info&nodes=.*", `nodes: ".*" is not a node name`, false},
		{"instant", `name=device_info&nodes=n1"}+or+up{x="`, `nodes: "n1\"} or up{x=\"" is not a node name`, false},
		{"instant", "name=device_info&nodes=n1&osds=osd.1", "osds: query device_info takes no such parameter", false},
		{"instant", "name=osd_db_used&osds=osd.1|.*", `osds: "osd.1|.*" is not an OSD (osd.<id>)`, false},
		{"instant", "name=device_info&nodes=" + strings.Repeat("n,", maxListSize) + "n", "nodes: 1001 names, more than 1000", false},
	} {
		in, err := url.ParseQuery(tc.params)
		if err != nil {
			t.Fatal(err)
		}
		got, err := promQL(tc.kind, in)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s %s: %v", tc.kind, tc.params, err)
		case tc.ok && !strings.HasPrefix(got, tc.want):
			t.Errorf("%s %s: %s, want %s", tc.kind, tc.params, got, tc.want)
		case !tc.ok && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s %.60s: %q, %v; want the error %q", tc.kind, tc.params, got, err, tc.want)
		}
	}
}

// TestEveryTemplateIsAsked: each template is one the page's app.js asks for, and each name
// app.js asks for is a template (a renamed query fails here, not in a browser).
func TestEveryTemplateIsAsked(t *testing.T) {
	js, err := staticFiles.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for name := range queries {
		if !strings.Contains(string(js), "'"+name+"'") {
			t.Errorf("template %s is not asked for by app.js: drop it", name)
		}
	}
}

// FuzzPromQL: whatever the parameters, the proxy builds one of its templates or refuses; a
// built query names only checked nodes and OSDs, so no caller text reaches Prometheus.
func FuzzPromQL(f *testing.F) {
	for _, s := range []string{"name=fleet_nodes", "name=node_order&k=25", "name=device_info&nodes=n1,n2.x",
		"kind=range&name=chart_wear&nodes=a", "name=osd_db_used&osds=osd.3", `name=device_info&nodes=n"}or{`, "query=up"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		in, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, kind := range []string{"instant", "range"} {
			q, err := promQL(kind, in)
			if err != nil {
				continue
			}
			tmpl := queries[in.Get("name")]
			var arg string
			switch tmpl.param {
			case "k":
				arg = in.Get("k")
				if k, err := strconv.Atoi(arg); err != nil || k < 1 || k > maxK || strconv.Itoa(k) != arg {
					t.Fatalf("%q: built %q from k %q", raw, q, arg)
				}
			case "nodes", "osds":
				valid := nodeName
				if tmpl.param == "osds" {
					valid = osdName
				}
				for _, n := range strings.Split(in.Get(tmpl.param), ",") {
					if !valid.MatchString(n) {
						t.Fatalf("%q: built %q with the unchecked name %q", raw, q, n)
					}
				}
				label := "node"
				if tmpl.param == "osds" {
					label = "ceph_daemon"
				}
				m, _ := matcher(label, in.Get(tmpl.param), valid, "")
				arg = m
			}
			if q != tmpl.build(arg) || in.Has("query") {
				t.Fatalf("%q: built %q, not template %s", raw, q, in.Get("name"))
			}
		}
	})
}
