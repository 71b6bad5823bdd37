package rook

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// recordedNode is the node of the recordings in testdata/ceph16 (test/ceph's TestRecordGateAnswers):
// four OSDs, osd.N on the QLC drive N, their DBs on one fast device.
const (
	recordedNode = "prismtest-node"
	recordedQLC  = "/dev/disk/by-id/nvme-PRISMTEST_QLC_"
)

func recordedAnswers(t *testing.T, dir, state string, at time.Time) CephAnswers {
	t.Helper()
	return cephAnswersOf(dir, state, at)
}

// recordedKernelNames maps each recorded OSD's data device to its kernel name, from Ceph's own
// `ceph osd metadata` of the healthy state (what the node's inventory would say).
func recordedKernelNames(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/ceph16/healthy/osd-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var md []struct {
		ID      int    `json:"id"`
		Devices string `json:"bluestore_bdev_devices"`
	}
	if err := json.Unmarshal(b, &md); err != nil || len(md) != 4 {
		t.Fatalf("osd-metadata: %d OSDs, %v", len(md), err)
	}
	out := map[string]string{}
	for _, m := range md {
		out[recordedQLC+string(rune('0'+m.ID))] = m.Devices
	}
	return out
}

// replacing is the gate's question for one device of the recorded node: its DB moved.
func replacing(device string) ([]RookNode, []any) {
	planned := []RookNode{{Name: recordedNode, Devices: []RookDevice{{Name: device, Config: RookDeviceConfig{MetadataDevice: "/dev/prism-db-new/prism-db-00"}}}}}
	existing := []any{map[string]any{"name": recordedNode, "devices": []any{
		map[string]any{"name": device, "config": map[string]any{"metadataDevice": "/dev/prism-db-old/prism-db-00"}}}}}
	return planned, existing
}

func TestGateOnRecordedCeph16(t *testing.T) {
	now := time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	kernel := recordedKernelNames(t)
	fresh := now.Add(-time.Minute)
	osd0, osd1 := recordedQLC+"0", recordedQLC+"1"
	tests := []struct {
		name, state, device string
		change              func(*CephAnswers)
		ignore              []string
		want                string // "" released, else a part of the held message
	}{
		{"healthy: osd.0 still serves its PGs", "healthy", osd0, nil, nil, "osd.0 not safe to destroy: PGs are still mapped to it"},
		{"osd.0 down, its PGs degraded", "degraded", osd0, nil, nil, "osd.0 not safe to destroy: it reports no PG statistics"},
		{"osd.0 out, recovery under way", "recovering", osd0, nil, nil, "osd.0 not safe to destroy"},
		{"osd.0 out, recovery done: it goes", "out-recovered", osd0, nil, nil, ""},
		{"osd.0 out, recovery done: osd.1's drive does not", "out-recovered", osd1, nil, nil, "osd.1 not safe to destroy: PGs are still mapped to it"},
		// Decision 0058: a destroyed id holds every drive of its node until it is purged (Rook
		// v1.21 would give it to the drive released next). The destroyed state's answer is the
		// probe's on Ceph 16 with osd.0 destroyed (cephAnswersOf).
		{"osd.0 destroyed, its id kept: held until it is purged", "destroyed", osd0, nil, nil,
			"Ceph has osd.0 destroyed under prismtest-node's CRUSH host, and Rook v1.21 or later gives a destroyed id to the next blank drive of the node with no DB on the new fast device: once it is safe to destroy, purge it (ceph osd purge 0 --yes-i-really-mean-it; docs/runbooks/replace-fast-device.md step 2)"},
		{"osd.0 destroyed, recorded on Ceph 20.2.4 as Ceph prints it: held", "out-recovered", osd0, func(a *CephAnswers) {
			a.Destroyed = readRecordedFrom(t, "testdata/ceph20", "destroyed-stale", "osd-tree-from-destroyed")
		}, nil, "Ceph has osd.2 destroyed under prismtest-node's CRUSH host"},
		{"none destroyed, recorded on Ceph 20.2.4 after the purge: it goes", "out-recovered", osd0, func(a *CephAnswers) {
			a.Destroyed = readRecordedFrom(t, "testdata/ceph20", "purged", "osd-tree-from-destroyed")
		}, nil, ""},
		{"no destroyed answer holds", "purged", osd0, func(a *CephAnswers) { a.Destroyed = nil }, nil, "ceph osd tree-from destroyed: unexpected end of JSON input"},
		{"osd.0 purged: it goes", "purged", osd0, nil, nil, ""},
		// The node's CRUSH host exists with no OSD (every one purged): the probe answers [] for
		// safe-to-destroy (recorded on Ceph 16) and nothing is left to be needed.
		{"every OSD of the node purged, its CRUSH host empty: it goes", "purged", osd0, func(a *CephAnswers) {
			a.SafeToDestroy = readRecordedFrom(t, "testdata/probe", "ceph16", "safe-to-destroy-purged")
		}, nil, ""},
		{"an empty CRUSH host while Ceph lists the drive with its OSD holds", "healthy", osd0, func(a *CephAnswers) {
			a.SafeToDestroy = readRecordedFrom(t, "testdata/probe", "ceph16", "safe-to-destroy-purged")
		}, nil, "Ceph lists " + osd0 + " with osd.0, and no OSD under the node's CRUSH host"},
		{"an unknown check (OSD_NEARFULL) holds", "nearfull", osd0, nil, nil, "Ceph reports OSD_NEARFULL (3 nearfull osd(s)) is a check Prism does not know"},
		{"the policy ignores it: it goes", "nearfull", osd0, nil, []string{"OSD_NEARFULL", "POOL_NEARFULL"}, ""},
		{"the admin muted it: it goes", "muted", osd0, nil, nil, ""},
		{"a pool without redundancy and noout: it goes", "no-redundancy-noout", osd0, nil, nil, ""},
		{"two more OSDs down: PGs inactive", "inactive", osd0, nil, nil, "Ceph reports PG_AVAILABILITY"},
		{"inactive PGs hold even when no check says so", "out-recovered", osd0, func(a *CephAnswers) {
			a.PGStat = recordedAnswers(t, "ceph16", "inactive", fresh).PGStat
		}, nil, "ceph pg stat: "},
		// Recorded on Ceph 20.2.4 (testdata/ceph20/destroyed-stale): the only OSD of a size-1 pool
		// destroyed; its 8 PGs stale+active+clean, last acting that OSD. No check may say so (a
		// muted PG_AVAILABILITY): stale PGs hold all the same.
		{"stale PGs hold even when no check says so", "out-recovered", osd0, func(a *CephAnswers) {
			a.PGStat = readRecordedFrom(t, "testdata/ceph20", "destroyed-stale", "pg-stat")
		}, nil, "ceph pg stat: 8 PGs stale (stale+active+clean)"},
		{"answers too old", "purged", osd0, func(a *CephAnswers) { a.At = now.Add(-AnswersMaxAge - time.Second) }, nil, "older than 5m0s"},
		{"the probe failed", "purged", osd0, func(a *CephAnswers) { a.Err = "ceph: timed out" }, nil, "Ceph could not answer for prismtest-node: ceph: timed out"},
		{"a partial answer", "purged", osd0, func(a *CephAnswers) { a.SafeToDestroy = nil }, nil, "ceph osd safe-to-destroy: unexpected end of JSON input"},
		// Ceph drops osd.0's drive from ls-by-host once osd.0 is out: every down OSD of the node must
		// be safe (the PG states taken from out-recovered, so that this rule is the one that holds).
		{"the drive no longer listed, osd.0 down and needed", "recovering", osd0, func(a *CephAnswers) {
			a.PGStat = recordedAnswers(t, "ceph16", "out-recovered", fresh).PGStat
		}, nil, "Ceph does not list " + osd0 + " in ceph device ls-by-host, so no OSD of the node that is down may still be needed: osd.0 not safe to destroy: it reports no PG statistics"},
		// The probe keeps ls-by-host for the drives asked about (decision 0057): an empty list kept
		// for osd.1's drive says nothing about osd.0's, which would otherwise go here.
		{"ls-by-host kept for other drives holds", "out-recovered", osd0, func(a *CephAnswers) {
			a.Devices, a.DevicesOf = []byte("[]"), ProbeDrive{Path: osd1, Kernel: kernel[osd1]}.Names()
		}, nil, "the probe kept ceph device ls-by-host for other drives than " + osd0},
		{"ls-by-host kept for the drive's path but not its kernel name holds", "out-recovered", osd0, func(a *CephAnswers) {
			a.Devices, a.DevicesOf = []byte("[]"), []string{osd0, "nvme-PRISMTEST_QLC_0"}
		}, nil, "the probe kept ceph device ls-by-host for other drives than " + osd0},
		{"ls-by-host kept for the drive: it goes", "out-recovered", osd0, func(a *CephAnswers) {
			a.Devices, a.DevicesOf = []byte("[]"), ProbeDrive{Path: osd0, Kernel: kernel[osd0]}.Names()
		}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := recordedAnswers(t, "ceph16", tc.state, fresh)
			if tc.change != nil {
				tc.change(&a)
			}
			planned, existing := replacing(tc.device)
			got := GateReplacements(GateInput{Entries: planned, Existing: existing, Answers: map[string]CephAnswers{recordedNode: a},
				Kernel: map[string]map[string]string{recordedNode: kernel}, Ignore: tc.ignore, Now: now})
			switch {
			case tc.want == "" && (got.Released == nil || got.Released.Device != tc.device || len(got.Held) > 0):
				t.Errorf("want %s released, got released %+v, held %q", tc.device, got.Released, got.Held)
			case tc.want != "" && (got.Released != nil || len(got.Held) != 1 || !strings.Contains(got.Held[0], tc.want)):
				t.Errorf("want held with %q, got released %+v, held %q", tc.want, got.Released, got.Held)
			}
			if len(got.Held) == 1 {
				t.Logf("held: %s", got.Held[0])
			}
		})
	}
}

// No answers for the node: nothing goes.
func TestGateWithoutAnswersHolds(t *testing.T) {
	planned, existing := replacing(recordedQLC + "0")
	got := GateReplacements(GateInput{Entries: planned, Existing: existing, Now: time.Now()})
	if got.Released != nil || len(got.Held) != 1 || !strings.HasSuffix(got.Held[0], "waiting: no answers from Ceph for prismtest-node yet") {
		t.Fatalf("released %+v, held %q", got.Released, got.Held)
	}
}
