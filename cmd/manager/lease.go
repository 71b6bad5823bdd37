package main

import (
	"flag"
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// leaseTimings are the leader election's lease duration, renew deadline and retry period, as
// kube-controller-manager's --leader-elect-* flags name them; the defaults are its own. A
// control plane that answers in seconds (an emulated one, or one under heavy load) needs longer
// ones: with a 10 s renew deadline, a leader whose renewals time out loses the lease and exits,
// and its standby does the same (the e2e guest under TCG, 2026-12-07).
type leaseTimings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// bindLeaseFlags registers the three flags on fs.
func bindLeaseFlags(fs *flag.FlagSet) *leaseTimings {
	t := &leaseTimings{}
	fs.DurationVar(&t.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long a standby waits after the leader's last renewal before it takes the lease")
	fs.DurationVar(&t.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew its lease before it gives up leading and exits; shorter than the lease duration")
	fs.DurationVar(&t.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how often a replica tries to take or renew the lease; well under the renew deadline")
	return t
}

// validate refuses timings client-go's leader elector would refuse, naming the flags.
func (t leaseTimings) validate() error {
	switch {
	case t.RetryPeriod <= 0:
		return fmt.Errorf("--leader-elect-retry-period=%s: must be positive", t.RetryPeriod)
	case t.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(t.RetryPeriod)):
		return fmt.Errorf("--leader-elect-renew-deadline=%s: must be more than %.1f × --leader-elect-retry-period (%s)",
			t.RenewDeadline, leaderelection.JitterFactor, t.RetryPeriod)
	case t.LeaseDuration <= t.RenewDeadline:
		return fmt.Errorf("--leader-elect-lease-duration=%s: must be more than --leader-elect-renew-deadline (%s)",
			t.LeaseDuration, t.RenewDeadline)
	}
	return nil
}
