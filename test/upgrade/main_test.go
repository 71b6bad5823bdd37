package upgrade

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

func TestMain(m *testing.M) {
	// envtest logs through controller-runtime's logger; the binaries' logs are in their files.
	logf.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
