package plan

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/plan/rook"
)

var updateRecorded = flag.Bool("update-recorded", false, "rewrite testdata/recorded-plans.sha256 from the planner as it is")

// recordedCases is how many random clusters TestPlanMatchesRecordedOutputs plans.
const recordedCases = 800

// TestPlanMatchesRecordedOutputs plans random clusters (selectors, wipe grants, slot sizes,
// spares, caps, caches, previous plans with other slot sizes, removed and added disks, nodes
// without inventory or claimed by another policy) twice each, the second time on the first
// plan, and runs the Rook entries through rook.MergeRookNodes and rook.GateReplacements. The
// JSON of every result must hash to what the planner gave when the file was recorded (before
// the allocation work of issue 16, and when the planner still made the Rook entries and claim
// OSDs that internal/plan/rook makes now: recordedPlan): optimisations and moves change no
// output. -update-recorded rewrites
// the file; a failure writes the JSON it got to the test's temporary folder.
func TestPlanMatchesRecordedOutputs(t *testing.T) {
	// A field added to ClusterPlan and not to recordedPlan would go unrecorded.
	for f := range reflect.TypeFor[ClusterPlan]().Fields() {
		if _, ok := reflect.TypeFor[recordedPlan]().FieldByName(f.Name); !ok {
			t.Fatalf("recordedPlan has no field %s of ClusterPlan", f.Name)
		}
	}
	file := filepath.Join("testdata", "recorded-plans.sha256")
	got := make([]string, recordedCases)
	bodies := make([][]byte, recordedCases)
	for seed := range recordedCases {
		bodies[seed] = recordedCase(t, uint64(seed))
		sum := sha256.Sum256(bodies[seed])
		got[seed] = fmt.Sprintf("%d %s", seed, hex.EncodeToString(sum[:]))
	}
	if *updateRecorded {
		if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		want = append(want, sc.Text())
	}
	if len(want) != recordedCases {
		t.Fatalf("%s has %d cases, want %d", file, len(want), recordedCases)
	}
	failed := 0
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		failed++
		if failed <= 5 {
			out := filepath.Join(t.TempDir(), fmt.Sprintf("case-%d.json", i))
			_ = os.WriteFile(out, bodies[i], 0o644)
			t.Errorf("case %d: output differs from the recorded one (got %s)", i, out)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d cases differ", failed, recordedCases)
	}
}

// recordedCase is the JSON of everything the planner returns for one random cluster.
func recordedCase(t *testing.T, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 16))
	spec := randomSpec(rng)
	nodes := randomNodes(rng, spec)
	class := []string{"", "qlc", "ssd"}[rng.IntN(3)]
	first := Plan(Input{Spec: spec, Nodes: nodes})
	firstRecorded := recorded(first, nodes, class)

	// The same cluster a while later: the plan in force, some disks gone, some new, and
	// perhaps another slot size or cache mode asked for.
	for i := range nodes {
		for _, r := range first.Nodes {
			if r.Node == nodes[i].Node && r.Plan != nil && rng.IntN(4) != 0 {
				nodes[i].Previous = r.Plan.DeepCopy()
			}
		}
		if rng.IntN(3) == 0 && len(nodes[i].Devices) > 0 {
			k := rng.IntN(len(nodes[i].Devices))
			nodes[i].Devices = append(nodes[i].Devices[:k:k], nodes[i].Devices[k+1:]...)
		}
		if rng.IntN(3) == 0 {
			nodes[i].Devices = append(nodes[i].Devices, randomDevice(rng, nodes[i].Node, 90+i))
		}
		if rng.IntN(3) == 0 { // a new fast device, whose slots may differ from the kept ones
			d := randomDevice(rng, nodes[i].Node, 80+i)
			d.Tier, d.TierReason, d.Model, d.Vendor, d.SizeBytes = prismv1.TierFast, "P5800X", "INTEL SSDPF21Q016TB", "INTEL", 1_600_321_314_816
			nodes[i].Devices = append(nodes[i].Devices, d)
			for k := range 2 {
				c := randomDevice(rng, nodes[i].Node, 70+2*i+k)
				c.Tier, c.TierReason, c.Model, c.SizeBytes = prismv1.TierCapacity, "D5-P5316", "INTEL SSDPF2NV307TZ", 30_720_827_326_464
				nodes[i].Devices = append(nodes[i].Devices, c)
			}
		}
		nodes[i].Caches = randomCaches(rng, nodes[i].Previous)
		// Every slot read Empty, as when the file was recorded (before slots were held).
		nodes[i].Partitions = emptySlots(nodes[i].Previous)
	}
	if rng.IntN(2) == 0 {
		spec.DB = randomDB(rng)
	}
	if rng.IntN(4) == 0 {
		spec.Cache = randomCache(rng)
	}
	second := Plan(Input{Spec: spec, Nodes: nodes})
	secondRecorded := recorded(second, nodes, class)

	existing, err := rook.MergeRookNodes(nil, nil, firstRecorded.RookStorageNodes)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	// Ceph's answers for every node: all PGs active and every OSD safe to destroy, PGs
	// inactive, or none (the three healths the file was recorded with).
	answers := map[string]rook.CephAnswers{}
	pgs := []string{"active+clean", "peering", ""}[rng.IntN(3)]
	for _, n := range secondRecorded.RookStorageNodes {
		if pgs != "" {
			answers[n.Name] = rook.CephAnswers{At: now.Add(-time.Minute), Health: []byte(`{"status":"HEALTH_OK","checks":{}}`),
				PGStat:        []byte(`{"pg_ready":true,"pg_summary":{"num_pg_by_state":[{"name":"` + pgs + `","num":8}],"num_pgs":8}}`),
				Devices:       []byte(`[]`),
				SafeToDestroy: []byte(`{"safe_to_destroy":[0],"active":[],"missing_stats":[],"stored_pgs":[]}`),
				// No OSD destroyed, as Ceph 20.2.4 answered (decision 0058; added after the recording).
				Destroyed: []byte(`{"nodes":[]}`)}
		}
	}
	var last *rook.Release
	if rng.IntN(2) == 0 {
		last = &rook.Release{Node: "n0", Device: "d", At: now.Add(-time.Duration(rng.IntN(20)) * time.Minute)}
	}
	gate := rook.GateReplacements(rook.GateInput{Entries: secondRecorded.RookStorageNodes, Existing: existing, Answers: answers,
		LastChanged: now.Add(-time.Minute), Last: last, Now: now})
	merged, err := rook.MergeRookNodes(existing, []string{"n1"}, gate.Entries)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{
		"first": firstRecorded, "second": secondRecorded, "rookNodes": rook.RookNodes(second.Plans(), class),
		"gate": recordedGate{gate.Entries, gate.Released, gate.Held, gate.HeldNew}, "merged": merged,
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// recordedGate is a GateResult as the file was recorded: its decisions. Awaiting, added later
// (decision 0057), repeats Held for the probe. HeldNew (decision 0061) changed 8 cases: new
// disks of nodes with entries where the case has no answers from Ceph.
type recordedGate struct {
	Entries  []rook.RookNode
	Released *rook.Release
	Held     []string
	HeldNew  []string `json:",omitempty"`
}

// recordedPlan is a ClusterPlan in the JSON the planner gave when the file was recorded, with
// what internal/plan/rook makes of it where the planner had it then: the Rook entries of its
// plans after the nodes, and a cached node's claim OSDs after its problems.
type recordedPlan struct {
	Nodes            []recordedNode  `json:"nodes"`
	RookStorageNodes []rook.RookNode `json:"rookStorageNodes"`
	Problems         []string        `json:"problems,omitempty"`
	CacheRefused     string          `json:"cacheRefused,omitempty"`
}

type recordedNode struct {
	NodeResult
	ClaimOSDs *rook.ClaimOSDs `json:"claimOSDs,omitempty"`
}

// recorded is p as recordedPlan, for the inventories p was planned from.
func recorded(p ClusterPlan, nodes []NodeInventory, class string) recordedPlan {
	out := recordedPlan{Nodes: make([]recordedNode, len(p.Nodes)), RookStorageNodes: rook.RookNodes(p.Plans(), class),
		Problems: p.Problems, CacheRefused: p.CacheRefused}
	for i, n := range p.Nodes {
		out.Nodes[i].NodeResult = n
		if n.Plan == nil || !n.Plan.OnClaims() {
			continue
		}
		for _, in := range nodes {
			if in.Node == n.Node {
				osds := rook.ClaimOSDsOf(n.Node, *n.Plan, prismv1.StorageNodeStatus{Devices: in.Devices, Caches: in.Caches})
				out.Nodes[i].ClaimOSDs = &osds
			}
		}
	}
	return out
}

func randomSpec(rng *rand.Rand) *prismv1.HybridStoragePolicySpec {
	spec := &prismv1.HybridStoragePolicySpec{DB: randomDB(rng), Cache: randomCache(rng)}
	spec.FastDevices = randomSelector(rng, prismv1.TierFast)
	spec.CapacityDevices = randomSelector(rng, prismv1.TierCapacity)
	for range rng.IntN(3) {
		spec.AllowWipe = append(spec.AllowWipe, prismv1.WipeGrant{
			Node: fmt.Sprintf("n%d", rng.IntN(6)), Path: fmt.Sprintf("/dev/disk/by-id/nvme-n%d-d%02d", rng.IntN(6), rng.IntN(12)),
		})
	}
	return spec
}

func randomDB(rng *rand.Rand) prismv1.DBSizing {
	var db prismv1.DBSizing
	switch rng.IntN(4) {
	case 0:
		pct := int32(1 + rng.IntN(5))
		db.PercentOfData = &pct
	case 1, 2:
		gib := []int64{1, 2, 30, 60, 61, 300}[rng.IntN(6)]
		db.Size = resource.NewQuantity(gib*GiB, resource.BinarySI)
	}
	db.SpareSlots = int32(rng.IntN(3))
	if rng.IntN(3) == 0 {
		db.MaxDataDevicesPerFastDevice = int32(1 + rng.IntN(6))
	}
	return db
}

func randomCache(rng *rand.Rand) prismv1.CacheSpec {
	switch rng.IntN(4) {
	case 0:
		return prismv1.CacheSpec{Mode: prismv1.CacheWriteThrough}
	case 1:
		return prismv1.CacheSpec{Mode: prismv1.CacheNone}
	}
	return prismv1.CacheSpec{}
}

func randomSelector(rng *rand.Rand, tier prismv1.Tier) prismv1.DeviceSelector {
	var s prismv1.DeviceSelector
	switch rng.IntN(8) {
	case 0:
		s.Models = []string{"*P5800X*", "fast-*"}
	case 1:
		s.Tiers = []prismv1.Tier{tier, prismv1.TierOther}
		s.InferredTiers = prismv1.InferredTiersAccept
	case 2:
		s.Size = []string{"100G:", ":2T", "1T:20T", "bad"}[rng.IntN(4)]
	case 3:
		s.Paths = []string{"/dev/disk/by-id/nvme-n0-d00", "/dev/disk/by-id/nvme-n1-d01", "/dev/disk/by-id/nvme-n2-d03"}
	case 4:
		rot := rng.IntN(2) == 0
		s.Rotational = &rot
		s.Vendors = []string{"intel*", "Samsung"}
	}
	if rng.IntN(4) == 0 {
		limit := int32(rng.IntN(4))
		s.Limit = &limit
	}
	return s
}

func randomNodes(rng *rand.Rand, spec *prismv1.HybridStoragePolicySpec) []NodeInventory {
	nodes := make([]NodeInventory, 1+rng.IntN(6))
	for i := range nodes {
		n := &nodes[i]
		n.Node = fmt.Sprintf("n%d", rng.IntN(6)*10+i) // names out of order
		switch rng.IntN(10) {
		case 0:
			n.NoInventory = true
		case 1:
			n.ClaimedBy = "other"
		}
		for j := range rng.IntN(13) {
			n.Devices = append(n.Devices, randomDevice(rng, n.Node, j))
		}
	}
	return nodes
}

func randomDevice(rng *rand.Rand, node string, j int) prismv1.Device {
	d := prismv1.Device{Name: fmt.Sprintf("nvme%dn1", j), StablePath: fmt.Sprintf("/dev/disk/by-id/nvme-%s-d%02d", node, j), Vendor: "INTEL"}
	if rng.IntN(12) == 0 {
		d.StablePath = ""
	}
	switch rng.IntN(5) {
	case 0, 1:
		d.Tier, d.TierReason, d.Model = prismv1.TierFast, "P5800X", "INTEL SSDPF21Q016TB"
		d.SizeBytes = []int64{100 * GiB, 375_083_606_016, 800_166_076_416, 1_600_321_314_816}[rng.IntN(4)]
	case 2, 3:
		d.Tier, d.TierReason, d.Model = prismv1.TierCapacity, "D5-P5316", "INTEL SSDPF2NV307TZ"
		d.SizeBytes = []int64{4 << 40, 7_681_501_126_656, 15_362_991_415_296, 30_720_827_326_464}[rng.IntN(4)]
	default:
		d.Tier, d.TierReason, d.Model, d.Vendor = prismv1.TierOther, "not in the drive database", "fast-unknown", "Samsung"
		d.SizeBytes = 960_197_124_096
		d.Rotational = rng.IntN(3) == 0
		if rng.IntN(2) == 0 {
			d.InferredTier = &prismv1.InferredTier{
				Tier:       []prismv1.Tier{prismv1.TierFast, prismv1.TierCapacity}[rng.IntN(2)],
				Confidence: []prismv1.InferenceConfidence{prismv1.ConfidenceLow, prismv1.ConfidenceHigh}[rng.IntN(2)],
				Reasons:    []string{"random"},
			}
		}
	}
	d.Eligibility.Eligible = true
	for _, f := range []string{prismv1.FilterNoPartitions, prismv1.FilterNoSignatures, prismv1.FilterNoHolders, prismv1.FilterNotReadOnly} {
		if rng.IntN(10) == 0 {
			d.Eligibility.Eligible = false
			d.Eligibility.Reasons = append(d.Eligibility.Reasons, prismv1.EligibilityReason{Filter: f, Message: "random " + f})
		}
	}
	return d
}

// randomCaches is what an agent might report of the caches of a node's plan.
func randomCaches(rng *rand.Rand, p *prismv1.NodePlan) []prismv1.CacheStatus {
	if p == nil || rng.IntN(3) == 0 {
		return nil
	}
	var out []prismv1.CacheStatus
	for _, f := range p.FastDevices {
		if f.Cache == nil || rng.IntN(4) == 0 {
			continue
		}
		c := prismv1.CacheStatus{FastDevice: f.StablePath, CacheID: f.CacheID, State: prismv1.CacheRunning}
		for i, core := range f.CacheCores() {
			cs := prismv1.CacheCoreStatus{Device: core, CoreID: int32(i + 1), State: prismv1.CoreReady,
				ExportedObject: fmt.Sprintf("/dev/cas%d-%d", f.CacheID, i+1)}
			if rng.IntN(4) == 0 {
				cs.State, cs.Message = prismv1.CorePending, "adding"
			}
			c.Cores = append(c.Cores, cs)
		}
		out = append(out, c)
	}
	return out
}

// emptySlots is what an agent reports of a plan whose DB slots it read Empty.
func emptySlots(p *prismv1.NodePlan) []prismv1.PartitionStatus {
	if p == nil {
		return nil
	}
	var out []prismv1.PartitionStatus
	for _, f := range p.FastDevices {
		for _, s := range f.Slots {
			out = append(out, prismv1.PartitionStatus{Device: f.StablePath, Number: s.Partition.Number, DBContent: prismv1.DBSlotEmpty})
		}
	}
	return out
}
