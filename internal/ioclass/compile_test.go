package ioclass

import (
	"strings"
	"testing"

	"github.com/prism-storage/prism/api/v1alpha1"
)

func cond(t v1alpha1.IOConditionType, cmp v1alpha1.Comparison, v string) v1alpha1.IOCondition {
	return v1alpha1.IOCondition{Type: t, Comparison: cmp, Value: v}
}

func anyOf(c ...v1alpha1.IOCondition) v1alpha1.MatchTerm { return v1alpha1.MatchTerm{AnyOf: c} }

func prio(p int32) *int32 { return &p }

// kernelFactsSpec is KERNEL-FACTS.md's table as a policy.
func kernelFactsSpec() *v1alpha1.ClassificationPolicySpec {
	return &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 4, Name: "writes", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionIODirection, "", "write"))}, Done: true, EvictionPriority: prio(4), Allocation: "1.00"},
		{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1.00"},
		{ID: 1, Name: "first-gib", AllOf: []v1alpha1.MatchTerm{
			anyOf(cond(v1alpha1.ConditionLBA, v1alpha1.CompareGe, "0")),
			anyOf(cond(v1alpha1.ConditionLBA, v1alpha1.CompareLt, "2097152")),
		}, Done: true, EvictionPriority: prio(1), Allocation: "1.00"},
		{ID: 2, Name: "small", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionRequestSize, v1alpha1.CompareLe, "16384"))}, Done: true, EvictionPriority: prio(2), Allocation: "1.00"},
		{ID: 3, Name: "dd", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionProcessName, "", "dd"))}, Done: true, EvictionPriority: prio(3), Allocation: "1.00"},
	}}
}

func TestCompileKernelFactsTable(t *testing.T) {
	cfg, err := Compile(kernelFactsSpec())
	if err != nil {
		t.Fatal(err)
	}
	want := `IO class id,IO class name,Eviction priority,Allocation
0,unclassified,22,1.00
1,lba:ge:0&lba:lt:2097152&done,1,1.00
2,request_size:le:16384&done,2,1.00
3,process_name:dd&done,3,1.00
4,io_direction:write&done,4,1.00
`
	if got := cfg.CSV(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
}

// TestCompileRuleShapes: '|' inside a term, '&' between terms, the operator
// always written, canonical numbers, every condition keyword.
func TestCompileRuleShapes(t *testing.T) {
	all := []v1alpha1.IOCondition{
		cond(v1alpha1.ConditionRequestSize, "", "0004096"), cond(v1alpha1.ConditionIODirection, "", "read"),
		cond(v1alpha1.ConditionProcessName, "", "tp_osd_tp"), cond(v1alpha1.ConditionLBA, v1alpha1.CompareGt, "7"),
		cond(v1alpha1.ConditionCoreID, "", "1"), cond(v1alpha1.ConditionWriteLifeHint, v1alpha1.CompareNe, "2"),
		cond(v1alpha1.ConditionDirect, "", ""), cond(v1alpha1.ConditionPID, "", "42"),
	}
	fs := []v1alpha1.IOCondition{
		cond(v1alpha1.ConditionMetadata, "", ""), cond(v1alpha1.ConditionDirectory, "", "/var/log"),
		cond(v1alpha1.ConditionFileSize, v1alpha1.CompareLe, "4096"), cond(v1alpha1.ConditionExtension, "", "log"),
		cond(v1alpha1.ConditionFileNamePrefix, "", "tmp"), cond(v1alpha1.ConditionFileOffset, v1alpha1.CompareGe, "0"),
		cond(v1alpha1.ConditionIOClass, "", "0"),
	}
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 1, Name: "a", AllOf: []v1alpha1.MatchTerm{anyOf(all...)}, Pinned: true, Allocation: ".5"},
		{ID: 2, Name: "b", AllOf: []v1alpha1.MatchTerm{anyOf(fs[:3]...), anyOf(fs[3:]...)}, EvictionPriority: prio(0), Allocation: "0"},
	}}
	cfg, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := "IO class id,IO class name,Eviction priority,Allocation\n" +
		"0,unclassified,22,1\n" +
		"1,request_size:eq:4096|io_direction:read|process_name:tp_osd_tp|lba:gt:7|core_id:eq:1|wlth:ne:2|direct|pid:eq:42,,.5\n" +
		"2,metadata|directory:/var/log|file_size:le:4096&extension:log|file_name_prefix:tmp|file_offset:ge:0|io_class:eq:0,0,0\n"
	if got := cfg.CSV(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range cfg.Classes {
		if _, err := ParseRule(c.Rule); c.ID != 0 && err != nil {
			t.Errorf("class %d: %v", c.ID, err)
		}
	}
}

func TestCompileKeepsClassZero(t *testing.T) {
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 0, Name: "unclassified", Pinned: true, Allocation: "0.5"},
	}}
	cfg, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CSV(); got != hdr+"0,unclassified,,0.5\n" {
		t.Errorf("CSV: %q", got)
	}
}

// TestCompileErrors: every check, with the field path the API server would
// name.
func TestCompileErrors(t *testing.T) {
	ok := func() v1alpha1.IOClass {
		return v1alpha1.IOClass{ID: 1, Name: "c", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionDirect, "", ""))}, EvictionPriority: prio(1), Allocation: "1"}
	}
	with := func(f func(c *v1alpha1.IOClass)) *v1alpha1.ClassificationPolicySpec {
		c := ok()
		f(&c)
		return &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"}, c}}
	}
	withCond := func(c v1alpha1.IOCondition) *v1alpha1.ClassificationPolicySpec {
		return with(func(cl *v1alpha1.IOClass) {
			cl.AllOf = []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionDirect, "", "")), anyOf(cond(v1alpha1.ConditionDirect, "", ""), c)}
		})
	}
	manyTerms := func(n, m int, c v1alpha1.IOCondition) []v1alpha1.MatchTerm {
		terms := make([]v1alpha1.MatchTerm, n)
		for i := range terms {
			for j := 0; j < m; j++ {
				terms[i].AnyOf = append(terms[i].AnyOf, c)
			}
		}
		return terms
	}
	const condPath = "spec.classes[1].allOf[1].anyOf[1]"
	tests := []struct {
		name string
		spec *v1alpha1.ClassificationPolicySpec
		want string
	}{
		{"nil spec", nil, "spec: Required value"},
		{"no classes", &v1alpha1.ClassificationPolicySpec{}, "spec.classes: Required value: at least one class"},
		{"34 classes", func() *v1alpha1.ClassificationPolicySpec {
			s := &v1alpha1.ClassificationPolicySpec{}
			for i := 0; i < 34; i++ {
				c := ok()
				c.ID, c.Name = int32(i+1), "c"+string(rune('a'+i%26))+string(rune('a'+i/26))
				s.Classes = append(s.Classes, c)
			}
			return s
		}(), "spec.classes: Too many: 34: must have at most 33 items"},
		{"id 33", with(func(c *v1alpha1.IOClass) { c.ID = 33 }), "spec.classes[1].id: Invalid value: 33: must be within 0-32 (released Open CAS)"},
		{"id -1", with(func(c *v1alpha1.IOClass) { c.ID = -1 }), "spec.classes[1].id: Invalid value: -1: must be within 0-32"},
		{"duplicate id", with(func(c *v1alpha1.IOClass) { c.ID = 0 }), "spec.classes[1].id: Duplicate value: 0"},
		{"duplicate name", with(func(c *v1alpha1.IOClass) { c.Name = "unclassified" }), `spec.classes[1].name: Duplicate value: "unclassified"`},
		{"bad name", with(func(c *v1alpha1.IOClass) { c.Name = "Hot_Data" }), `spec.classes[1].name: Invalid value: "Hot_Data": a lowercase RFC 1123 label`},
		{"class 0 named otherwise", &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "default", EvictionPriority: prio(22), Allocation: "1"}}},
			`spec.classes[0].name: Invalid value: "default": class 0 must be named unclassified`},
		{"class 0 with a rule", &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "unclassified", AllOf: ok().AllOf, EvictionPriority: prio(22), Allocation: "1"}}},
			"spec.classes[0].allOf: Forbidden: class 0 takes every IO no other class matched and has no rule"},
		{"class 0 done", &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{{ID: 0, Name: "unclassified", Done: true, EvictionPriority: prio(22), Allocation: "1"}}},
			"spec.classes[0].done: Forbidden: class 0 has no rule"},
		{"no rule", with(func(c *v1alpha1.IOClass) { c.AllOf = nil }), "spec.classes[1].allOf: Required value: every class other than 0 needs a rule"},
		{"9 terms", with(func(c *v1alpha1.IOClass) { c.AllOf = manyTerms(9, 1, cond(v1alpha1.ConditionDirect, "", "")) }), "spec.classes[1].allOf: Too many: 9: must have at most 8 items"},
		{"empty term", with(func(c *v1alpha1.IOClass) { c.AllOf = []v1alpha1.MatchTerm{{}} }), "spec.classes[1].allOf[0].anyOf: Required value: at least one condition"},
		{"9 alternatives", with(func(c *v1alpha1.IOClass) { c.AllOf = manyTerms(1, 9, cond(v1alpha1.ConditionDirect, "", "")) }), "spec.classes[1].allOf[0].anyOf: Too many: 9: must have at most 8 items"},
		{"rule over 1023", with(func(c *v1alpha1.IOClass) {
			c.AllOf = manyTerms(8, 8, cond(v1alpha1.ConditionProcessName, "", "abcdefghijklmno"))
		}), "spec.classes[1].allOf: Invalid value: 1855: the compiled Open CAS rule would be 1855 characters, more than 1023"},
		// The CRD's length estimate counts ":eq" only when comparison is set
		// (64 x 16 = 1024, accepted); Compile always writes it, so this
		// passes the CRD and fails here.
		{"rule the CRD estimate lets through", with(func(c *v1alpha1.IOClass) {
			c.AllOf = manyTerms(8, 8, cond(v1alpha1.ConditionRequestSize, "", "10"))
		}), "spec.classes[1].allOf: Invalid value: 1215"},
		{"pinned and priority", with(func(c *v1alpha1.IOClass) { c.Pinned = true }), "spec.classes[1].evictionPriority: Forbidden: set exactly one of evictionPriority or pinned: true"},
		{"neither", with(func(c *v1alpha1.IOClass) { c.EvictionPriority = nil }), "spec.classes[1].evictionPriority: Required value: set exactly one"},
		{"priority 256", with(func(c *v1alpha1.IOClass) { c.EvictionPriority = prio(256) }), "spec.classes[1].evictionPriority: Invalid value: 256: must be within 0-255"},
		{"priority -1", with(func(c *v1alpha1.IOClass) { c.EvictionPriority = prio(-1) }), "spec.classes[1].evictionPriority: Invalid value: -1"},
		{"allocation 0.125", with(func(c *v1alpha1.IOClass) { c.Allocation = "0.125" }), `spec.classes[1].allocation: Invalid value: "0.125": must be 0 to 1 in at most 4 characters`},
		{"allocation 1.5", with(func(c *v1alpha1.IOClass) { c.Allocation = "1.5" }), `spec.classes[1].allocation: Invalid value: "1.5"`},
		{"allocation empty", with(func(c *v1alpha1.IOClass) { c.Allocation = "" }), `spec.classes[1].allocation: Invalid value: ""`},
		{"allocation 1e0 (casadm takes it, the CRD does not)", with(func(c *v1alpha1.IOClass) { c.Allocation = "1e0" }), `spec.classes[1].allocation: Invalid value: "1e0"`},
		{"unknown type", withCond(cond("Color", "", "red")), condPath + `.type: Unsupported value: "Color": supported values: "RequestSize", "IODirection"`},
		{"direct with value", withCond(cond(v1alpha1.ConditionDirect, "", "1")), condPath + ".value: Forbidden: Direct and Metadata take no value"},
		{"metadata with comparison", withCond(cond(v1alpha1.ConditionMetadata, v1alpha1.CompareEq, "")), condPath + ".comparison: Forbidden: comparison applies only to numeric conditions"},
		{"string with comparison", withCond(cond(v1alpha1.ConditionProcessName, v1alpha1.CompareLt, "dd")), condPath + ".comparison: Forbidden"},
		{"missing value", withCond(cond(v1alpha1.ConditionLBA, "", "")), condPath + ".value: Required value: every condition type except Direct and Metadata needs a value"},
		{"bad comparison", withCond(cond(v1alpha1.ConditionLBA, "Between", "1")), condPath + `.comparison: Unsupported value: "Between"`},
		{"numeric not a number", withCond(cond(v1alpha1.ConditionLBA, "", "12k")), condPath + `.value: Invalid value: "12k": value must be a non-negative decimal integer for numeric conditions`},
		{"numeric negative", withCond(cond(v1alpha1.ConditionPID, "", "-1")), condPath + `.value: Invalid value: "-1"`},
		{"numeric over u64", withCond(cond(v1alpha1.ConditionFileSize, "", "18446744073709551616")), condPath + `.value: Invalid value: "18446744073709551616": must fit in 64 bits`},
		{"numeric 21 digits", withCond(cond(v1alpha1.ConditionFileSize, "", "000000000000000000001")), condPath + `.value: Invalid value`},
		{"core id 4096", withCond(cond(v1alpha1.ConditionCoreID, "", "4096")), condPath + `.value: Invalid value: "4096": CoreID value must be within 0-4095`},
		{"io class 33", withCond(cond(v1alpha1.ConditionIOClass, "", "33")), condPath + `.value: Invalid value: "33": IOClass value must be a class id within 0-32`},
		{"direction", withCond(cond(v1alpha1.ConditionIODirection, "", "both")), condPath + `.value: Unsupported value: "both": supported values: "read", "write"`},
		{"string with &", withCond(cond(v1alpha1.ConditionDirectory, "", "/a&b")), condPath + `.value: Invalid value: "/a&b": string values must be printable ASCII without &, |, comma or double quote`},
		{"string with |", withCond(cond(v1alpha1.ConditionExtension, "", "a|b")), condPath + `.value: Invalid value: "a|b"`},
		{"string with comma", withCond(cond(v1alpha1.ConditionFileNamePrefix, "", "a,b")), condPath + `.value: Invalid value: "a,b"`},
		{"string with quote", withCond(cond(v1alpha1.ConditionFileNamePrefix, "", `a"b`)), condPath + `.value: Invalid value: "a\"b"`},
		{"string with tab", withCond(cond(v1alpha1.ConditionProcessName, "", "a\tb")), condPath + `.value: Invalid value: "a\tb"`},
		{"string non-ASCII", withCond(cond(v1alpha1.ConditionExtension, "", "é")), condPath + `.value: Invalid value: "é"`},
		{"string trailing space", withCond(cond(v1alpha1.ConditionExtension, "", "log ")), condPath + `.value: Invalid value: "log ": must not start or end with a space`},
		{"string 256", withCond(cond(v1alpha1.ConditionDirectory, "", "/"+strings.Repeat("d", 255))), condPath + `.value: Invalid value: "/ddd`},
		{"process name 16", withCond(cond(v1alpha1.ConditionProcessName, "", "bstore_kv_finals")), condPath + `.value: Invalid value: "bstore_kv_finals": ProcessName matches the kernel task name, which is at most 15 characters`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Compile(tc.spec)
			if err == nil {
				t.Fatalf("accepted: %s", cfg.CSV())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}

// TestCompileColonInProcessName: RocksDB's threads are named rocksdb:low0 and the like; the
// kernel takes everything after a condition's first ':' as the string operand.
func TestCompileColonInProcessName(t *testing.T) {
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"},
		{ID: 1, Name: "rocksdb", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionProcessName, "", "rocksdb:low0"))}, Done: true, Pinned: true, Allocation: "1"},
	}}
	cfg, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := cfg.Class(1); c.Rule != "process_name:rocksdb:low0&done" {
		t.Fatalf("rule %q", c.Rule)
	}
	e, err := NewEvaluator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for comm, want := range map[string]int{"rocksdb:low0": 1, "rocksdb": 0, "low0": 0, "rocksdb:low00": 0} {
		if got := e.Classify(IO{Comm: comm, Write: true, Size: 4096}); got != want {
			t.Errorf("comm %q: class %d, want %d", comm, got, want)
		}
	}
}

func TestCompileReportsEveryError(t *testing.T) {
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 40, Name: "a", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionLBA, "", "x"))}, EvictionPriority: prio(1), Allocation: "2"},
	}}
	_, err := Compile(spec)
	for _, want := range []string{"spec.classes[0].id", "spec.classes[0].allOf[0].anyOf[0].value", "spec.classes[0].allocation"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not name %s", err, want)
		}
	}
}

func TestWarnings(t *testing.T) {
	spec := &v1alpha1.ClassificationPolicySpec{Classes: []v1alpha1.IOClass{
		{ID: 0, Name: "unclassified", EvictionPriority: prio(22), Allocation: "1"},
		{ID: 1, Name: "logs", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionExtension, "", "log"), cond(v1alpha1.ConditionDirectory, "", "/var/log"))}, Done: true, EvictionPriority: prio(1), Allocation: "1"},
		{ID: 2, Name: "meta-or-small", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionMetadata, "", ""), cond(v1alpha1.ConditionRequestSize, v1alpha1.CompareLe, "4096"))}, EvictionPriority: prio(1), Allocation: "1"},
		{ID: 3, Name: "raw", AllOf: []v1alpha1.MatchTerm{anyOf(cond(v1alpha1.ConditionLBA, v1alpha1.CompareLt, "8"))}, EvictionPriority: prio(1), Allocation: "1"},
	}}
	got := Warnings(spec)
	want := []string{
		`class 1 "logs" uses Extension, Directory: filesystem-level conditions see no file on a raw BlueStore device, so the class can never match there`,
		`class 2 "meta-or-small" uses Metadata: filesystem-level conditions see no file on a raw BlueStore device, so those alternatives never match there (the class can still match through its other conditions)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if Warnings(nil) != nil || Warnings(kernelFactsSpec()) != nil {
		t.Error("unexpected warnings")
	}
}
