package exporter

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/host/nvme"
)

// A source that fails is reported once when it starts failing, stays in CollectErrors while
// it fails, and is reported again only after it was read in between.
func TestCollectFailuresAreReportedOnceWhileTheyLast(t *testing.T) {
	root, rep := homelab(t)
	ctx := context.Background()
	e := recorded(root, nil)
	if got := e.CollectErrors(); got != "" {
		t.Fatalf("before any poll: %q", got)
	}
	recordedLogs := e.Collector.Logs
	e.Collector.Logs = nvme.RecordedLogReader{Dir: filepath.Join(root, "nothing-recorded")}

	if err := e.Poll(ctx, rep.Devices); err != nil {
		t.Fatal(err)
	}
	first := e.NewFailures()
	if !hasFailure(first, "nvme0n1") {
		t.Fatalf("first poll without log pages: new failures %+v, want nvme0n1", first)
	}
	if msg := e.CollectErrors(); !strings.Contains(msg, "nvme0n1 (") || !strings.Contains(msg, "wear counters not read") {
		t.Fatalf("CollectErrors = %q, want nvme0n1 named", msg)
	}
	if err := e.Poll(ctx, rep.Devices); err != nil {
		t.Fatal(err)
	}
	if again := e.NewFailures(); hasFailure(again, "nvme0n1") {
		t.Fatalf("second failing poll reported nvme0n1 again: %+v", again)
	}

	e.Collector.Logs = recordedLogs
	if err := e.Poll(ctx, rep.Devices); err != nil {
		t.Fatal(err)
	}
	if msg := e.CollectErrors(); strings.Contains(msg, "nvme0n1 (") {
		t.Fatalf("after a good read CollectErrors still names nvme0n1: %q", msg)
	}
	e.Collector.Logs = nvme.RecordedLogReader{Dir: filepath.Join(root, "nothing-recorded")}
	if err := e.Poll(ctx, rep.Devices); err != nil {
		t.Fatal(err)
	}
	if back := e.NewFailures(); !hasFailure(back, "nvme0n1") {
		t.Fatalf("failing again after a good read: new failures %+v, want nvme0n1", back)
	}
}

func hasFailure(fs []CollectFailure, device string) bool {
	for _, f := range fs {
		if f.Device == device && f.Source != "" && f.Message != "" {
			return true
		}
	}
	return false
}

func TestCollectErrorsNamesAtMostEightDevices(t *testing.T) {
	e := &Exporter{devices: map[string]*deviceState{}}
	failing := map[string]map[string]string{}
	for _, d := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		e.devices[d] = &deviceState{}
		failing[d] = map[string]string{"nvme-smart": "no page"}
	}
	e.trackFailures(failing)
	msg := e.CollectErrors()
	if !strings.Contains(msg, "10 of 10 devices") || !strings.Contains(msg, "h (nvme-smart); and 2 more") || strings.Contains(msg, "i (") {
		t.Fatalf("CollectErrors = %q", msg)
	}
}
