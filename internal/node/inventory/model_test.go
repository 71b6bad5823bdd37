package inventory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prism-storage/prism/internal/drivedb"
	"github.com/prism-storage/prism/internal/host/smart"
	"github.com/prism-storage/prism/internal/host/sysfs"
)

// fakeATA serves smartctl JSON as ATA IDENTIFY through a SAT-capable path would give it.
type fakeATA map[string]string

func (f fakeATA) SmartctlJSON(_ context.Context, disk string) ([]byte, error) {
	if m, ok := f[disk]; ok {
		return []byte(`{"json_format_version":[1,0],"device":{"protocol":"ATA"},"model_name":"` + m + `"}`), nil
	}
	return nil, errors.New("smartctl: no ATA passthrough")
}

// TestModelFromRecordedUdev takes the model of each recorded udev database record
// (testdata/udev/SOURCE.md says which are real) with the sysfs attributes the kernel shows
// beside it, and checks the form chosen, whether it may be cut, the ATA IDENTIFY fallback
// and what the drive database makes of the result.
func TestModelFromRecordedUdev(t *testing.T) {
	for _, c := range []struct {
		file          string
		disk          sysfs.BlockDevice
		ata           string // model smartctl reads by ATA IDENTIFY; "" = ATA passthrough fails
		want          modelChoice
		final         string // after the ATA IDENTIFY fallback
		finalSource   string
		dbFamily      string // drive database family of the final model; "" = unknown
		sizeBytes     uint64
		wantVendor    string
		vendorFromATA bool
	}{
		{file: "ata-ahci-foresee-64gb-ssd", disk: sysfs.BlockDevice{Name: "sda", Vendor: "ATA", Model: "FORESEE 64GB SSD"},
			want: modelChoice{text: "FORESEE 64GB SSD", source: modelUdevATA}, final: "FORESEE 64GB SSD", finalSource: modelUdevATA},
		{file: "sas-expander-ata-id-hgst-huh728080ale604", disk: sysfs.BlockDevice{Name: "sdn", Vendor: "ATA", Model: "HGST HUH728080AL"},
			want: modelChoice{text: "HGST HUH728080ALE604", source: modelUdevATA}, final: "HGST HUH728080ALE604", finalSource: modelUdevATA,
			wantVendor: "Western Digital"},
		{file: "sas-expander-scsi-id-hgst-huh728080ale604", disk: sysfs.BlockDevice{Name: "sdn", Vendor: "ATA", Model: "HGST HUH728080AL"},
			ata:  "HGST HUH728080ALE604",
			want: modelChoice{text: "HGST HUH728080AL", source: modelUdevSCSI, maybeCut: true}, final: "HGST HUH728080ALE604", finalSource: modelATAIdentify,
			wantVendor: "Western Digital"},
		{file: "raid-hba-scsi-id-samsung-870-qvo", disk: sysfs.BlockDevice{Name: "sdb", Vendor: "ATA", Model: "Samsung SSD 870 "},
			ata:  "Samsung SSD 870 QVO 4TB",
			want: modelChoice{text: "Samsung SSD 870", source: modelUdevSCSI, maybeCut: true}, final: "Samsung SSD 870 QVO 4TB", finalSource: modelATAIdentify,
			dbFamily: "870 QVO", sizeBytes: 4000787030016, wantVendor: "Samsung"},
		{file: "raid-hba-scsi-id-samsung-870-qvo", disk: sysfs.BlockDevice{Name: "sdb", Vendor: "ATA", Model: "Samsung SSD 870 "},
			want: modelChoice{text: "Samsung SSD 870", source: modelUdevSCSI, maybeCut: true}, final: "Samsung SSD 870", finalSource: modelUdevSCSI,
			wantVendor: "Samsung"},
		{file: "usb-bridge-sabrent-ec-ss31", disk: sysfs.BlockDevice{Name: "sda", Vendor: "SABRENT", Model: "SABRENT"},
			ata:  "Samsung SSD 860 QVO 1TB",
			want: modelChoice{text: "SABRENT", source: modelUdevSCSI, maybeCut: true}, final: "Samsung SSD 860 QVO 1TB", finalSource: modelATAIdentify,
			dbFamily: "860 QVO", sizeBytes: 1000204886016, wantVendor: "Samsung"},
		{file: "nvme-eudev-samsung-mzvpv256hdgl", disk: sysfs.BlockDevice{Name: "nvme0n1", NVMeController: "nvme0", Model: "SAMSUNG MZVPV256HDGL-000H1"},
			want: modelChoice{text: "SAMSUNG MZVPV256HDGL-000H1", source: modelSysfs}, final: "SAMSUNG MZVPV256HDGL-000H1", finalSource: modelSysfs},
		{file: "nvme-systemd-samsung-970-evo-250gb", disk: sysfs.BlockDevice{Name: "nvme0n1", NVMeController: "nvme0"},
			want: modelChoice{text: "Samsung SSD 970 EVO 250GB", source: modelUdevSCSI}, final: "Samsung SSD 970 EVO 250GB", finalSource: modelUdevSCSI},
	} {
		t.Run(c.file+"/"+c.ata, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "udev", c.file))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := sysfs.ParseUdevData(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := chooseModel(c.disk, rec.Properties, "")
			if got != c.want {
				t.Fatalf("chooseModel = %+v, want %+v", got, c.want)
			}
			if got.maybeCut {
				ata := fakeATA{}
				if c.ata != "" {
					ata[c.disk.Name] = c.ata
				}
				if full, err := ataModel(context.Background(), ata, c.disk.Name); err == nil {
					got = modelChoice{text: full, source: modelATAIdentify}
				}
			}
			if got.text != c.final || got.source != c.finalSource {
				t.Errorf("final model = %q from %s, want %q from %s", got.text, got.source, c.final, c.finalSource)
			}
			e, known := drivedb.Default().Lookup(got.text, c.sizeBytes)
			if got.maybeCut {
				known = false // a cut model is never matched (classify says why)
			}
			if family := map[bool]string{true: e.Family}[known]; family != c.dbFamily {
				t.Errorf("drive database family = %q, want %q", family, c.dbFamily)
			}
			if v, _ := deviceVendor(got.text, c.disk.NVMeController != "", 0, 0, rec.Properties["ID_VENDOR"]); c.wantVendor != "" && v != c.wantVendor {
				t.Errorf("vendor = %q, want %q", v, c.wantVendor)
			}
		})
	}
}

func TestATAModelFromRecordedSmartctl(t *testing.T) {
	// A real smartctl report (internal/host/smart/testdata): ATA IDENTIFY's model as smartctl prints it.
	dir := filepath.Join("..", "..", "host", "smart", "testdata")
	r := smart.RecordedReader{Dir: dir}
	got, err := ataModel(context.Background(), r, "micron-5210-ion-7t6")
	if err != nil {
		t.Fatal(err)
	}
	if got != "Micron_5210_MTFDDAK7T6QDE" {
		t.Errorf("model = %q", got)
	}
}
