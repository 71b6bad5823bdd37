package main

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestLeaseTimings(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    leaseTimings
		wantErr string
	}{
		{args: nil, want: leaseTimings{15 * time.Second, 10 * time.Second, 2 * time.Second}},
		{args: []string{"--leader-elect-lease-duration=2m", "--leader-elect-renew-deadline=90s", "--leader-elect-retry-period=15s"},
			want: leaseTimings{2 * time.Minute, 90 * time.Second, 15 * time.Second}},
		{args: []string{"--leader-elect-renew-deadline=15s"}, wantErr: "--leader-elect-lease-duration=15s: must be more than --leader-elect-renew-deadline (15s)"},
		{args: []string{"--leader-elect-retry-period=9s"}, wantErr: "--leader-elect-renew-deadline=10s: must be more than 1.2 × --leader-elect-retry-period (9s)"},
		{args: []string{"--leader-elect-retry-period=0s"}, wantErr: "--leader-elect-retry-period=0s: must be positive"},
	} {
		fs := flag.NewFlagSet("manager", flag.ContinueOnError)
		got := bindLeaseFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := got.validate()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case *got != tc.want:
			t.Errorf("%v: %+v, want %+v", tc.args, *got, tc.want)
		}
	}
}
