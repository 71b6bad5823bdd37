// Command smartctlstyle is the comparison collector of bench/footprint/run.sh: an exporter
// that works the way prometheus-community/smartctl_exporter does. On every scrape it runs
// `smartctl -j -a [-d TYPE] DEVICE` for each device in turn, parses the JSON and serves a few
// gauges per device, next to the Go and process collectors, from one Go process.
//
// smartctl_exporter itself passes `--json --info --health --attributes
// --tolerance=verypermissive --nocheck=standby --format=brief --log=error` and keeps a
// successful reading for --smartctl.interval (60 s by default), running smartctl again at
// the first scrape after that; a failed reading is not kept, so it runs again on every
// scrape. This collector runs smartctl on every scrape: smartctl_exporter with an interval
// no longer than the scrape interval, or with devices smartctl cannot read.
//
// Devices are the arguments; a device given twice gets "#2" … on its label.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// report is the part of smartctl's JSON the collector exports.
type report struct {
	Smartctl struct {
		ExitStatus int `json:"exit_status"`
		Messages   []struct {
			String   string `json:"string"`
			Severity string `json:"severity"`
		} `json:"messages"`
	} `json:"smartctl"`
	ModelName       string `json:"model_name"`
	SerialNumber    string `json:"serial_number"`
	FirmwareVersion string `json:"firmware_version"`
	Device          struct {
		Protocol string `json:"protocol"`
	} `json:"device"`
	SmartStatus *struct {
		Passed bool `json:"passed"`
	} `json:"smart_status"`
	Temperature *struct {
		Current float64 `json:"current"`
	} `json:"temperature"`
	PowerOnTime *struct {
		Hours float64 `json:"hours"`
	} `json:"power_on_time"`
	NVMe *struct {
		CriticalWarning  float64 `json:"critical_warning"`
		AvailableSpare   float64 `json:"available_spare"`
		PercentageUsed   float64 `json:"percentage_used"`
		DataUnitsWritten float64 `json:"data_units_written"`
		MediaErrors      float64 `json:"media_errors"`
	} `json:"nvme_smart_health_information_log"`
	ATA *struct {
		Table []struct {
			ID    int    `json:"id"`
			Name  string `json:"name"`
			Value int    `json:"value"`
			Raw   struct {
				Value float64 `json:"value"`
			} `json:"raw"`
		} `json:"table"`
	} `json:"ata_smart_attributes"`
}

type collector struct {
	smartctl, devType string
	devices, labels   []string
}

func (c collector) Describe(chan<- *prometheus.Desc) {}

func gauge(ch chan<- prometheus.Metric, name, help string, names, values []string, v float64) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, names, nil), prometheus.GaugeValue, v, values...)
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for i, dev := range c.devices {
		label := c.labels[i]
		args := []string{"-j", "-a"}
		if c.devType != "" {
			args = append(args, "-d", c.devType)
		}
		start := time.Now()
		out, err := exec.Command(c.smartctl, append(args, dev)...).Output()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			fmt.Fprintf(os.Stderr, "smartctlstyle: %s: %v\n", dev, err)
			continue
		}
		gauge(ch, "smartctl_device_collect_seconds", "Time smartctl took.", []string{"device"}, []string{label}, time.Since(start).Seconds())
		var r report
		if err := json.Unmarshal(out, &r); err != nil {
			gauge(ch, "smartctl_device_json_ok", "1 when smartctl printed valid JSON.", []string{"device"}, []string{label}, 0)
			continue
		}
		gauge(ch, "smartctl_device_json_ok", "1 when smartctl printed valid JSON.", []string{"device"}, []string{label}, 1)
		gauge(ch, "smartctl_device_smartctl_exit_status", "smartctl's exit status bit mask.", []string{"device"}, []string{label}, float64(r.Smartctl.ExitStatus))
		errs := 0
		for _, m := range r.Smartctl.Messages {
			if m.Severity == "error" {
				errs++
			}
		}
		gauge(ch, "smartctl_device_error_messages", "Error messages in smartctl's JSON.", []string{"device"}, []string{label}, float64(errs))
		gauge(ch, "smartctl_device", "Device info.", []string{"device", "model_name", "serial_number", "firmware_version", "protocol"},
			[]string{label, r.ModelName, r.SerialNumber, r.FirmwareVersion, r.Device.Protocol}, 1)
		if r.SmartStatus != nil {
			passed := 0.0
			if r.SmartStatus.Passed {
				passed = 1
			}
			gauge(ch, "smartctl_device_smart_status", "1 when the SMART status passed.", []string{"device"}, []string{label}, passed)
		}
		if r.Temperature != nil {
			gauge(ch, "smartctl_device_temperature", "Current temperature, °C.", []string{"device"}, []string{label}, r.Temperature.Current)
		}
		if r.PowerOnTime != nil {
			gauge(ch, "smartctl_device_power_on_seconds", "Power-on time.", []string{"device"}, []string{label}, r.PowerOnTime.Hours*3600)
		}
		if n := r.NVMe; n != nil {
			for name, v := range map[string]float64{
				"critical_warning": n.CriticalWarning, "available_spare": n.AvailableSpare, "percentage_used": n.PercentageUsed,
				"data_units_written": n.DataUnitsWritten, "media_errors": n.MediaErrors,
			} {
				gauge(ch, "smartctl_device_nvme_"+name, "NVMe SMART/Health log field.", []string{"device"}, []string{label}, v)
			}
		}
		if a := r.ATA; a != nil {
			for _, at := range a.Table {
				names, values := []string{"device", "attribute_id", "attribute_name"}, []string{label, strconv.Itoa(at.ID), at.Name}
				gauge(ch, "smartctl_device_attribute_raw", "ATA attribute raw value.", names, values, at.Raw.Value)
				gauge(ch, "smartctl_device_attribute_value", "ATA attribute normalised value.", names, values, float64(at.Value))
			}
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:9633", "serve /metrics here")
	smartctl := flag.String("smartctl", "/usr/sbin/smartctl", "smartctl binary")
	devType := flag.String("d", "", "smartctl -d TYPE for every device (empty: smartctl detects it)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: smartctlstyle [-listen ADDR] [-d TYPE] DEVICE...")
		os.Exit(2)
	}
	c := collector{smartctl: *smartctl, devType: *devType, devices: flag.Args()}
	seen := map[string]int{}
	for _, d := range c.devices {
		seen[d]++
		label := d
		if seen[d] > 1 {
			label += "#" + strconv.Itoa(seen[d])
		}
		c.labels = append(c.labels, label)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := &http.Server{Addr: *listen, Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "smartctlstyle:", err)
		os.Exit(1)
	}
}
