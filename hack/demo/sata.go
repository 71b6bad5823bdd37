package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/prism-storage/prism/internal/fsutil"
	"github.com/prism-storage/prism/internal/host/smart"
)

// lifetimeWriteAttributes are the ATA attributes that count a SATA drive's lifetime writes and
// that the agent reads (internal/host/smart/wear.go): Samsung 241 Total_LBAs_Written; Micron 246
// Total_LBAs_Written, 247 Host_Program_Page_Count and 248 Bckgnd_Program_Page_Cnt. The
// simulated workload advances them together, in proportion to the host bytes written, so the
// simulated writes amplify as the drive's recorded lifetime average did.
var lifetimeWriteAttributes = map[uint64]bool{241: true, 246: true, 247: true, 248: true}

// sataReport is a recorded smartctl report the simulated workload advances.
type sataReport struct {
	path string
	base map[uint64]uint64 // raw value of each lifetime write attribute as recorded
}

// openSATAReport finds the drive's recorded report under <root>/logs/<name>/; nil when the
// drive has none or it counts no lifetime writes.
func openSATAReport(root, name string) (*sataReport, error) {
	path := filepath.Join(root, "logs", name, smart.RecordedFileName)
	doc, err := readReport(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := &sataReport{path: path, base: map[uint64]uint64{}}
	err = eachWriteAttribute(doc, func(id uint64, raw map[string]any) error {
		v, err := strconv.ParseUint(fmt.Sprint(raw["value"]), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: attribute %d raw.value: %w", path, id, err)
		}
		r.base[id] = v
		return nil
	})
	if err != nil || len(r.base) == 0 {
		return nil, err
	}
	return r, nil
}

// advance rewrites the report with every lifetime write attribute scaled by the factor by which
// the host bytes grew, and checks the result with Prism's own parser.
func (r *sataReport) advance(factor float64) error {
	doc, err := readReport(r.path)
	if err != nil {
		return err
	}
	err = eachWriteAttribute(doc, func(id uint64, raw map[string]any) error {
		v := strconv.FormatUint(uint64(float64(r.base[id])*factor), 10)
		raw["value"], raw["string"] = json.Number(v), v
		return nil
	})
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if _, err := smart.ParseSmartctlJSON(out); err != nil {
		return fmt.Errorf("%s: the advanced report does not parse: %w", r.path, err)
	}
	return fsutil.WriteFileAtomic(r.path, out, 0o644)
}

func readReport(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// eachWriteAttribute calls f with the raw object of every lifetime write attribute.
func eachWriteAttribute(doc map[string]any, f func(id uint64, raw map[string]any) error) error {
	attrs, _ := doc["ata_smart_attributes"].(map[string]any)
	table, _ := attrs["table"].([]any)
	for _, e := range table {
		a, _ := e.(map[string]any)
		id, err := strconv.ParseUint(fmt.Sprint(a["id"]), 10, 64)
		raw, ok := a["raw"].(map[string]any)
		if err != nil || !ok || !lifetimeWriteAttributes[id] {
			continue
		}
		if err := f(id, raw); err != nil {
			return err
		}
	}
	return nil
}
