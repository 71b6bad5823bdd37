package plan

import (
	"fmt"
	"sort"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// CephadmSpec is a cephadm OSD service specification (a DriveGroupSpec) for clusters that
// cephadm runs instead of Rook: the same pairing and slot size, carved by ceph-volume batch.
type CephadmSpec struct {
	ServiceType      string             `json:"service_type"`
	ServiceID        string             `json:"service_id"`
	Placement        CephadmPlacement   `json:"placement"`
	CrushDeviceClass string             `json:"crush_device_class,omitempty"`
	Spec             CephadmDriveGroups `json:"spec"`
}

// CephadmPlacement places a spec on hosts.
type CephadmPlacement struct {
	Hosts []string `json:"hosts"`
}

// CephadmDriveGroups is the device part of an OSD spec.
type CephadmDriveGroups struct {
	DataDevices CephadmDevices `json:"data_devices"`
	DBDevices   CephadmDevices `json:"db_devices"`
	BlockDBSize int64          `json:"block_db_size"`
	DBSlots     int            `json:"db_slots"`
	Objectstore string         `json:"objectstore"`
	FilterLogic string         `json:"filter_logic,omitempty"`
}

// CephadmDevices selects devices by path.
type CephadmDevices struct {
	Paths []string `json:"paths"`
}

// CephadmSpecs builds one OSD spec per fast device: its data devices, the fast device as the
// DB device, and the slot size and count, so ceph-volume batch lays out what Prism planned.
func CephadmSpecs(plans map[string]prismv1.NodePlan, deviceClass string) []CephadmSpec {
	var specs []CephadmSpec
	nodes := make([]string, 0, len(plans))
	for n := range plans {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		for i, f := range plans[node].FastDevices {
			var data []string
			for _, s := range f.Slots {
				if s.DataDevice != "" {
					data = append(data, s.DataDevice)
				}
			}
			if len(data) == 0 {
				continue
			}
			sort.Strings(data)
			specs = append(specs, CephadmSpec{
				ServiceType:      "osd",
				ServiceID:        fmt.Sprintf("prism-%s-%d", node, i),
				Placement:        CephadmPlacement{Hosts: []string{node}},
				CrushDeviceClass: deviceClass,
				Spec: CephadmDriveGroups{
					DataDevices: CephadmDevices{Paths: data},
					DBDevices:   CephadmDevices{Paths: []string{f.StablePath}},
					BlockDBSize: f.SlotSizeBytes,
					DBSlots:     len(f.Slots),
					Objectstore: "bluestore",
				},
			})
		}
	}
	return specs
}
