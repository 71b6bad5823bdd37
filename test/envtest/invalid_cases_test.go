package envtest

import (
	"strconv"
	"strings"
	"testing"
)

// set sets a value at a dotted path ("spec.db.size", "spec.classes.1.name": numbers index
// lists), creating the maps on the way.
func set(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	var cur any = m
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p] = v
				return
			}
			if _, ok := c[p]; !ok {
				c[p] = map[string]any{}
			}
			cur = c[p]
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil {
				panic(path)
			}
			if last {
				c[n] = v
				return
			}
			cur = c[n]
		}
	}
}

// edits applies set for each path/value pair.
func edits(kv ...any) func(map[string]any) {
	return func(m map[string]any) {
		for i := 0; i < len(kv); i += 2 {
			set(m, kv[i].(string), kv[i+1])
		}
	}
}

func list(v ...any) []any { return append([]any{}, v...) }

func obj(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

const qlc1, qlc2, fast1 = "/dev/disk/by-id/nvme-QLC1", "/dev/disk/by-id/nvme-QLC2", "/dev/disk/by-id/nvme-FAST"

// policyInvalidCases are HybridStoragePolicies the API server must refuse, beyond those of
// basicInvalidCases: one kind of hole of issue 14 per group.
func policyInvalidCases() []invalidCase {
	type c = invalidCase
	req := func(op string, values ...any) map[string]any {
		r := obj("key", "prism.storage.io/role", "operator", op)
		if values != nil {
			r["values"] = values
		}
		return r
	}
	many := func(n int, f func(i int) any) []any {
		var l []any
		for i := 0; i < n; i++ {
			l = append(l, f(i))
		}
		return l
	}
	return withBase(validPolicy, []c{
		// Label selectors the API server accepted and metav1.LabelSelectorAsSelector refused.
		{"In without values", "", edits("spec.nodeSelector.matchExpressions", list(req("In"))), []string{"spec.nodeSelector.matchExpressions[0].values", "operator In needs at least one value"}},
		{"NotIn with an empty value list", "", edits("spec.nodeSelector.matchExpressions", list(req("NotIn"))), []string{"spec.nodeSelector.matchExpressions[0].values", "operator NotIn needs at least one value"}},
		{"Exists with values", "", edits("spec.nodeSelector.matchExpressions", list(req("Exists", "storage"))), []string{"spec.nodeSelector.matchExpressions[0].values", "operator Exists takes no values"}},
		{"DoesNotExist with values", "", edits("spec.nodeSelector.matchExpressions", list(req("In", "a"), req("DoesNotExist", "b"))), []string{"spec.nodeSelector.matchExpressions[1].values", "operator DoesNotExist takes no values"}},
		{"unknown selector operator", "", edits("spec.nodeSelector.matchExpressions", list(req("Equals", "a"))), []string{"spec.nodeSelector.matchExpressions[0].operator", "Unsupported value"}},
		{"selector key with a space", "", edits("spec.nodeSelector.matchExpressions", list(obj("key", "my role", "operator", "Exists"))), []string{"spec.nodeSelector.matchExpressions[0].key", "should match"}},
		{"selector key name of 64 characters", "", edits("spec.nodeSelector.matchExpressions", list(obj("key", strings.Repeat("k", 64), "operator", "Exists"))), []string{"spec.nodeSelector.matchExpressions[0].key", "should match"}},
		{"selector key prefix of 254 characters", "", edits("spec.nodeSelector.matchExpressions", list(obj("key", strings.Repeat(strings.Repeat("a", 63)+".", 3)+strings.Repeat("b", 62)+"/role", "operator", "Exists"))), []string{"spec.nodeSelector.matchExpressions[0].key", "prefix must be at most 253 characters"}},
		{"selector requirement without key", "", edits("spec.nodeSelector.matchExpressions", list(obj("operator", "Exists"))), []string{"spec.nodeSelector.matchExpressions[0].key", "Required value"}},
		{"selector value with a space", "", edits("spec.nodeSelector.matchExpressions", list(req("In", "fast disks"))), []string{"spec.nodeSelector.matchExpressions[0].values[0]", "should match"}},
		{"65 selector requirements", "", edits("spec.nodeSelector.matchExpressions", many(65, func(int) any { return obj("key", "a", "operator", "Exists") })), []string{"spec.nodeSelector.matchExpressions", "must have at most 64 items"}},
		{"matchLabels key not a label key", "", edits("spec.nodeSelector.matchLabels", obj("bad key", "x")), []string{"spec.nodeSelector.matchLabels", "key bad key is not a label key"}},
		{"matchLabels key with two slashes", "", edits("spec.nodeSelector.matchLabels", obj("a/b/c", "x")), []string{"spec.nodeSelector.matchLabels", "key a/b/c is not a label key"}},
		{"matchLabels value with a space", "", edits("spec.nodeSelector.matchLabels", obj("role", "fast disks")), []string{"spec.nodeSelector.matchLabels.role", "should match"}},
		{"matchLabels value of 64 characters", "", edits("spec.nodeSelector.matchLabels", obj("role", strings.Repeat("v", 64))), []string{"spec.nodeSelector.matchLabels.role", "may not be more than 63"}},
		{"matchFields is not a node selector field", "", edits("spec.nodeSelector.matchFields", list()), []string{"spec.nodeSelector.matchFields", "unknown field"}},
		// Size ranges: negative bounds, bounds past int64, 0 meaning "no bound".
		{"negative LOW", "", edits("spec.capacityDevices.size", "-1Ti:"), []string{"spec.capacityDevices.size", "size bounds must be between 0 and 1Ei: -1Ti:"}},
		{"negative HIGH", "", edits("spec.fastDevices.size", ":-5"), []string{"spec.fastDevices.size", "between 0 and 1Ei"}},
		{"bound past int64", "", edits("spec.capacityDevices.size", "100Ei:"), []string{"spec.capacityDevices.size", "between 0 and 1Ei"}},
		{"single size 0", "", edits("spec.capacityDevices.size", "0"), []string{"spec.capacityDevices.size", "a single size must be above 0"}},
		{"HIGH 0", "", edits("spec.capacityDevices.size", ":0"), []string{"spec.capacityDevices.size", "HIGH must be above 0"}},
		// Globs: a bad pattern silently matched nothing.
		{"model glob with an open bracket", "", edits("spec.fastDevices.models", list("INTEL*", "SSDPF[")), []string{"spec.fastDevices.models", "models[1] SSDPF[ is not a supported glob pattern"}},
		{"vendor glob with a backslash", "", edits("spec.capacityDevices.vendors", list(`Soli\digm`)), []string{"spec.capacityDevices.vendors", "vendors[0]", "not a supported glob pattern"}},
		{"empty models list", "", edits("spec.fastDevices.models", list()), []string{"spec.fastDevices.models", "should have at least 1 items"}},
		{"empty tiers list", "", edits("spec.capacityDevices.tiers", list()), []string{"spec.capacityDevices.tiers", "should have at least 1 items"}},
		{"empty paths list", "", edits("spec.fastDevices.paths", list()), []string{"spec.fastDevices.paths", "should have at least 1 items"}},
		{"empty vendors list", "", edits("spec.fastDevices.vendors", list()), []string{"spec.fastDevices.vendors", "should have at least 1 items"}},
		{"unknown tier", "", edits("spec.fastDevices.tiers", list("Turbo")), []string{"spec.fastDevices.tiers[0]", "Unsupported value"}},
		{"tier twice", "", edits("spec.fastDevices.tiers", list("Fast", "Fast")), []string{"spec.fastDevices.tiers[1]", "Duplicate value"}},
		{"rotational as a string", "", edits("spec.capacityDevices.rotational", "yes"), []string{"spec.capacityDevices.rotational", "must be of type boolean"}},
		{"limit above 512", "", edits("spec.fastDevices.limit", 513), []string{"spec.fastDevices.limit", "less than or equal to 512"}},
		// Device paths: only one element of udev's characters under by-id or by-path.
		{"path .. escapes by-id", "", edits("spec.fastDevices.paths", list("/dev/disk/by-id/..")), []string{"spec.fastDevices.paths[0]", "should match"}},
		{"path with a space", "", edits("spec.fastDevices.paths", list("/dev/disk/by-id/nvme A")), []string{"spec.fastDevices.paths[0]", "should match"}},
		{"path two levels deep", "", edits("spec.capacityDevices.paths", list(qlc1, "/dev/disk/by-id/a/b")), []string{"spec.capacityDevices.paths[1]", "should match"}},
		{"path with a newline", "", edits("spec.capacityDevices.paths", list("/dev/disk/by-id/nvme-A\nB")), []string{"spec.capacityDevices.paths[0]", "should match"}},
		{"same device in both tiers", "", edits("spec.fastDevices.paths", list(fast1, qlc2), "spec.capacityDevices.paths", list(qlc1, qlc2)), []string{"spec.capacityDevices.paths", "capacityDevices.paths[1] " + qlc2 + " is also in fastDevices.paths"}},
		{"wipe grant path with ..", "", edits("spec.allowWipe", list(obj("node", "n1", "path", "/dev/disk/by-id/../sda"))), []string{"spec.allowWipe[0].path", "should match"}},
		{"wipe grant node not a DNS name", "", edits("spec.allowWipe", list(obj("node", "Node_1", "path", qlc1))), []string{"spec.allowWipe[0].node", "should match"}},
		{"wipe grant without node", "", edits("spec.allowWipe", list(obj("path", qlc1))), []string{"spec.allowWipe[0].node", "Required value"}},
		// DB sizes: the planner's minimum, no int64 overflow, plain integers.
		{"db size 1Gi, below the planner's 2Gi", "", edits("spec.db.size", "1Gi"), []string{"spec.db.size", "size must be between 2Gi and 64Ti: 1Gi"}},
		{"db size as a too small integer", "", edits("spec.db.size", 1000), []string{"spec.db.size", "size must be between 2Gi and 64Ti: 1000"}},
		{"db size past int64", "", edits("spec.db.size", "100Ei"), []string{"spec.db.size", "between 2Gi and 64Ti"}},
		{"negative db size", "", edits("spec.db.size", "-5Gi"), []string{"spec.db.size", "between 2Gi and 64Ti"}},
		{"db size not a quantity", "", edits("spec.db.size", "lots"), []string{"spec.db.size", "should match"}},
		{"spare slots above 64", "", edits("spec.db.spareSlots", 65), []string{"spec.db.spareSlots", "less than or equal to 64"}},
		{"negative blast-radius cap", "", edits("spec.db.maxDataDevicesPerFastDevice", -1), []string{"spec.db.maxDataDevicesPerFastDevice", "greater than or equal to 0"}},
		// Cache settings meaningless for the mode.
		{"cleaning on a write-through cache", "", edits("spec.cache", obj("mode", "WriteThrough", "cleaning", obj("policy", "Alru"))), []string{"spec.cache.cleaning", "cleaning applies only to WriteBack and WriteOnly caches", "not to WriteThrough"}},
		{"cleaning without a cache", "", edits("spec.cache", obj("mode", "None", "cleaning", obj("policy", "Nop"))), []string{"spec.cache.cleaning", "not to None"}},
		{"AllowLoss on a write-around cache", "", edits("spec.cache", obj("mode", "WriteAround", "dirtyData", "AllowLoss")), []string{"spec.cache.dirtyData", "dirtyData AllowLoss applies only to WriteBack and WriteOnly"}},
		{"promotion without a cache", "", edits("spec.cache", obj("mode", "None", "promotion", obj("policy", "Always"))), []string{"spec.cache", "promotion and sequentialCutoff need a cache"}},
		{"sequential cut-off without a cache", "", edits("spec.cache", obj("sequentialCutoff", obj("policy", "Never"))), []string{"spec.cache", "promotion and sequentialCutoff need a cache"}},
		{"cleaning without policy", "", edits("spec.cache", obj("mode", "WriteBack", "cleaning", obj())), []string{"spec.cache.cleaning.policy", "Required value"}},
		{"nhit threshold 1", "", edits("spec.cache", obj("mode", "WriteBack", "promotion", obj("policy", "Nhit", "nhit", obj("threshold", 1)))), []string{"spec.cache.promotion.nhit.threshold", "greater than or equal to 2"}},
		{"cut-off threshold 0", "", edits("spec.cache", obj("mode", "WriteBack", "sequentialCutoff", obj("policy", "Full", "thresholdKiB", 0))), []string{"spec.cache.sequentialCutoff.thresholdKiB", "greater than or equal to 1"}},
		{"acp wake-up above 10 s", "", edits("spec.cache", obj("mode", "WriteBack", "cleaning", obj("policy", "Acp", "acp", obj("wakeUpMs", 10001)))), []string{"spec.cache.cleaning.acp.wakeUpMs", "less than or equal to 10000"}},
		{"unknown cache mode", "", edits("spec.cache.mode", "WriteMostly"), []string{"spec.cache.mode", "Unsupported value"}},
		// Names.
		{"classification policy name not a DNS name", "", edits("spec.cache", obj("mode", "WriteBack", "classificationPolicyName", "Ceph_OSD")), []string{"spec.cache.classificationPolicyName", "should match"}},
		{"cephCluster name not a DNS name", "", edits("spec.cephCluster.name", "Rook Ceph"), []string{"spec.cephCluster.name", "should match"}},
		{"cephCluster without namespace", "", edits("spec.cephCluster", obj("name", "rook-ceph")), []string{"spec.cephCluster.namespace", "Required value"}},
		{"device class in capitals", "", edits("spec.osd.deviceClass", "QLC"), []string{"spec.osd.deviceClass", "should match"}},
		{"unknown minAllocSize", "", edits("spec.osd.minAllocSize", "Huge"), []string{"spec.osd.minAllocSize", "Unsupported value"}},
		// Typos and missing fields.
		{"misspelt field", "", edits("spec.fastDevice", obj("limit", 1)), []string{"spec.fastDevice", "unknown field"}},
		{"mode in lower case", "", edits("spec.mode", "apply"), []string{"spec.mode", "Unsupported value"}},
		{"policy without nodeSelector", "", func(m map[string]any) { delete(spec(m), "nodeSelector") }, []string{"spec.nodeSelector", "Required value"}},
	})
}

// classificationMoreInvalidCases add to classificationInvalidCases: numbers past 2^64-1,
// empty rule lists, characters casadm cannot take, missing and unknown fields.
func classificationMoreInvalidCases() []invalidCase {
	type c = invalidCase
	anyOf := func(conds ...any) func(map[string]any) {
		return edits("spec.classes.1.allOf.0.anyOf", conds)
	}
	condPath := "spec.classes[1].allOf[0].anyOf[0]"
	return withBase(validClasses, []c{
		{"value 2^64", "", anyOf(cond("LBA", "18446744073709551616")), []string{condPath, "LBA value must be a decimal integer within 0 to 18446744073709551615 (2^64-1): 18446744073709551616"}},
		{"value of twenty nines", "", anyOf(cond("FileOffset", "99999999999999999999")), []string{condPath, "FileOffset value must be a decimal integer within 0"}},
		{"CoreID past int64", "", anyOf(cond("CoreID", "9223372036854775808")), []string{condPath, "CoreID value must be within 0-4095: 9223372036854775808"}},
		{"CoreID with leading zeros above 4095", "", anyOf(cond("CoreID", "0005000")), []string{condPath, "CoreID value must be within 0-4095"}},
		{"IOClass of 2^64-1", "", anyOf(cond("IOClass", "18446744073709551615")), []string{condPath, "IOClass value must be a class id within 0-32"}},
		{"negative PID", "", anyOf(cond("PID", "-1")), []string{condPath, "PID value must be a decimal integer"}},
		{"hexadecimal LBA", "", anyOf(cond("LBA", "0x10")), []string{condPath, "LBA value must be a decimal integer"}},
		{"signed request size", "", anyOf(cond("RequestSize", "+4096")), []string{condPath, "RequestSize value must be a decimal integer"}},
		{"write-life hint as a word", "", anyOf(cond("WriteLifeHint", "short")), []string{condPath, "WriteLifeHint value must be a decimal integer"}},
		{"empty allOf on a class", "", edits("spec.classes.1.allOf", list()), []string{"spec.classes[1].allOf", "should have at least 1 items"}},
		{"empty allOf on class 0", "", edits("spec.classes.0.allOf", list()), []string{"spec.classes[0].allOf", "should have at least 1 items"}},
		{"empty anyOf", "", edits("spec.classes.1.allOf.0.anyOf", list()), []string{"spec.classes[1].allOf[0].anyOf", "should have at least 1 items"}},
		{"direction in capitals", "", anyOf(cond("IODirection", "READ")), []string{condPath, "IODirection value must be read or write"}},
		{"directory with a pipe", "", anyOf(cond("Directory", "/var/a|b")), []string{condPath, "without &, |, comma or double quote"}},
		{"process name with a double quote", "", anyOf(cond("ProcessName", `ceph"osd`)), []string{condPath, "without &, |, comma or double quote"}},
		{"file name prefix not ASCII", "", anyOf(cond("FileNamePrefix", "café")), []string{condPath, "printable ASCII"}},
		{"value with a leading space", "", anyOf(cond("Extension", " log")), []string{condPath, "must not start or end with a space"}},
		{"process name of 16 characters", "", anyOf(cond("ProcessName", "bstore_kv_sync16")), []string{condPath, "at most 15 characters"}},
		{"Direct with a comparison", "", anyOf(obj("type", "Direct", "comparison", "Le")), []string{condPath, "comparison applies only to numeric"}},
		{"Metadata with a comparison", "", anyOf(obj("type", "Metadata", "comparison", "Eq")), []string{condPath, "comparison applies only to numeric"}},
		{"condition without type", "", anyOf(obj("value", "1")), []string{condPath + ".type", "Required value"}},
		{"PID without value", "", anyOf(cond("PID", "")), []string{condPath, "every other condition type needs a value"}},
		{"class name of 64 characters", "", edits("spec.classes.1.name", strings.Repeat("n", 64)), []string{"spec.classes[1].name", "may not be more than 63"}},
		{"class without name", "", func(m map[string]any) { delete(class(m, 1), "name") }, []string{"spec.classes[1].name", "Required value"}},
		{"class without allocation", "", func(m map[string]any) { delete(class(m, 1), "allocation") }, []string{"spec.classes[1].allocation", "Required value"}},
		{"empty allocation", "", edits("spec.classes.1.allocation", ""), []string{"spec.classes[1].allocation", "should match"}},
		{"allocation 1.000", "", edits("spec.classes.1.allocation", "1.000"), []string{"spec.classes[1].allocation", "may not be more than 4"}},
		{"negative eviction priority", "", edits("spec.classes.0.evictionPriority", -1), []string{"spec.classes[0].evictionPriority", "greater than or equal to 0"}},
		{"misspelt class field", "", edits("spec.classes.1.priority", 3), []string{"spec.classes[1].priority", "unknown field"}},
		{"misspelt advisor field", "", edits("spec.advisor", obj("mode", "Never")), []string{"spec.advisor.mode", "unknown field"}},
		{"classes not a list", "", edits("spec.classes", "all"), []string{"spec.classes", "must be of type array"}},
		{"duplicate name names the class", "", edits("spec.classes.1.name", "unclassified"), []string{"spec.classes", "classes[1].name unclassified is used by another class"}},
		{"pinned as a string", "", edits("spec.classes.1.pinned", "true"), []string{"spec.classes[1].pinned", "must be of type boolean"}},
	})
}

// planInvalidCases are StorageNode plans the API server must refuse: overlapping, misaligned
// or duplicate partitions, arbitrary strings in device paths, slot sizes the planner never
// writes.
func planInvalidCases() []invalidCase {
	type c = invalidCase
	const fd = "spec.plan.fastDevices.0"
	const fdp = "spec.plan.fastDevices[0]"
	cachePart := func(number, start int) map[string]any {
		return obj("number", number, "label", "prism-cache", "startBytes", start, "sizeBytes", 1<<30)
	}
	return withBase(validPlan, []c{
		{"slot start not on a MiB", "", edits(fd+".slots.0.partition.startBytes", 1048577), []string{fdp + ".slots[0].partition.startBytes", "should be a multiple of 1048576"}},
		{"slot at offset 0, over the GPT", "", edits(fd+".slots.0.partition.startBytes", 0), []string{fdp + ".slots[0].partition.startBytes", "greater than or equal to 1048576"}},
		{"slot size other than slotSizeBytes", "", edits(fd+".slots.1.partition.sizeBytes", 2147483648), []string{fdp + ".slots", "slots[1].partition.sizeBytes must equal slotSizeBytes (4294967296)"}},
		{"slots overlapping", "", edits(fd+".slots.1.partition.startBytes", 2148532224), []string{fdp + ".slots", "slots[1].partition.startBytes must be 1 MiB + index x slotSizeBytes"}},
		{"two slots on one partition number", "", edits(fd+".slots.1.partition.number", 1), []string{fdp + ".slots[1].partition", "slot 1 must be partition 2 labelled prism-db-01"}},
		{"slot with another slot's label", "", edits(fd+".slots.1.partition.label", "prism-db-00"), []string{fdp + ".slots[1].partition", "slot 1 must be partition 2 labelled prism-db-01"}},
		{"slot size 1 GiB, below the planner's minimum", "", edits(fd+".slotSizeBytes", 1073741824), []string{fdp + ".slotSizeBytes", "greater than or equal to 2147483648"}},
		{"slot size not whole MiB", "", edits(fd+".slotSizeBytes", 4294967297), []string{fdp + ".slotSizeBytes", "should be a multiple of 1048576"}},
		{"slot size above 64 TiB", "", edits(fd+".slotSizeBytes", int64(1)<<47), []string{fdp + ".slotSizeBytes", "less than or equal to 70368744177664"}},
		{"slot index 127", "", edits(fd+".slots.1.index", 127), []string{fdp + ".slots[1].index", "less than or equal to 126"}},
		{"partition offset past 1 EiB", "", edits(fd+".cache", cachePart(3, 1<<61)), []string{fdp + ".cache.startBytes", "less than or equal to 1152921504606846976"}},
		{"partition number 0", "", edits(fd+".cache", cachePart(0, 8590983168)), []string{fdp + ".cache.number", "greater than or equal to 1"}},
		{"data device not a stable path", "", edits(fd+".slots.0.dataDevice", "sda; rm -rf /"), []string{fdp + ".slots[0].dataDevice", "should match"}},
		{"data device is the fast device", "", edits(fd+".slots.0.dataDevice", fast1), []string{fdp + ".slots", "a slot's dataDevice cannot be the fast device itself"}},
		{"fast device by kernel name", "", edits(fd+".stablePath", "/dev/nvme0n1"), []string{fdp + ".stablePath", "should match"}},
		{"fast device path with ..", "", edits(fd+".stablePath", "/dev/disk/by-id/.."), []string{fdp + ".stablePath", "should match"}},
		{"wipe grant outside /dev/disk", "", edits("spec.plan.allowWipe", list("../../etc/passwd")), []string{"spec.plan.allowWipe[0]", "should match"}},
		{"cache partition over the last slot", "", edits(fd+".cache", cachePart(3, 4296015872)), []string{fdp + ".cache", "the cache partition must follow the last slot"}},
		{"cache partition on a slot's number", "", edits(fd+".cache", cachePart(2, 8590983168)), []string{fdp + ".cache", "the cache partition must follow the last slot, with a higher partition number"}},
		{"cache partition with a slot label", "", edits(fd+".cache", obj("number", 3, "label", "prism-db-02", "startBytes", 8590983168, "sizeBytes", 1<<30)), []string{fdp + ".cache.label", "the cache partition's label must be prism-cache"}},
		{"cache partition size not whole MiB", "", edits(fd+".cache", obj("number", 3, "label", "prism-cache", "startBytes", 8590983168, "sizeBytes", 1<<30+512)), []string{fdp + ".cache.sizeBytes", "should be a multiple of 1048576"}},
		{"two fast devices with one cache id", "", func(m map[string]any) {
			fastDevice(m)["cacheID"] = 1
			plan := spec(m)["plan"].(map[string]any)
			plan["fastDevices"] = append(plan["fastDevices"].([]any), obj("stablePath", "/dev/disk/by-id/nvme-FAST2", "slotSizeBytes", 4294967296, "cacheID", 1))
		}, []string{"spec.plan.fastDevices", "fastDevices[0].cacheID is used by another fast device of the node"}},
		{"plan without policyName", "", func(m map[string]any) { delete(spec(m), "policyName") }, []string{"spec.plan", "a plan needs the policyName and mode"}},
		{"plan without mode", "", func(m map[string]any) { delete(spec(m), "mode") }, []string{"spec.plan", "a plan needs the policyName and mode"}},
		{"policyName not a DNS name", "", edits("spec.policyName", "My Policy"), []string{"spec.policyName", "should match"}},
		{"unknown node mode", "", edits("spec.mode", "Yolo"), []string{"spec.mode", "Unsupported value"}},
		{"cache plan with mode None", "", edits("spec.plan.cache", obj("mode", "None", "lineSizeKiB", 4)), []string{"spec.plan.cache.mode", "a cache plan with mode None"}},
		{"cache plan cleaning on write-through", "", edits("spec.plan.cache", obj("mode", "WriteThrough", "lineSizeKiB", 4, "cleaning", obj("policy", "Alru"))), []string{"spec.plan.cache.cleaning", "not to WriteThrough"}},
		{"cache plan line size 12", "", edits("spec.plan.cache", obj("mode", "WriteBack", "lineSizeKiB", 12)), []string{"spec.plan.cache.lineSizeKiB", "Unsupported value"}},
		{"cache plan without line size", "", edits("spec.plan.cache", obj("mode", "WriteBack")), []string{"spec.plan.cache.lineSizeKiB", "Required value"}},
		{"misspelt plan field", "", edits("spec.plan.fastDevice", list()), []string{"spec.plan.fastDevice", "unknown field"}},
	})
}

// validEdgeCases are objects at the edge of a rule that must be accepted (two of them were
// refused before: an integer DB size, and a CoreID written with leading zeros).
func validEdgeCases() []invalidCase {
	type c = invalidCase
	prefix := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 61) // 253 characters
	return []c{
		{"db size as a plain integer", validPolicy, edits("spec.db.size", 4294967296), nil},
		{"db size at the 2Gi minimum", validPolicy, edits("spec.db.size", "2Gi"), nil},
		{"db size at the 64Ti maximum", validPolicy, edits("spec.db.size", "64Ti"), nil},
		{"size range up to 1Ei", validPolicy, edits("spec.capacityDevices.size", ":1Ei"), nil},
		{"size range from 0", validPolicy, edits("spec.capacityDevices.size", "0:1T"), nil},
		{"single decimal size", validPolicy, edits("spec.capacityDevices.size", "15360G"), nil},
		{"selector with every operator", validPolicy, edits("spec.nodeSelector.matchExpressions", list(
			obj("key", "prism.storage.io/role", "operator", "In", "values", list("storage")),
			obj("key", "node.kubernetes.io/exclude", "operator", "NotIn", "values", list("true", "")),
			obj("key", "topology.kubernetes.io/zone", "operator", "Exists"),
			obj("key", "maintenance", "operator", "DoesNotExist"))), nil},
		{"label key with a 253-character prefix", validPolicy, edits("spec.nodeSelector.matchLabels", obj(prefix+"/"+strings.Repeat("n", 63), "", "role", "storage")), nil},
		{"glob with * and ?", validPolicy, edits("spec.fastDevices", obj("models", list("INTEL SSDPF2?Q*"), "vendors", list("*"))), nil},
		{"distinct paths in both tiers, by-path with : and .", validPolicy, edits("spec.fastDevices.paths", list("/dev/disk/by-path/pci-0000:00:1f.2-nvme-1"), "spec.capacityDevices.paths", list(qlc1, `/dev/disk/by-id/usb-Generic_Flash\x20Disk-0:0`)), nil},
		{"write-back cache with every setting", validPolicy, edits("spec.cache", obj("mode", "WriteBack", "lineSizeKiB", 64, "dirtyData", "AllowLoss",
			"cleaning", obj("policy", "Acp", "acp", obj("wakeUpMs", 0)), "promotion", obj("policy", "Nhit", "nhit", obj("threshold", 2)),
			"sequentialCutoff", obj("policy", "Full", "thresholdKiB", 4194181))), nil},
		{"pass-through cache with promotion", validPolicy, edits("spec.cache", obj("mode", "PassThrough", "promotion", obj("policy", "Always"))), nil},
		{"wipe grant on a dotted node name", validPolicy, edits("spec.allowWipe", list(obj("node", "node-1.example.com", "path", qlc1))), nil},
		{"value 2^64-1", validClasses, edits("spec.classes.1.allOf.0.anyOf", list(cond("LBA", "18446744073709551615"))), nil},
		{"CoreID 4095 with leading zeros", validClasses, edits("spec.classes.1.allOf.0.anyOf", list(cond("CoreID", "04095"))), nil},
		{"IOClass 32 and 0", validClasses, edits("spec.classes.1.allOf.0.anyOf", list(cond("IOClass", "32"), cond("IOClass", "0"))), nil},
		{"allocations .5 and 0.", validClasses, edits("spec.classes.1.allocation", ".5", "spec.classes.0.allocation", "0."), nil},
		{"class 0 without a rule and 33 classes", validClasses, func(m map[string]any) {
			classes := spec(m)["classes"].([]any)[:1]
			for i := 1; i <= 32; i++ {
				classes = append(classes, obj("id", i, "name", "c"+strconv.Itoa(i), "allOf", list(obj("anyOf", list(cond("PID", strconv.Itoa(i))))), "evictionPriority", i, "allocation", "0.01"))
			}
			spec(m)["classes"] = classes
		}, nil},
		{"plan with eleven slots, a cache and cache ids", validPlan, func(m map[string]any) {
			var slots []any
			for i := 0; i < 11; i++ {
				label := "prism-db-" + strconv.Itoa(i)
				if i < 10 {
					label = "prism-db-0" + strconv.Itoa(i)
				}
				slots = append(slots, obj("index", i, "partition", obj("number", i+1, "label", label, "startBytes", 1048576+i*4294967296, "sizeBytes", 4294967296)))
			}
			fd := fastDevice(m)
			fd["slots"], fd["cacheID"] = slots, 1
			fd["cache"] = obj("number", 12, "label", "prism-cache", "startBytes", 1048576+11*4294967296, "sizeBytes", 1<<30)
			plan := spec(m)["plan"].(map[string]any)
			plan["fastDevices"] = append(plan["fastDevices"].([]any), obj("stablePath", "/dev/disk/by-id/nvme-FAST2", "slotSizeBytes", 2147483648, "cacheID", 2))
			plan["cache"] = obj("mode", "WriteBack", "lineSizeKiB", 16, "cleaning", obj("policy", "Alru"))
		}, nil},
		{"node claimed without a plan", validPlan, func(m map[string]any) { delete(spec(m), "plan") }, nil},
		{"plan wipe grant by path", validPlan, edits("spec.plan.allowWipe", list("/dev/disk/by-path/pci-0000:5e:00.0-nvme-1")), nil},
	}
}

func TestEnlargedInvalidSuites(t *testing.T) {
	policies := append(policyInvalidCases(), kindCases(basicInvalidCases(), "HybridStoragePolicy")...)
	classes := append(append(classificationInvalidCases(), classificationMoreInvalidCases()...), kindCases(basicInvalidCases(), "ClassificationPolicy")...)
	plans := planInvalidCases()
	t.Logf("invalid cases: %d HybridStoragePolicy, %d ClassificationPolicy (+2 in the rule-length test), %d StorageNode plan", len(policies), len(classes), len(plans))
	if len(policies) < 60 || len(classes) < 60 || len(plans) < 20 {
		t.Errorf("want at least 60 invalid cases per policy kind and 20 StorageNode plans")
	}
	runInvalid(t, policyInvalidCases())
	runInvalid(t, classificationMoreInvalidCases())
	runInvalid(t, planInvalidCases())
}

func TestValidEdgeCasesAreAccepted(t *testing.T) {
	cases := validEdgeCases()
	if len(cases) < 20 {
		t.Errorf("only %d valid edge cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := parse(t, tc.base, tc.edit)
			obj.SetName(unique("edge"))
			if err := create(obj); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// kindCases are the cases whose base object is of kind.
func kindCases(cases []invalidCase, kind string) []invalidCase {
	var out []invalidCase
	for _, c := range cases {
		if strings.Contains(c.base, "kind: "+kind+"\n") {
			out = append(out, c)
		}
	}
	return out
}
