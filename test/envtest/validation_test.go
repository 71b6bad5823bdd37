package envtest

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// validPolicy and validClasses are accepted as they are; each case below breaks one field.
const validPolicy = `
apiVersion: prism.storage.io/v1alpha1
kind: HybridStoragePolicy
spec:
  mode: DryRun
  nodeSelector: {}
  cephCluster: {namespace: rook-ceph, name: rook-ceph}
`

const validClasses = `
apiVersion: prism.storage.io/v1alpha1
kind: ClassificationPolicy
spec:
  classes:
  - {id: 0, name: unclassified, evictionPriority: 22, allocation: "1"}
  - id: 1
    name: small-writes
    allOf:
    - anyOf: [{type: RequestSize, comparison: Le, value: "16384"}]
    - anyOf: [{type: IODirection, value: write}]
    done: true
    pinned: true
    allocation: "0.5"
`

const validNode = `
apiVersion: prism.storage.io/v1alpha1
kind: StorageNode
status:
  devices:
  - name: nvme0n1
    path: /dev/nvme0n1
    sizeBytes: 375083606016
    tier: Fast
    tierReason: test
    eligibility: {eligible: true}
`

// validPlan is a StorageNode whose plan has one fast device with two DB slots.
const validPlan = `
apiVersion: prism.storage.io/v1alpha1
kind: StorageNode
spec:
  policyName: p
  mode: Apply
  plan:
    fastDevices:
    - stablePath: /dev/disk/by-id/nvme-FAST
      slotSizeBytes: 4294967296
      slots:
      - {index: 0, partition: {number: 1, label: prism-db-00, startBytes: 1048576, sizeBytes: 4294967296}, dataDevice: /dev/disk/by-id/nvme-QLC1}
      - {index: 1, partition: {number: 2, label: prism-db-01, startBytes: 4296015872, sizeBytes: 4294967296}}
`

func TestValidObjectsAreAccepted(t *testing.T) {
	for _, doc := range []string{validPolicy, validClasses, validNode, validPlan} {
		obj := parse(t, doc, nil)
		obj.SetName(unique("valid"))
		if err := create(obj); err != nil {
			t.Errorf("valid %s rejected: %v", obj.GetKind(), err)
		}
	}
}

// invalidCase breaks one field of a valid object. want[0] is the field path the API server
// must name, the rest are substrings of its message (why).
type invalidCase struct {
	name string
	base string
	edit func(m map[string]any)
	want []string
}

// basicInvalidCases are the first cases of each kind; the enlarged suites are in
// invalid_cases_test.go.
func basicInvalidCases() []invalidCase {
	return []invalidCase{
		{"policy without mode", validPolicy, func(m map[string]any) { delete(spec(m), "mode") }, []string{"spec.mode", "Required"}},
		{"policy with unknown mode", validPolicy, func(m map[string]any) { spec(m)["mode"] = "Yolo" }, []string{"spec.mode", `"Apply", "DryRun"`}},
		{"policy without cephCluster", validPolicy, func(m map[string]any) { delete(spec(m), "cephCluster") }, []string{"spec.cephCluster", "Required"}},
		{"cephCluster namespace not a DNS label", validPolicy, func(m map[string]any) {
			spec(m)["cephCluster"] = map[string]any{"namespace": "Rook_Ceph", "name": "x"}
		}, []string{"spec.cephCluster.namespace", "should match"}},
		{"size range LOW above HIGH", validPolicy, func(m map[string]any) {
			spec(m)["capacityDevices"] = map[string]any{"size": "10T:1T"}
		}, []string{"spec.capacityDevices.size", "LOW <= HIGH"}},
		{"size not a quantity", validPolicy, func(m map[string]any) {
			spec(m)["capacityDevices"] = map[string]any{"size": "big:"}
		}, []string{"spec.capacityDevices.size", "quantity"}},
		{"paths combined with models", validPolicy, func(m map[string]any) {
			spec(m)["fastDevices"] = map[string]any{"paths": []any{"/dev/disk/by-id/nvme-A"}, "models": []any{"INTEL*"}}
		}, []string{"spec.fastDevices", "paths selects devices explicitly"}},
		{"path not by-id", validPolicy, func(m map[string]any) {
			spec(m)["fastDevices"] = map[string]any{"paths": []any{"/dev/nvme0n1"}}
		}, []string{"spec.fastDevices.paths[0]", "should match"}},
		{"db size and percent together", validPolicy, func(m map[string]any) {
			spec(m)["db"] = map[string]any{"size": "60Gi", "percentOfData": 2}
		}, []string{"spec.db", "either size or percentOfData"}},
		{"db size below 1Gi", validPolicy, func(m map[string]any) { spec(m)["db"] = map[string]any{"size": "100Mi"} }, []string{"spec.db.size", "size must be between 2Gi and 64Ti: 100Mi"}},
		{"db percent above 50", validPolicy, func(m map[string]any) { spec(m)["db"] = map[string]any{"percentOfData": 80} }, []string{"spec.db.percentOfData", "less than or equal to 50"}},
		{"cache line size not a power of two", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "lineSizeKiB": 12}
		}, []string{"spec.cache.lineSizeKiB", "supported values"}},
		{"classification without cache", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "None", "classificationPolicyName": "ceph"}
		}, []string{"spec.cache.classificationPolicyName", "classificationPolicyName needs a cache"}},
		{"alru parameters with acp cleaning", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "cleaning": map[string]any{"policy": "Acp", "alru": map[string]any{"wakeUpSeconds": 5}}}
		}, []string{"spec.cache.cleaning", "alru parameters need policy Alru"}},
		{"nhit parameters with always promotion", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "promotion": map[string]any{"policy": "Always", "nhit": map[string]any{"threshold": 3}}}
		}, []string{"spec.cache.promotion", "nhit parameters need policy Nhit"}},
		{"alru wake-up above an hour", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "cleaning": map[string]any{"policy": "Alru", "alru": map[string]any{"wakeUpSeconds": 3601}}}
		}, []string{"spec.cache.cleaning.alru.wakeUpSeconds", "less than or equal to 3600"}},
		{"unknown sequential cut-off policy", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "sequentialCutoff": map[string]any{"policy": "Sometimes"}}
		}, []string{"spec.cache.sequentialCutoff.policy", "supported values"}},
		{"unknown dirty data policy", validPolicy, func(m map[string]any) {
			spec(m)["cache"] = map[string]any{"mode": "WriteBack", "dirtyData": "Drop"}
		}, []string{"spec.cache.dirtyData", "supported values"}},
		{"wipe grant with kernel path", validPolicy, func(m map[string]any) {
			spec(m)["allowWipe"] = []any{map[string]any{"node": "n1", "path": "/dev/sda"}}
		}, []string{"spec.allowWipe[0].path", "should match"}},
		{"limit zero", validPolicy, func(m map[string]any) {
			spec(m)["capacityDevices"] = map[string]any{"limit": 0}
		}, []string{"spec.capacityDevices.limit", "greater than or equal to 1"}},
		{"class 0 renamed", validClasses, func(m map[string]any) { class(m, 0)["name"] = "default" }, []string{"spec.classes[0]", "class 0 must be named unclassified"}},
		{"class id above 32", validClasses, func(m map[string]any) { class(m, 1)["id"] = 33 }, []string{"spec.classes[1].id", "less than or equal to 32"}},
		{"duplicate class id", validClasses, func(m map[string]any) { class(m, 1)["id"] = 0 }, []string{"spec.classes[1]", "Duplicate value"}},
		{"duplicate class name", validClasses, func(m map[string]any) { class(m, 1)["name"] = "unclassified" }, []string{"spec.classes", "class names must be unique"}},
		{"pinned and priority", validClasses, func(m map[string]any) { class(m, 1)["evictionPriority"] = 3 }, []string{"spec.classes[1]", "exactly one of evictionPriority or pinned"}},
		{"priority above 255", validClasses, func(m map[string]any) {
			delete(class(m, 1), "pinned")
			class(m, 1)["evictionPriority"] = 256
		}, []string{"spec.classes[1].evictionPriority", "less than or equal to 255"}},
		{"allocation with five characters", validClasses, func(m map[string]any) { class(m, 1)["allocation"] = "0.125" }, []string{"spec.classes[1].allocation", "may not be more than 4"}},
		{"allocation above 1", validClasses, func(m map[string]any) { class(m, 1)["allocation"] = "1.5" }, []string{"spec.classes[1].allocation", "should match"}},
		{"class without rule", validClasses, func(m map[string]any) { delete(class(m, 1), "allOf") }, []string{"spec.classes[1]", "every other class needs allOf"}},
		{"numeric value not a number", validClasses, func(m map[string]any) { condition(m, 1, 0)["value"] = "4k" }, []string{"spec.classes[1].allOf[0].anyOf[0]", "decimal integer within 0 to 18446744073709551615"}},
		{"direction sideways", validClasses, func(m map[string]any) { condition(m, 1, 1)["value"] = "sideways" }, []string{"spec.classes[1].allOf[1].anyOf[0]", "read or write"}},
		{"comparison on a string", validClasses, func(m map[string]any) {
			c := condition(m, 1, 1)
			c["type"], c["value"], c["comparison"] = "ProcessName", "bstore_kv_sync", "Le"
		}, []string{"spec.classes[1].allOf[1].anyOf[0]", "comparison applies only to numeric"}},
		{"string with ampersand", validClasses, func(m map[string]any) {
			c := condition(m, 1, 1)
			c["type"], c["value"] = "Directory", "/var/lib/a&b"
		}, []string{"spec.classes[1].allOf[1].anyOf[0]", "printable ASCII without &"}},
		{"process name too long", validClasses, func(m map[string]any) {
			c := condition(m, 1, 1)
			c["type"], c["value"] = "ProcessName", "a-very-long-process-name"
		}, []string{"spec.classes[1].allOf[1].anyOf[0]", "at most 15 characters"}},
		{"metadata with a value", validClasses, func(m map[string]any) {
			c := condition(m, 1, 1)
			c["type"], c["value"] = "Metadata", "yes"
		}, []string{"spec.classes[1].allOf[1].anyOf[0]", "Direct and Metadata take no value"}},
		{"core id above 4095", validClasses, func(m map[string]any) {
			c := condition(m, 1, 0)
			c["type"], c["value"] = "CoreID", "5000"
		}, []string{"spec.classes[1].allOf[0].anyOf[0]", "within 0-4095"}},
		{"rule longer than 1023 characters", validClasses, func(m map[string]any) {
			var terms []any
			for i := 0; i < 5; i++ {
				terms = append(terms, map[string]any{"anyOf": []any{map[string]any{"type": "Directory", "value": "/" + strings.Repeat("d", 250)}}})
			}
			class(m, 1)["allOf"] = terms
		}, []string{"spec.classes[1]", "exceed 1023 characters"}},
		{"device with unknown tier", validNode, func(m map[string]any) { device(m)["tier"] = "Turbo" }, []string{"status.devices[0].tier", `"Fast", "Capacity", "Other"`}},
		{"device with negative size", validNode, func(m map[string]any) { device(m)["sizeBytes"] = -1 }, []string{"status.devices[0].sizeBytes", "greater than or equal to 0"}},
		{"device with bad DWPD", validNode, func(m map[string]any) {
			device(m)["ratedEndurance"] = map[string]any{"dwpd": "lots"}
		}, []string{"status.devices[0].ratedEndurance.dwpd", "should match"}},
		{"device signature of unknown kind", validNode, func(m map[string]any) {
			device(m)["signatures"] = []any{map[string]any{"kind": "Mystery", "name": "x"}}
		}, []string{"status.devices[0].signatures[0].kind", "supported values"}},
		// Lists written whole are atomic and sorted by their key (decision 0015): CEL keeps keys unique.
		{"two devices of one name", validNode, func(m map[string]any) {
			devices := m["status"].(map[string]any)["devices"].([]any)
			m["status"].(map[string]any)["devices"] = append(devices, devices[0])
		}, []string{"status.devices", "devices must be sorted by name, each once"}},
		{"two slots of one index", validPlan, func(m map[string]any) {
			fastDevice(m)["slots"].([]any)[1].(map[string]any)["index"] = 0
		}, []string{"spec.plan.fastDevices[0].slots", "slots must be sorted by index, each once"}},
		{"a fast device planned twice", validPlan, func(m map[string]any) {
			plan := spec(m)["plan"].(map[string]any)
			plan["fastDevices"] = append(plan["fastDevices"].([]any), fastDevice(m))
		}, []string{"spec.plan.fastDevices", "fast devices must be sorted by stablePath, each once"}},
		{"two caches on one fast device", validNode, func(m map[string]any) {
			c := map[string]any{"fastDevice": "/dev/disk/by-id/nvme-FAST", "state": "Running"}
			m["status"].(map[string]any)["caches"] = []any{c, c}
		}, []string{"status.caches", "caches must be sorted by fastDevice, each once"}},
		{"osds out of order", validNode, func(m map[string]any) {
			m["status"].(map[string]any)["osds"] = []any{map[string]any{"id": 3}, map[string]any{"id": 1}}
		}, []string{"status.osds", "osds must be sorted by id, each once"}},
		{"an OSD data class with a share that is not a decimal", validNode, func(m map[string]any) {
			m["status"].(map[string]any)["osds"] = []any{map[string]any{"id": 0, "classes": []any{map[string]any{"name": "wal", "writeShare": "20%"}}}}
		}, []string{"status.osds[0].classes[0].writeShare", "should match"}},
		{"levels on the fast tier below -1", validNode, func(m map[string]any) {
			m["status"].(map[string]any)["osds"] = []any{map[string]any{"id": 0, "levelsOnFast": -2}}
		}, []string{"status.osds[0].levelsOnFast", "greater than or equal to -1"}},
	}
}

func TestInvalidObjectsAreRejectedNamingTheField(t *testing.T) {
	runInvalid(t, basicInvalidCases())
}

// runInvalid creates each case's object and requires the API server to refuse it, naming the
// field and saying why.
func runInvalid(t *testing.T, cases []invalidCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := parse(t, tc.base, tc.edit)
			obj.SetName(unique("invalid"))
			err := create(obj)
			if err == nil {
				t.Fatalf("the API server accepted an invalid %s", obj.GetKind())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q:\n%v", w, err)
				}
			}
		})
	}
}

// create creates obj; status goes through the status subresource, as the agent writes it
// (the API server ignores status on create).
func create(obj *unstructured.Unstructured) error {
	ctx := context.Background()
	status, hasStatus := obj.Object["status"]
	delete(obj.Object, "status")
	if err := env.Client.Create(ctx, obj, client.FieldValidation("Strict")); err != nil {
		return err
	}
	if !hasStatus {
		return nil
	}
	obj.Object["status"] = status
	return env.Client.Status().Update(ctx, obj)
}

func parse(t *testing.T, doc string, edit func(map[string]any)) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	return &unstructured.Unstructured{Object: m}
}

func spec(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

func class(m map[string]any, i int) map[string]any {
	return spec(m)["classes"].([]any)[i].(map[string]any)
}

func condition(m map[string]any, classIndex, term int) map[string]any {
	return class(m, classIndex)["allOf"].([]any)[term].(map[string]any)["anyOf"].([]any)[0].(map[string]any)
}

func fastDevice(m map[string]any) map[string]any {
	return spec(m)["plan"].(map[string]any)["fastDevices"].([]any)[0].(map[string]any)
}

func device(m map[string]any) map[string]any {
	return m["status"].(map[string]any)["devices"].([]any)[0].(map[string]any)
}

func TestClassificationRuleLengthCountsTheOperatorCompileWrites(t *testing.T) {
	// 64 RequestSize conditions without an explicit comparison compile to
	// "request_size:eq:10" (18 characters) each, 64*18 + 63 separators + "&done" = 1220 > 1023.
	var anyOf []any
	for i := 0; i < 8; i++ {
		anyOf = append(anyOf, map[string]any{"type": "RequestSize", "value": "10"})
	}
	var terms []any
	for i := 0; i < 8; i++ {
		terms = append(terms, map[string]any{"anyOf": anyOf})
	}
	obj := parse(t, validClasses, func(m map[string]any) { class(m, 1)["allOf"] = terms })
	obj.SetName(unique("toolong"))
	if err := create(obj); err == nil || !strings.Contains(err.Error(), "exceed 1023 characters") {
		t.Fatalf("a rule that compiles past 1023 characters must be rejected: %v", err)
	}
	trailing := parse(t, validClasses, func(m map[string]any) {
		c := condition(m, 1, 1)
		c["type"], c["value"] = "ProcessName", "ceph-osd "
	})
	trailing.SetName(unique("space"))
	if err := create(trailing); err == nil || !strings.Contains(err.Error(), "start or end with a space") {
		t.Fatalf("a value with trailing space must be rejected: %v", err)
	}
}
