package lvm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/host/hostexec"
)

// PV is one row of PVsArgv's report.
type PV struct {
	// Name is the device as LVM names it (/dev/nvme0n1p1); match by Major and Minor.
	Name string
	UUID string
	// Major and Minor are the device's number.
	Major, Minor int
	// DevSize is the device's size, Size the PV's (what LVM uses of it), in bytes.
	DevSize, Size int64
	// VGName and VGUUID are the PV's volume group; empty for a PV in none (an orphan).
	VGName, VGUUID string
	Tags           []string
	// Missing is set when the VG's metadata lists the PV but its device is not found.
	Missing bool
	// VGUnknown is set when the PV's label says it is in a VG but no metadata LVM can read
	// lists it: LVM prints vg_name "[unknown]" and no vg_uuid (a vgcreate cut short after it
	// marked the label used, or a VG whose only metadata was on a disk now gone). VGName and
	// VGUUID are then empty, but the PV is not an orphan.
	VGUnknown bool
	// Problem says why the row could not be read whole, for a row whose device number could:
	// only that device is then in doubt (the row's other fields are as printed, unchecked).
	// Empty for a row read whole.
	Problem string
}

// unknownVG is what LVM prints as vg_name for a PV of a VG it cannot read; no VG may be named
// so ('[' is not a name character).
const unknownVG = "[unknown]"

// VG is one row of VGsArgv's report.
type VG struct {
	Name, UUID             string
	PVCount, LVCount       int
	Size, Free, ExtentSize int64
	MissingPVCount         int
	Tags                   []string
}

// LV is one row of LVsArgv's report.
type LV struct {
	Name, UUID, VGName string
	// Path is /dev/<vg>/<lv>; LVM prints "" for hidden volumes.
	Path string
	Size int64
	// Attr is lv_attr: type, permissions, allocation, fixed minor, state ('a' active), ...
	Attr string
	Tags []string
}

// Active reports whether the kernel maps the LV (lv_attr's state character is 'a').
func (l LV) Active() bool { return len(l.Attr) >= 5 && l.Attr[4] == 'a' }

// Report is what LVM sees on the host: every PV, VG and LV.
type Report struct {
	PVs []PV
	VGs []VG
	LVs []LV
}

// Read runs the three reports through exec and parses them. Any failure fails the whole
// read: a partial view of LVM must never look like "nothing there".
func Read(ctx context.Context, exec hostexec.Executor) (Report, error) {
	var r Report
	out, err := exec.Run(ctx, PVsArgv(), nil)
	if err != nil {
		return Report{}, fmt.Errorf("listing LVM physical volumes: %w", err)
	}
	if r.PVs, err = ParsePVs(out); err != nil {
		return Report{}, err
	}
	if out, err = exec.Run(ctx, VGsArgv(), nil); err != nil {
		return Report{}, fmt.Errorf("listing LVM volume groups: %w", err)
	}
	if r.VGs, err = ParseVGs(out); err != nil {
		return Report{}, err
	}
	if out, err = exec.Run(ctx, LVsArgv(), nil); err != nil {
		return Report{}, fmt.Errorf("listing LVM logical volumes: %w", err)
	}
	if r.LVs, err = ParseLVs(out); err != nil {
		return Report{}, err
	}
	return r, nil
}

// ParsePVs parses PVsArgv's output.
func ParsePVs(out []byte) ([]PV, error) {
	rows, err := parseRows("pvs", "pv", PVFields, out)
	if err != nil {
		return nil, err
	}
	var pvs []PV
	for _, r := range rows {
		p := PV{Name: r.str("pv_name"), UUID: r.str("pv_uuid"), VGName: r.str("vg_name"), VGUUID: r.str("vg_uuid"), Tags: r.tags("pv_tags")}
		p.Major, p.Minor = r.count("pv_major"), r.count("pv_minor")
		p.DevSize, p.Size = r.bytes("dev_size"), r.bytes("pv_size")
		p.Missing = r.flag("pv_missing", "missing")
		if p.VGName == unknownVG && p.VGUUID == "" {
			p.VGName, p.VGUnknown = "", true
		}
		r.nonEmpty("pv_name")
		r.nonEmpty("pv_uuid")
		if (p.VGName == "") != (p.VGUUID == "") {
			r.fail("vg_name", "%q and vg_uuid %q: one is empty, the other not", p.VGName, p.VGUUID)
		}
		if r.err != nil {
			// One odd row (a foreign PV LVM half understands) must not hide every other
			// device's PVs: it is kept, marked, when its device number says whose it is.
			major, minor, ok := r.devNumber()
			if !ok {
				return nil, r.err
			}
			pvs = append(pvs, PV{Name: p.Name, UUID: p.UUID, Major: major, Minor: minor, VGName: p.VGName, VGUUID: p.VGUUID, Problem: r.err.Error()})
			continue
		}
		pvs = append(pvs, p)
	}
	return pvs, nil
}

// devNumber reads the row's pv_major and pv_minor apart from its other fields.
func (r *row) devNumber() (major, minor int, ok bool) {
	a, err1 := strconv.ParseInt(r.vals["pv_major"], 10, 32)
	b, err2 := strconv.ParseInt(r.vals["pv_minor"], 10, 32)
	if err1 != nil || err2 != nil || a < 0 || b < 0 || strconv.FormatInt(a, 10) != r.vals["pv_major"] || strconv.FormatInt(b, 10) != r.vals["pv_minor"] {
		return 0, 0, false
	}
	return int(a), int(b), true
}

// ParseVGs parses VGsArgv's output.
func ParseVGs(out []byte) ([]VG, error) {
	rows, err := parseRows("vgs", "vg", VGFields, out)
	if err != nil {
		return nil, err
	}
	var vgs []VG
	for _, r := range rows {
		v := VG{Name: r.str("vg_name"), UUID: r.str("vg_uuid"), Tags: r.tags("vg_tags")}
		v.PVCount, v.LVCount, v.MissingPVCount = r.count("pv_count"), r.count("lv_count"), r.count("vg_missing_pv_count")
		v.Size, v.Free, v.ExtentSize = r.bytes("vg_size"), r.bytes("vg_free"), r.bytes("vg_extent_size")
		r.nonEmpty("vg_name")
		r.nonEmpty("vg_uuid")
		if r.err == nil && v.Free > v.Size {
			r.fail("vg_free", "%d is more than vg_size %d", v.Free, v.Size)
		}
		if r.err != nil {
			return nil, r.err
		}
		vgs = append(vgs, v)
	}
	return vgs, nil
}

// ParseLVs parses LVsArgv's output.
func ParseLVs(out []byte) ([]LV, error) {
	rows, err := parseRows("lvs", "lv", LVFields, out)
	if err != nil {
		return nil, err
	}
	var lvs []LV
	for _, r := range rows {
		l := LV{Name: r.str("lv_name"), UUID: r.str("lv_uuid"), VGName: r.str("vg_name"), Path: r.str("lv_path"), Attr: r.str("lv_attr"), Tags: r.tags("lv_tags")}
		l.Size = r.bytes("lv_size")
		r.nonEmpty("lv_name")
		r.nonEmpty("lv_uuid")
		r.nonEmpty("vg_name")
		if r.err == nil && len(l.Attr) < 5 {
			r.fail("lv_attr", "%q is shorter than 5 characters", l.Attr)
		}
		if r.err != nil {
			return nil, r.err
		}
		lvs = append(lvs, l)
	}
	return lvs, nil
}

// row is one report row; the first bad field sets err, which names the report, row and field.
type row struct {
	report string
	kind   string
	index  int
	vals   map[string]string
	err    error
}

func (r *row) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s report: %s[%d].%s %s", r.report, r.kind, r.index, field, fmt.Sprintf(format, args...))
	}
}

func (r *row) str(field string) string { return r.vals[field] }

func (r *row) nonEmpty(field string) {
	if r.vals[field] == "" {
		r.fail(field, "is empty")
	}
}

func (r *row) count(field string) int {
	v := r.vals[field]
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
		r.fail(field, "%q is not a count", v)
		return 0
	}
	return int(n)
}

func (r *row) bytes(field string) int64 {
	v := r.vals[field]
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
		r.fail(field, "%q is not a byte count (want --units b --nosuffix)", v)
		return 0
	}
	return n
}

// flag is a field LVM prints as a word when set and "" when not.
func (r *row) flag(field, word string) bool {
	switch v := r.vals[field]; v {
	case "":
		return false
	case word:
		return true
	default:
		r.fail(field, "%q is neither %q nor empty", v, word)
		return false
	}
}

func (r *row) tags(field string) []string {
	v := r.vals[field]
	if v == "" {
		return nil
	}
	ts := strings.Split(v, ",")
	for _, t := range ts {
		if err := CheckTag(t); err != nil {
			r.fail(field, "%q: %v", v, err)
			return nil
		}
	}
	return ts
}

// parseRows reads one report of LVM's JSON format: {"report": [{"<kind>": [{field: "value"}]}]},
// possibly beside a "log" list (log/report_command_log). Every field asked for must be in
// every row, as a string; fields not asked for are ignored.
func parseRows(report, kind string, fields []string, out []byte) ([]*row, error) {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, fmt.Errorf("%s report: empty output", report)
	}
	var doc struct {
		Report *[]map[string]json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("%s report: %w", report, err)
	}
	if doc.Report == nil {
		return nil, fmt.Errorf("%s report: no \"report\" list (want --reportformat json)", report)
	}
	var rows []*row
	found := false
	for i, section := range *doc.Report {
		raw, ok := section[kind]
		if !ok {
			continue
		}
		found = true
		var items []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s report: report[%d].%s is not a list of objects: %w", report, i, kind, err)
		}
		for _, item := range items {
			r := &row{report: report, kind: kind, index: len(rows), vals: map[string]string{}}
			for _, f := range fields {
				v, ok := item[f]
				if !ok {
					return nil, fmt.Errorf("%s report: %s[%d] has no field %s", report, kind, r.index, f)
				}
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					return nil, fmt.Errorf("%s report: %s[%d].%s is not a string: %s", report, kind, r.index, f, v)
				}
				r.vals[f] = s
			}
			rows = append(rows, r)
		}
	}
	if !found {
		return nil, errors.New(report + " report: no \"" + kind + "\" section")
	}
	return rows, nil
}
