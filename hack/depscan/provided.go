package depscan

import "strings"

// builtByProject are commands this repository builds or installs itself, with where from.
var builtByProject = map[string]string{
	"prism-agent":             "make build (cmd/agent)",
	"prism-manager":           "make build (cmd/manager)",
	"kubectl-prism":           "make build (cmd/kubectl-prism)",
	"casadm":                  "cmd/casadm-emulator in tests and the demo; Open CAS (not a Debian package) on real nodes",
	"prism-apply-plan":        "test/guest builds test/guest/applyplan into the guest",
	"prism-nvmet-loop":        "hack/guest/build.sh installs hack/guest/nvmet-loop.sh into the guest",
	"kube-apiserver":          "hack/envtest-bins.sh builds it from the Go module proxy",
	"etcd":                    "hack/envtest-bins.sh builds it from the Go module proxy",
	"kubectl":                 "hack/envtest-bins.sh --with-kubectl builds it from the Go module proxy",
	"kube-controller-manager": "hack/envtest-bins.sh --with-controllers builds it from the Go module proxy",
	"kube-scheduler":          "hack/envtest-bins.sh --with-controllers builds it from the Go module proxy",
	"kubelet":                 "hack/envtest-bins.sh --with-node builds it from the Go module proxy",
	"kube-proxy":              "hack/envtest-bins.sh --with-node builds it from the Go module proxy",
	"helm":                    "hack/e2e/rook-bins.sh builds it from the Go module proxy (helm.sh/helm/v3)",
	"pki":                     "hack/e2e/run.sh builds hack/e2e/pki into the e2e guest",
	"prism-e2e.test":          "hack/e2e/run.sh compiles test/e2e (go test -c) into the e2e guest",
	"controller-gen":          "make installs it into bin/ with go install",
}

// goToolchain are the Go distribution's commands: the base image has Go, not from a package.
var goToolchain = map[string]bool{"go": true, "gofmt": true}

// ProvidedBy says where a command comes from when that is not a Debian package ("" when it
// needs one): the Go toolchain, this repository's own builds, or a path inside the repository.
func ProvidedBy(cmd string) string {
	switch {
	case goToolchain[cmd]:
		return "the Go toolchain"
	case builtByProject[cmd] != "":
		return builtByProject[cmd]
	case strings.Contains(cmd, "/") && !strings.HasPrefix(cmd, "/"):
		return "this repository (" + cmd + ")"
	}
	return ""
}
