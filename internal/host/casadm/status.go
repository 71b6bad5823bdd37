package casadm

import (
	"fmt"
	"strconv"
	"strings"
)

// Cache and core states casadm prints (list and statistics). Others may
// appear in future releases; Status keeps whatever it reads.
const (
	StateRunning         = "Running"
	StateStopping        = "Stopping"
	StateInitializing    = "Initializing"
	StateDetached        = "Detached"
	StateIncomplete      = "Incomplete"
	StateStandby         = "Standby"
	StateStandbyDetached = "Standby detached"
	StateUnknown         = "Unknown"
	StateFlushing        = "Flushing"
	// StateNotRunning: no state bit set. OCF clears "running" on a metadata error, e.g.
	// when the cache device is gone (seen on the real v26.03.2 module).
	StateNotRunning = "Not running"
	StateActive     = "Active"
	StateInactive   = "Inactive"
)

// Status is a cache or core status.
type Status struct {
	// State is the status word: Running, Active, Flushing...
	State string
	// FlushPercent is the flush progress when State is Flushing.
	FlushPercent float64
}

// ParseStatus reads casadm's status, including "Flushing (45.2 %)".
func ParseStatus(s string) (Status, error) {
	if s == "" {
		return Status{}, fmt.Errorf("empty status")
	}
	rest, ok := strings.CutPrefix(s, StateFlushing+" (")
	if !ok {
		return Status{State: s}, nil
	}
	num, ok := strings.CutSuffix(rest, " %)")
	p, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || p < 0 || p > 100 || p != p {
		return Status{}, fmt.Errorf("invalid flushing status %q: want Flushing (xx.x %%)", s)
	}
	return Status{State: StateFlushing, FlushPercent: p}, nil
}

// String writes the status as casadm does.
func (s Status) String() string {
	if s.State == StateFlushing {
		return fmt.Sprintf("%s (%.1f %%)", StateFlushing, s.FlushPercent)
	}
	return s.State
}

// IsByID reports whether a device path is a /dev/disk/by-id link (what
// casadm prints with -b, or when it cannot resolve the link) rather than a
// resolved kernel name such as /dev/nvme0n1.
func IsByID(path string) bool { return strings.HasPrefix(path, "/dev/disk/by-id/") }

// dash turns casadm's "-" (nothing) into "".
func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func undash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
