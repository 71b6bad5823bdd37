package webui

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The proxy answers only the page's own queries (decision 0049): the page asks for one by
// name with its parameters, and the PromQL is built here. Anyone allowed to read the page can
// thus read what the page shows, not every series of the cluster's Prometheus.

// Sort key per node, smallest first: the earliest projected wear-out date; nodes without
// one after every dated node (1e10 s is year 2286), the most worn first; nodes that report
// devices but no wear at all last.
const nodeSortKey = `min by (node) (prism_device_wearout_timestamp_seconds)` +
	` or on (node) (1e10 + 1e6 * (1 - max by (node) (prism_device_percentage_used_ratio)))` +
	` or on (node) (2e10 + 0 * max by (node) (prism_device_info))`

// OSDs, soonest first: spilled ones (0), then by forecast date, then the rest (1e10).
const osdSortKey = `(0 * (prism_osd_slow_used_bytes > 0))` +
	` or on (node, ceph_daemon) prism_osd_db_spill_forecast_timestamp_seconds` +
	` or on (node, ceph_daemon) (1e10 + 0 * prism_osd_db_total_bytes)`

// A queryTemplate: its kind (instant or range), the parameter it takes ("" none, "k" a
// count, "nodes" or "osds" a list) and how the PromQL is made from the parameter's text.
type queryTemplate struct {
	kind  string
	param string
	build func(arg string) string
}

func fixed(q string) func(string) string { return func(string) string { return q } }

func perNode(format string) func(string) string {
	return func(m string) string { return fmt.Sprintf(format, m) }
}

var queries = map[string]queryTemplate{
	"fleet_nodes":         {"instant", "", fixed(`count(count by (node) (prism_device_info))`)},
	"fleet_devices":       {"instant", "", fixed(`count(prism_device_info)`)},
	"fleet_max_wear":      {"instant", "", fixed(`max(prism_device_percentage_used_ratio)`)},
	"fleet_first_wearout": {"instant", "", fixed(`min(prism_device_wearout_timestamp_seconds)`)},
	"node_order":          {"instant", "k", func(k string) string { return "bottomk(" + k + ", " + nodeSortKey + ")" }},
	"device_info":         {"instant", "nodes", perNode(`prism_device_info%s`)},
	"device_wear":         {"instant", "nodes", perNode(`prism_device_percentage_used_ratio%s`)},
	"device_wearout":      {"instant", "nodes", perNode(`prism_device_wearout_timestamp_seconds%s`)},
	"device_dwpd":         {"instant", "nodes", perNode(`prism_device_dwpd_lifetime%s`)},
	"device_rated_dwpd":   {"instant", "nodes", perNode(`prism_device_rated_dwpd%s`)},
	"device_waf":          {"instant", "nodes", perNode(`prism_device_write_amplification_ratio%s`)},
	"node_alpha":          {"instant", "nodes", perNode(`max by (node) (prism_node_qlc_write_reduction_ratio%s)`)},
	"osd_order":           {"instant", "k", func(k string) string { return "bottomk(" + k + ", " + osdSortKey + ")" }},
	"osd_db_used":         {"instant", "osds", perNode(`prism_osd_db_used_bytes%s`)},
	"osd_db_total":        {"instant", "osds", perNode(`prism_osd_db_total_bytes%s`)},
	"osd_slow_used":       {"instant", "osds", perNode(`prism_osd_slow_used_bytes%s`)},
	"osd_db_levels":       {"instant", "osds", perNode(`prism_osd_db_levels_on_fast%s`)},
	"osd_spill_forecast":  {"instant", "osds", perNode(`prism_osd_db_spill_forecast_timestamp_seconds%s`)},
	"osd_write_share":     {"instant", "osds", perNode(`prism_osd_class_write_share_ratio%s`)},
	"osd_invalidation":    {"instant", "osds", perNode(`prism_osd_class_write_invalidation_ratio%s`)},
	"chart_wear":          {"range", "nodes", perNode(`max by (node) (prism_device_percentage_used_ratio%s)`)},
	"chart_days":          {"range", "nodes", perNode(`min by (node) ((prism_device_wearout_timestamp_seconds%s - time()) / 86400)`)},
}

// Bounds of the parameters: the page asks for at most 1000 nodes a page and 25 OSDs.
const (
	maxK        = 100000
	maxListSize = 1000
)

var (
	// A node name is a DNS subdomain (RFC 1123), as Kubernetes requires.
	nodeName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// An OSD is named as Ceph's exporter labels it: osd.<id>.
	osdName = regexp.MustCompile(`^osd\.[0-9]{1,9}$`)
)

// promQL makes the PromQL of the named query of kind from the request's parameters, or
// says which parameter is wrong.
func promQL(kind string, in url.Values) (string, error) {
	if in.Has("query") {
		return "", fmt.Errorf("query: arbitrary PromQL is not answered; ask for one of the page's queries by name (%s)", strings.Join(queryNames(kind), ", "))
	}
	name := in.Get("name")
	t, ok := queries[name]
	if !ok || t.kind != kind {
		return "", fmt.Errorf("name: %q is not one of the page's %s queries (%s)", name, kind, strings.Join(queryNames(kind), ", "))
	}
	for _, p := range []string{"k", "nodes", "osds"} {
		if p != t.param && in.Has(p) {
			return "", fmt.Errorf("%s: query %s takes no such parameter", p, name)
		}
	}
	switch t.param {
	case "":
		return t.build(""), nil
	case "k":
		v := in.Get("k")
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > maxK {
			return "", fmt.Errorf("k: %q is not a whole number from 1 to %d", v, maxK)
		}
		return t.build(strconv.Itoa(k)), nil
	case "nodes":
		m, err := matcher("node", in.Get("nodes"), nodeName, "a node name")
		if err != nil {
			return "", fmt.Errorf("nodes: %w", err)
		}
		return t.build(m), nil
	default:
		m, err := matcher("ceph_daemon", in.Get("osds"), osdName, "an OSD (osd.<id>)")
		if err != nil {
			return "", fmt.Errorf("osds: %w", err)
		}
		return t.build(m), nil
	}
}

// matcher turns a comma-separated list into {label=~"a|b"}, each name checked against
// valid and its regexp metacharacters quoted.
func matcher(label, list string, valid *regexp.Regexp, what string) (string, error) {
	if list == "" {
		return "", fmt.Errorf("the list is empty")
	}
	names := strings.Split(list, ",")
	if len(names) > maxListSize {
		return "", fmt.Errorf("%d names, more than %d", len(names), maxListSize)
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		if len(n) > 253 || !valid.MatchString(n) {
			return "", fmt.Errorf("%q is not %s", n, what)
		}
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "{" + label + "=~" + strconv.Quote(strings.Join(quoted, "|")) + "}", nil
}

func queryNames(kind string) []string {
	var names []string
	for n, t := range queries {
		if t.kind == kind {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
