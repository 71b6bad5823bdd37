package e2e

import (
	"encoding/json"
	"slices"

	. "github.com/onsi/gomega"
)

// cephHealth is `ceph health detail -f json`: the overall status and each raised check by code.
type cephHealth struct {
	Status string                     `json:"status"`
	Checks map[string]cephHealthCheck `json:"checks"`
}

type cephHealthCheck struct {
	Severity string `json:"severity"`
	Summary  struct {
		Message string `json:"message"`
	} `json:"summary"`
	Muted bool `json:"muted"`
}

// guestHealthChecks are the health checks the suite's cluster may carry at the end, each with
// why a one-node guest under emulation raises it; any other check fails the suite
// (docs/decisions/0051-devicehealth-on-a-fresh-cluster.md).
var guestHealthChecks = map[string]string{
	// The guest's CPU is emulated (QEMU TCG): BlueStore's own operations take longer than
	// bluestore_log_op_age, which a real OSD's do not; the check names slowness, not a fault.
	"BLUESTORE_SLOW_OP_ALERT": "emulated CPU: BlueStore operations exceed their age threshold",
}

// readCephHealth is the cluster's health as Ceph reports it now.
func readCephHealth(g Gomega) cephHealth {
	out, err := ceph("health", "detail", "--format", "json")
	g.Expect(err).NotTo(HaveOccurred())
	var h cephHealth
	g.Expect(json.Unmarshal(out, &h)).To(Succeed(), "health detail: %s", out)
	return h
}

// unexpectedChecks are the raised checks not in guestHealthChecks, as "CODE: message", sorted.
func unexpectedChecks(h cephHealth) []string {
	var out []string
	for code, c := range h.Checks {
		if _, ok := guestHealthChecks[code]; !ok {
			out = append(out, code+": "+c.Summary.Message)
		}
	}
	slices.Sort(out)
	return out
}
