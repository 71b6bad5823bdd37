package rook

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CephDevice is one device of `ceph device ls-by-host <host> -f json`: Ceph lists only
// devices it has an id for (udev's model and serial), with where it saw them and the daemons
// using them.
type CephDevice struct {
	ID        string
	Locations []DeviceLocation
	Daemons   []string
}

// DeviceLocation is where Ceph saw a device: the host, the kernel name, a /dev path.
type DeviceLocation struct{ Host, Dev, Path string }

// ParseDeviceLs reads `ceph device ls-by-host <host> -f json`.
func ParseDeviceLs(raw []byte) ([]CephDevice, error) {
	var doc []struct {
		DevID    *string `json:"devid"`
		Location []struct {
			Host string `json:"host"`
			Dev  string `json:"dev"`
			Path string `json:"path"`
		} `json:"location"`
		Daemons []string `json:"daemons"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("ceph device ls-by-host: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("ceph device ls-by-host: not a list")
	}
	out := make([]CephDevice, 0, len(doc))
	for i, d := range doc {
		if d.DevID == nil || *d.DevID == "" {
			return nil, fmt.Errorf("ceph device ls-by-host: [%d].devid is empty", i)
		}
		cd := CephDevice{ID: *d.DevID, Daemons: d.Daemons}
		for _, l := range d.Location {
			cd.Locations = append(cd.Locations, DeviceLocation(l))
		}
		out = append(out, cd)
	}
	return out, nil
}

// OSDsOnDevice are the OSD ids Ceph says use the device named by path (a /dev path) or
// kernel (its kernel name, "" when unknown), and whether Ceph lists the device at all.
func OSDsOnDevice(devs []CephDevice, path, kernel string) (ids []int, listed bool) {
	for _, d := range devs {
		if !d.at(path, kernel) {
			continue
		}
		listed = true
		for _, daemon := range d.Daemons {
			if n, ok := strings.CutPrefix(daemon, "osd."); ok {
				if id, err := strconv.Atoi(n); err == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids, listed
}

func (d CephDevice) at(path, kernel string) bool {
	for _, l := range d.Locations {
		if l.Path == path || (kernel != "" && l.Dev == kernel) || (l.Dev != "" && l.Dev == filepath.Base(path)) {
			return true
		}
	}
	return false
}

// ProbeDrive is a drive the gate judges with Ceph's answers: its /dev path and kernel name
// ("" when unknown).
type ProbeDrive struct{ Path, Kernel string }

// Names are the names Ceph's answer may locate the drive at, as OSDsOnDevice matches them:
// its path, its kernel name, and its path's last element.
func (d ProbeDrive) Names() []string {
	out := []string{d.Path}
	if d.Kernel != "" && d.Kernel != d.Path {
		out = append(out, d.Kernel)
	}
	if b := filepath.Base(d.Path); b != d.Path && b != d.Kernel {
		out = append(out, b)
	}
	return out
}

// askedAbout is whether a devices answer kept for names (nil: Ceph's whole list) holds every
// element Ceph locates at the drive: then OSDsOnDevice reads the same from it as from the
// whole list.
func askedAbout(names []string, d ProbeDrive) bool {
	if names == nil {
		return true
	}
	for _, n := range d.Names() {
		if !slices.Contains(names, n) {
			return false
		}
	}
	return true
}
