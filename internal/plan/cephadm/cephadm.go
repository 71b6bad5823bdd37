// Package cephadm exports node plans as cephadm OSD service specifications, for clusters that
// cephadm runs instead of Rook (`kubectl prism plan -o cephadm`).
package cephadm

import (
	"fmt"
	"sort"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// Spec is a cephadm OSD service specification (a DriveGroupSpec): the same pairing and slot
// size, carved by ceph-volume batch.
type Spec struct {
	ServiceType      string      `json:"service_type"`
	ServiceID        string      `json:"service_id"`
	Placement        Placement   `json:"placement"`
	CrushDeviceClass string      `json:"crush_device_class,omitempty"`
	Spec             DriveGroups `json:"spec"`
}

// Placement places a spec on hosts.
type Placement struct {
	Hosts []string `json:"hosts"`
}

// DriveGroups is the device part of an OSD spec.
type DriveGroups struct {
	DataDevices Devices `json:"data_devices"`
	DBDevices   Devices `json:"db_devices"`
	BlockDBSize int64   `json:"block_db_size"`
	DBSlots     int     `json:"db_slots"`
	Objectstore string  `json:"objectstore"`
	FilterLogic string  `json:"filter_logic,omitempty"`
}

// Devices selects devices by path.
type Devices struct {
	Paths []string `json:"paths"`
}

// Specs builds one OSD spec per fast device: its data devices, the fast device as the
// DB device, and the slot size and count, so ceph-volume batch lays out what Prism planned.
func Specs(plans map[string]prismv1.NodePlan, deviceClass string) []Spec {
	var specs []Spec
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
			specs = append(specs, Spec{
				ServiceType:      "osd",
				ServiceID:        fmt.Sprintf("prism-%s-%d", node, i),
				Placement:        Placement{Hosts: []string{node}},
				CrushDeviceClass: deviceClass,
				Spec: DriveGroups{
					DataDevices: Devices{Paths: data},
					DBDevices:   Devices{Paths: []string{f.StablePath}},
					BlockDBSize: f.SlotSizeBytes,
					DBSlots:     len(f.Slots),
					Objectstore: "bluestore",
				},
			})
		}
	}
	return specs
}
