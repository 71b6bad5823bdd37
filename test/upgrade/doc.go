// Package upgrade runs the previous Prism release's operator and agent binaries (built once
// from a fixed earlier commit and cached) against a real kube-apiserver and etcd (envtest),
// then upgrades and rolls back in place as the chart does: CRDs, agents node by node, the
// operator (docs/upgrade.md).
package upgrade
