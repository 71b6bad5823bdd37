package smart

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The subset of smartctl's JSON (format version 1) the agent reads. Numbers
// stay json.Number so range checks can name the offending field.
type jsonOutput struct {
	FormatVersion []json.Number `json:"json_format_version"`
	Smartctl      *struct {
		ExitStatus json.Number `json:"exit_status"`
		Messages   []struct {
			String string `json:"string"`
		} `json:"messages"`
	} `json:"smartctl"`
	Device struct {
		Protocol string `json:"protocol"`
	} `json:"device"`
	ModelFamily     string `json:"model_family"`
	ModelName       string `json:"model_name"`
	SerialNumber    string `json:"serial_number"`
	FirmwareVersion string `json:"firmware_version"`
	UserCapacity    *struct {
		Bytes json.Number `json:"bytes"`
	} `json:"user_capacity"`
	LogicalBlockSize json.Number `json:"logical_block_size"`
	PowerOnTime      *struct {
		Hours json.Number `json:"hours"`
	} `json:"power_on_time"`
	ATA *struct {
		Table []jsonAttribute `json:"table"`
	} `json:"ata_smart_attributes"`
	NVMe *jsonNVMe `json:"nvme_smart_health_information_log"`
}

type jsonAttribute struct {
	ID     json.Number `json:"id"`
	Name   string      `json:"name"`
	Value  json.Number `json:"value"`
	Worst  json.Number `json:"worst"`
	Thresh json.Number `json:"thresh"`
	Raw    struct {
		Value  json.Number `json:"value"`
		String string      `json:"string"`
	} `json:"raw"`
}

type jsonNVMe struct {
	CriticalWarning         json.Number `json:"critical_warning"`
	Temperature             json.Number `json:"temperature"`
	AvailableSpare          json.Number `json:"available_spare"`
	AvailableSpareThreshold json.Number `json:"available_spare_threshold"`
	PercentageUsed          json.Number `json:"percentage_used"`
	DataUnitsRead           json.Number `json:"data_units_read"`
	DataUnitsWritten        json.Number `json:"data_units_written"`
	HostReads               json.Number `json:"host_reads"`
	HostWrites              json.Number `json:"host_writes"`
	ControllerBusyTime      json.Number `json:"controller_busy_time"`
	PowerCycles             json.Number `json:"power_cycles"`
	PowerOnHours            json.Number `json:"power_on_hours"`
	UnsafeShutdowns         json.Number `json:"unsafe_shutdowns"`
	MediaErrors             json.Number `json:"media_errors"`
	NumErrLogEntries        json.Number `json:"num_err_log_entries"`
}

// smartctl exit status bits 0 and 1: the command line did not parse, or the
// device could not be opened; the output then holds no device data.
const exitNoData = 1<<0 | 1<<1

// attrPowerOnHours is the ATA attribute smartctl derives power_on_time from.
const attrPowerOnHours = 9

// ParseSmartctlJSON decodes the output of `smartctl -j -a <device>`.
func ParseSmartctlJSON(b []byte) (Report, error) {
	var in jsonOutput
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&in); err != nil {
		return Report{}, fmt.Errorf("smartctl json: %w", err)
	}
	p := parser{}
	if len(in.FormatVersion) > 0 {
		if v := p.uint("json_format_version[0]", in.FormatVersion[0], math.MaxUint32); p.err == nil && v != 1 {
			return Report{}, fmt.Errorf("smartctl json: json_format_version %d is not supported (want 1)", v)
		}
	}
	r := Report{
		Protocol:        in.Device.Protocol,
		ModelFamily:     in.ModelFamily,
		ModelName:       in.ModelName,
		SerialNumber:    in.SerialNumber,
		FirmwareVersion: in.FirmwareVersion,
	}
	if s := in.Smartctl; s != nil {
		for _, m := range s.Messages {
			r.Messages = append(r.Messages, m.String)
		}
		if st := p.uint("smartctl.exit_status", s.ExitStatus, 255); p.err == nil && st&exitNoData != 0 {
			return Report{}, fmt.Errorf("smartctl json: exit status %d: no device data (%v)", st, r.Messages)
		}
	}
	if in.UserCapacity != nil {
		r.CapacityBytes = p.uint("user_capacity.bytes", in.UserCapacity.Bytes, math.MaxUint64)
	}
	r.LogicalBlockSize = uint32(p.uint("logical_block_size", in.LogicalBlockSize, math.MaxUint32))
	if in.PowerOnTime != nil && in.PowerOnTime.Hours != "" {
		r.PowerOnHours, r.PowerOnHoursKnown = p.uint("power_on_time.hours", in.PowerOnTime.Hours, math.MaxUint64), true
	}
	if in.ATA != nil {
		r.Attributes = p.attributes(in.ATA.Table)
	}
	if in.NVMe != nil {
		r.NVMe = p.nvme(in.NVMe)
	}
	if p.err != nil {
		return Report{}, p.err
	}
	if !r.PowerOnHoursKnown {
		if a, ok := r.Attribute(attrPowerOnHours); ok && a.RawKnown {
			r.PowerOnHours, r.PowerOnHoursKnown = a.Raw, true
		}
	}
	return r, nil
}

// parser keeps the first range error so field decoding reads linearly.
type parser struct{ err error }

// uint parses an optional non-negative integer no larger than max; an
// absent number is 0.
func (p *parser) uint(path string, n json.Number, max uint64) uint64 {
	if p.err != nil || n == "" {
		return 0
	}
	v, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil {
		p.err = fmt.Errorf("smartctl json: %s: %s is not an unsigned 64-bit integer", path, n)
		return 0
	}
	if v > max {
		p.err = fmt.Errorf("smartctl json: %s: %d exceeds %d", path, v, max)
		return 0
	}
	return v
}

func (p *parser) attributes(table []jsonAttribute) []Attribute {
	out := make([]Attribute, 0, len(table))
	seen := map[uint8]int{}
	for i, ja := range table {
		path := fmt.Sprintf("ata_smart_attributes.table[%d]", i)
		if ja.ID == "" {
			p.err = fmt.Errorf("smartctl json: %s.id is missing", path)
			return nil
		}
		a := Attribute{
			ID:        uint8(p.uint(path+".id", ja.ID, 255)),
			Name:      ja.Name,
			Value:     uint8(p.uint(path+".value", ja.Value, 255)),
			Worst:     uint8(p.uint(path+".worst", ja.Worst, 255)),
			Thresh:    uint8(p.uint(path+".thresh", ja.Thresh, 255)),
			RawString: ja.Raw.String,
		}
		if ja.Raw.Value != "" {
			a.Raw, a.RawKnown = p.uint(path+".raw.value", ja.Raw.Value, math.MaxUint64), true
		}
		if p.err != nil {
			return nil
		}
		if a.ID == 0 {
			p.err = fmt.Errorf("smartctl json: %s.id is 0", path)
			return nil
		}
		if j, dup := seen[a.ID]; dup {
			p.err = fmt.Errorf("smartctl json: %s.id %d repeats table[%d]", path, a.ID, j)
			return nil
		}
		seen[a.ID] = i
		out = append(out, a)
	}
	return out
}

func (p *parser) nvme(j *jsonNVMe) *NVMeHealth {
	const path = "nvme_smart_health_information_log."
	h := &NVMeHealth{
		CriticalWarning:         uint8(p.uint(path+"critical_warning", j.CriticalWarning, 255)),
		AvailableSpare:          uint8(p.uint(path+"available_spare", j.AvailableSpare, 255)),
		AvailableSpareThreshold: uint8(p.uint(path+"available_spare_threshold", j.AvailableSpareThreshold, 255)),
		PercentageUsed:          uint8(p.uint(path+"percentage_used", j.PercentageUsed, 255)),
		DataUnitsRead:           p.uint(path+"data_units_read", j.DataUnitsRead, math.MaxUint64),
		DataUnitsWritten:        p.uint(path+"data_units_written", j.DataUnitsWritten, math.MaxUint64),
		HostReads:               p.uint(path+"host_reads", j.HostReads, math.MaxUint64),
		HostWrites:              p.uint(path+"host_writes", j.HostWrites, math.MaxUint64),
		ControllerBusyTime:      p.uint(path+"controller_busy_time", j.ControllerBusyTime, math.MaxUint64),
		PowerCycles:             p.uint(path+"power_cycles", j.PowerCycles, math.MaxUint64),
		PowerOnHours:            p.uint(path+"power_on_hours", j.PowerOnHours, math.MaxUint64),
		UnsafeShutdowns:         p.uint(path+"unsafe_shutdowns", j.UnsafeShutdowns, math.MaxUint64),
		MediaErrors:             p.uint(path+"media_errors", j.MediaErrors, math.MaxUint64),
		NumErrLogEntries:        p.uint(path+"num_err_log_entries", j.NumErrLogEntries, math.MaxUint64),
	}
	// °C from kelvin − 273: 0 K would print −273, the NVMe log's 16 bits allow up to 65262.
	if t := j.Temperature; t != "" && p.err == nil {
		v, err := strconv.ParseInt(string(t), 10, 32)
		if err != nil || v < -273 || v > 65535-273 {
			p.err = fmt.Errorf("smartctl json: %stemperature: %s is not a temperature in °C", path, t)
			return nil
		}
		h.TemperatureC = int(v)
	}
	return h
}
