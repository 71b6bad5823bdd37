// Package envtest runs Prism against a real kube-apiserver and etcd with Prism's and Rook's
// real CRDs installed (test/support/testenv; binaries from hack/envtest-bins.sh).
package envtest

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/prism-storage/prism/test/support/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "envtest stop:", err)
	}
	os.Exit(code)
}

var seq atomic.Int64

// unique returns a name no other test uses: the kinds are cluster-scoped, so tests share
// one namespace-less space and must not collide.
func unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, seq.Add(1)) }
