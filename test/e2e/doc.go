// Package e2e is Prism's end-to-end suite (Ginkgo v2 and Gomega, as kubebuilder's test/e2e):
// against a real cluster given by a kubeconfig it installs Prism's chart with helm and follows
// the whole chain, inventory → DryRun selection → Apply → partitions written by the agent →
// Rook's CephCluster storage.nodes entries → the agent's metrics → Prism's endpoints tried
// from another namespace, the operator's pod under Pod Security restricted → the policy deleted.
//
// It runs only when asked: PRISM_E2E=1 (with KUBECONFIG) or -e2e.kubeconfig. Otherwise
// `go test ./...` reports "[no tests to run]" and, with -v, why. The suite installs a Helm
// release and writes GPT partitions on the node's fast drive, so it never runs merely because
// a KUBECONFIG is set. hack/e2e/run.sh prism runs it in the QEMU guest (make e2e-prism), and
// test/e2e/kind in a kind cluster (make e2e-kind); docs/e2e.md says which ran where.
package e2e
