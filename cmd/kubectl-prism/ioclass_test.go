package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prism-storage/prism/internal/ioclass"
)

func TestIOClassPrintsCSVThatCasadmsParserAccepts(t *testing.T) {
	var out bytes.Buffer
	if err := runIOClass(nil, &out); err != nil {
		t.Fatal(err)
	}
	cfg, err := ioclass.ParseCSV(strings.NewReader(out.String()))
	if err != nil {
		t.Fatalf("casadm's rules reject the CSV: %v\n%s", err, out.String())
	}
	if len(cfg.Classes) != len(ioclass.DefaultCephOSD().Spec.Classes) {
		t.Fatalf("%d classes in the CSV", len(cfg.Classes))
	}
}

func TestIOClassExplain(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(policy, []byte(`apiVersion: prism.storage.io/v1alpha1
kind: ClassificationPolicy
metadata: {name: p}
spec:
  classes:
  - {id: 0, name: unclassified, evictionPriority: 22, allocation: "1"}
  - id: 1
    name: small
    allOf: [{anyOf: [{type: RequestSize, comparison: Le, value: "4096"}]}]
    evictionPriority: 5
    allocation: "1"
  - id: 2
    name: writes
    allOf: [{anyOf: [{type: IODirection, value: write}]}]
    evictionPriority: 6
    allocation: "1"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for io, want := range map[string]string{
		// Without done the highest matching id wins: a small write is class 2.
		"size=4096,dir=write": "=> class 2 (writes)",
		"size=4096,dir=read":  "=> class 1 (small)",
		"size=8192,dir=read":  "=> class 0 (unclassified)",
	} {
		var out bytes.Buffer
		if err := runIOClass([]string{"explain", "--policy", policy, "--io", io}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s:\n%s\nwant %s", io, out.String(), want)
		}
	}
	if err := runIOClass([]string{"explain", "--policy", policy, "--io", "size=big"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("a bad --io must name the key: %v", err)
	}
}

func TestIOClassRefusesWhatTheAPIServerRefuses(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(policy, []byte(`apiVersion: prism.storage.io/v1alpha1
kind: ClassificationPolicy
metadata: {name: p}
spec:
  classes:
  - {id: 0, name: unclassified, evictionPriority: 22, allocation: "1"}
  - id: 1
    name: big-lba
    allOf: [{anyOf: [{type: LBA, comparison: Ge, value: "18446744073709551616"}]}]
    evictionPriority: 5
    allocation: "1"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runIOClass([]string{"--policy", policy}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "spec.classes[1].allOf[0].anyOf[0]: Invalid value") || !strings.Contains(err.Error(), "2^64-1") {
		t.Fatalf("a value above 2^64-1 must be refused naming the condition: %v", err)
	}
}
