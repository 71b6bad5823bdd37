package envtest

import "testing"

// status.caches and status.osds, like status.partitions, are written whole by the node's
// agent and read by the operator: a cached OSD's device comes from a Ready core's
// exportedObject alone. The API server refuses a report that lists one item twice (a second
// entry would hide the first) or contradicts itself, naming the field.
func TestCacheAndOSDStatusIsUniqueAndConsistent(t *testing.T) {
	runInvalid(t, statusListInvalidCases())
	for _, tc := range statusListValidCases() {
		t.Run(tc.name, func(t *testing.T) {
			obj := parse(t, tc.base, tc.edit)
			obj.SetName(unique("statuslists"))
			if err := create(obj); err != nil {
				t.Fatalf("a valid report refused: %v", err)
			}
		})
	}
}

const fast2 = "/dev/disk/by-id/nvme-FAST2"

func core(device string, id int, exported string) map[string]any {
	return obj("device", device, "coreID", id, "exportedObject", exported, "state", "Ready")
}

func statusListValidCases() []invalidCase {
	type c = invalidCase
	return []c{
		{"two caches with their Ready cores, sorted", validNode, edits("status.caches", list(
			obj("fastDevice", fast1, "cacheID", 1, "state", "Running", "cores", list(core(qlc1, 1, "/dev/cas1-1"), core(qlc2, 2, "/dev/cas1-2"))),
			obj("fastDevice", fast2, "cacheID", 2, "state", "Incomplete", "cores", list(
				obj("device", qlc1+"-B", "coreID", 1, "state", "Inactive", "message", "missing"))),
		)), nil},
		{"caches not started yet share cacheID 0", validNode, edits("status.caches", list(
			obj("fastDevice", fast1, "state", "Pending"), obj("fastDevice", fast2, "state", "Refused"))), nil},
		{"an OSD that spilled, with its advice and classes", validNode, edits("status.osds", list(
			obj("id", 0, "spilled", true, "slowUsedBytes", 1200000, "slotAdvice", list(obj("level", 0, "slotBytes", 1), obj("level", 1, "slotBytes", 2)),
				"classes", list(obj("name", "wal"), obj("name", "sst"))),
			obj("id", 1))), nil},
	}
}

func statusListInvalidCases() []invalidCase {
	type c = invalidCase
	running := func(cores ...any) map[string]any {
		return obj("fastDevice", fast1, "cacheID", 1, "state", "Running", "cores", list(cores...))
	}
	return []c{
		{"caches out of order", validNode, edits("status.caches", list(obj("fastDevice", fast2, "state", "Pending"), obj("fastDevice", fast1, "state", "Pending"))),
			[]string{"status.caches", "caches[1]: caches must be sorted by fastDevice, each once"}},
		{"one cacheID reported for two fast devices", validNode, edits("status.caches", list(
			obj("fastDevice", fast1, "cacheID", 3, "state", "Running"), obj("fastDevice", fast2, "cacheID", 3, "state", "Running"))),
			[]string{"status.caches", "caches[1].cacheID 3 is reported for another fast device of the node too"}},
		{"one core twice, the second Refused", validNode, edits("status.caches", list(running(core(qlc1, 1, "/dev/cas1-1"),
			obj("device", qlc1, "state", "Refused", "message", "x")))),
			[]string{"status.caches[0].cores", "cores[1]: cores must be sorted by device, each once"}},
		{"a Ready core without its exported object", validNode, edits("status.caches", list(running(obj("device", qlc1, "coreID", 1, "state", "Ready")))),
			[]string{"status.caches[0].cores[0].exportedObject", "a Ready core names its exportedObject"}},
		{"a Ready core exported under another cache's id", validNode, edits("status.caches", list(running(core(qlc1, 2, "/dev/cas2-2")))),
			[]string{"status.caches[0].cores", "cores[0].exportedObject /dev/cas2-2 is not /dev/cas1-2"}},
		{"one OSD twice", validNode, edits("status.osds", list(obj("id", 4), obj("id", 4))),
			[]string{"status.osds", "osds[1]: osds must be sorted by id, each once"}},
		{"spilled without slow bytes", validNode, edits("status.osds", list(obj("id", 0, "spilled", true))),
			[]string{"status.osds[0].spilled", "spilled is true exactly when slowUsedBytes is above 0"}},
		{"slow bytes without spilled", validNode, edits("status.osds", list(obj("id", 0, "slowUsedBytes", 5))),
			[]string{"status.osds[0].spilled", "spilled is true exactly when slowUsedBytes is above 0"}},
		{"slot advice out of order", validNode, edits("status.osds", list(obj("id", 0, "slotAdvice", list(obj("level", 2, "slotBytes", 9), obj("level", 1, "slotBytes", 3))))),
			[]string{"status.osds[0].slotAdvice", "slotAdvice[1]: options must be sorted by level, each once"}},
		{"an OSD data class twice", validNode, edits("status.osds", list(obj("id", 0, "classes", list(obj("name", "wal"), obj("name", "sst"), obj("name", "wal"))))),
			[]string{"status.osds[0].classes", "classes[2]: the class wal is listed twice"}},
	}
}
