// Package browser tests Prism's dashboards and endurance page with real parts:
// a real Prometheus (Debian's package) scrapes a SYNTHETIC exposition — an
// in-test server that serves made-up series in the agent's metric format
// (docs/metrics.md) for five storage nodes, Open CAS caches and Ceph's BlueFS
// (synthetic_test.go) — then
//
//   - every query of every generated Grafana dashboard panel (and variable),
//     with its variables substituted by the synthetic cluster's values, must
//     return data from that Prometheus: the queries are valid and select what
//     the metric format promises. That every panel has data from REAL agents
//     is checked by the demo (hack/demo --check-panels, in make test);
//   - internal/webui's page, served against that Prometheus, is driven in
//     Debian's Chromium by playwright-core (npm, pinned, installed into a temp
//     directory; no browser download): the node table must list the soonest
//     wear-out node first, the uPlot chart must have drawn series, the console
//     must stay free of errors, and paging and the no-data and Prometheus-down
//     states must show. PRISM_UPDATE_SCREENSHOT=1 saves the page to docs/images/endurance-page.png.
//
// As root the test installs what is missing (apt-get: prometheus, chromium,
// and nodejs/npm if there is no node). Without root and with a tool missing it
// skips and says which. About 30-60 seconds:
//
//	go test ./test/browser/ -count=1 -v
package browser
