package smart

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t testing.TB, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, "smartctl.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseFixture(t testing.TB, dir string) Report {
	t.Helper()
	r, err := ParseSmartctlJSON(fixture(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseNVMeRecording(t *testing.T) {
	r := parseFixture(t, "intel-optane-900p-ssdped1d280ga")
	if r.Protocol != "NVMe" || r.ModelName != "INTEL SSDPED1D280GA" || r.SerialNumber != "PHMB7466015Y280CGN" ||
		r.FirmwareVersion != "E2010325" || r.CapacityBytes != 280065171456 || r.LogicalBlockSize != 512 {
		t.Errorf("identity %+v", r)
	}
	if !r.PowerOnHoursKnown || r.PowerOnHours != 42772 || len(r.Attributes) != 0 {
		t.Errorf("poh %d %v, %d attributes", r.PowerOnHours, r.PowerOnHoursKnown, len(r.Attributes))
	}
	want := NVMeHealth{TemperatureC: 31, AvailableSpare: 100, DataUnitsRead: 67343004, DataUnitsWritten: 65516455,
		HostReads: 3265697818, HostWrites: 2714560339, ControllerBusyTime: 628, PowerCycles: 26,
		PowerOnHours: 42772, UnsafeShutdowns: 14, NumErrLogEntries: 4}
	if r.NVMe == nil || *r.NVMe != want {
		t.Errorf("nvme\n got %+v\nwant %+v", r.NVMe, want)
	}
}

func TestParseATATranscriptions(t *testing.T) {
	tests := []struct {
		dir, family, model string
		n                  int
		poh, capacity      uint64
		temp               uint8  // id of the packed temperature attribute
		tempRaw            string // its raw.string
	}{
		{"samsung-870-qvo-1tb", "Samsung based SSDs", "Samsung SSD 870 QVO 1TB", 14, 13129, 1000204886016, 190, "30"},
		{"micron-5210-ion-7t6", "", "Micron_5210_MTFDDAK7T6QDE", 26, 10835, 7681501126656, 194, "34 (Min/Max 18/44)"},
		{"micron-5210-ion-1t9", "Micron 5100 / 52x0 / 5300 / 5400 SSDs", "Micron_5210_MTFDDAK1T9QDE", 26, 14187, 1920383410176, 194, "40 (Min/Max 14/45)"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			r := parseFixture(t, tt.dir)
			if r.Protocol != "ATA" || r.ModelFamily != tt.family || r.ModelName != tt.model || r.CapacityBytes != tt.capacity || r.NVMe != nil {
				t.Errorf("identity %+v", r)
			}
			if len(r.Attributes) != tt.n {
				t.Errorf("%d attributes, want %d", len(r.Attributes), tt.n)
			}
			// No power_on_time in a transcription: hours come from attribute 9.
			if !r.PowerOnHoursKnown || r.PowerOnHours != tt.poh {
				t.Errorf("power on hours %d (%v), want %d", r.PowerOnHours, r.PowerOnHoursKnown, tt.poh)
			}
			a, ok := r.Attribute(tt.temp)
			if !ok || a.RawKnown || a.RawString != tt.tempRaw {
				t.Errorf("temperature attribute %+v", a)
			}
		})
	}
	r := parseFixture(t, "micron-5210-ion-7t6")
	if a, _ := r.Attribute(248); a != (Attribute{ID: 248, Name: "Unknown_Attribute", Value: 100, Worst: 100, Raw: 17931795822, RawKnown: true, RawString: "17931795822"}) {
		t.Errorf("248 = %+v", a)
	}
	if _, ok := r.Attribute(241); ok {
		t.Error("attribute 241 found on a Micron")
	}
}

func TestParseErrors(t *testing.T) {
	attr := func(body string) string {
		return `{"ata_smart_attributes":{"table":[` + body + `]}}`
	}
	tests := []struct{ in, want string }{
		{`{`, "smartctl json: unexpected EOF"},
		{`[]`, "cannot unmarshal array"},
		{`{"json_format_version":[2,0]}`, "json_format_version 2 is not supported"},
		{`{"smartctl":{"exit_status":2,"messages":[{"string":"Smartctl open device: /dev/sdz failed"}]}}`, "exit status 2: no device data ([Smartctl open device: /dev/sdz failed])"},
		{attr(`{"id":5,"value":256}`), "ata_smart_attributes.table[0].value: 256 exceeds 255"},
		{attr(`{"id":0}`), "table[0].id is 0"},
		{attr(`{"name":"x"}`), "table[0].id is missing"},
		{attr(`{"id":5},{"id":9},{"id":5}`), "table[2].id 5 repeats table[0]"},
		{attr(`{"id":5,"raw":{"value":-1}}`), "table[0].raw.value: -1 is not an unsigned 64-bit integer"},
		{attr(`{"id":5,"raw":{"value":1.5}}`), "table[0].raw.value: 1.5 is not an unsigned"},
		{attr(`{"id":300}`), "table[0].id: 300 exceeds 255"},
		{`{"user_capacity":{"bytes":18446744073709551616}}`, "user_capacity.bytes: 18446744073709551616 is not an unsigned 64-bit integer"},
		{`{"nvme_smart_health_information_log":{"percentage_used":256}}`, "nvme_smart_health_information_log.percentage_used: 256 exceeds 255"},
		{`{"nvme_smart_health_information_log":{"temperature":-300}}`, "temperature: -300 is not a temperature"},
	}
	for _, tt := range tests {
		if _, err := ParseSmartctlJSON([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n err = %v\nwant %q", tt.in, err, tt.want)
		}
	}
	// Exit status bits above 1 (e.g. 64: errors in the error log) still carry data.
	if r, err := ParseSmartctlJSON([]byte(`{"smartctl":{"exit_status":64},"model_name":"m"}`)); err != nil || r.ModelName != "m" {
		t.Errorf("exit 64: %+v %v", r, err)
	}
}

// TestRecordedReaderRefusesPaths: a recorded report is looked up by kernel disk name only.
func TestRecordedReaderRefusesPaths(t *testing.T) {
	r := RecordedReader{Dir: "testdata"}
	for _, disk := range []string{"", "..", "../smart", "a/b", ".hidden"} {
		if _, err := r.SmartctlJSON(context.Background(), disk); err == nil || !strings.Contains(err.Error(), "kernel device name") {
			t.Errorf("disk %q: %v", disk, err)
		}
	}
	if _, err := r.SmartctlJSON(context.Background(), "micron-5210-ion-7t6"); err != nil {
		t.Errorf("recorded report: %v", err)
	}
}
