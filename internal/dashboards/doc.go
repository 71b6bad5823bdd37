// Package dashboards builds Prism's Grafana dashboards as code with the Grafana
// Foundation SDK: a cluster overview (per-node endurance table, wear-out
// timeline, top-N soonest wear-outs), a node page (per device wear, WAF, DWPD,
// writes, temperature, spare; α_tier; Open CAS cache per IO class; Ceph BlueFS) and
// a device page (one device's history and forecast).
//
// Every query uses only the metrics of docs/metrics.md (the node agent's
// contract) and Ceph's ceph_bluefs_* / ceph_disk_occupation; the tests
// check that. Every dashboard has a `datasource` variable of type prometheus
// and `node` / `device` variables where they apply.
//
// The JSON under charts/prism/files/dashboards is generated and committed:
//
//	go generate ./internal/dashboards
//
// (or `go run ./internal/dashboards/gen` from the repository root). A test
// fails when the committed files drift from what this package builds. See
// docs/dashboards.md for what each panel shows.
package dashboards

//go:generate go run ./gen -out ../../charts/prism/files/dashboards -doc ../../docs/dashboards.md
