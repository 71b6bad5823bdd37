package casadm

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Rows of `casadm -V -o csv`.
const (
	versionModuleRow = "CAS Cache Kernel Module"
	versionCLIRow    = "CAS CLI Utility"
	moduleNotLoaded  = "Not Loaded"
)

// Version is `casadm -V -o csv`.
type Version struct {
	// CLI is casadm's own version.
	CLI Release
	// Module is cas_cache's version; zero when ModuleLoaded is false
	// (casadm prints "Not Loaded").
	Module       Release
	ModuleLoaded bool
	// Other holds further rows (older releases listed "CAS Disk Kernel
	// Module"), by name.
	Other map[string]string
}

// Release is an Open CAS version such as 26.03.2.0000.release or
// 26.06.0.0000.devel: year, month, patch, build, then a suffix.
type Release struct {
	Major, Minor, Patch, Build int
	Suffix                     string
	// Raw is the version as printed.
	Raw string
}

// AtLeast reports whether r is year.month or later: AtLeast(26, 3) tells a
// v26 casadm (which refuses a trailing rule operator) from v25.
func (r Release) AtLeast(major, minor int) bool {
	return r.Major > major || (r.Major == major && r.Minor >= minor)
}

// ParseRelease reads a version string: at least year.month, then optional
// numeric patch and build, then any suffix.
func ParseRelease(s string) (Release, error) {
	r := Release{Raw: s}
	parts := strings.Split(s, ".")
	nums := []*int{&r.Major, &r.Minor, &r.Patch, &r.Build}
	i := 0
	for ; i < len(parts) && i < len(nums); i++ {
		v, err := strconv.Atoi(parts[i])
		if err != nil || v < 0 || strings.HasPrefix(parts[i], "+") {
			break
		}
		*nums[i] = v
	}
	if i < 2 {
		return Release{}, fmt.Errorf("invalid version %q: want year.month[.patch[.build]][.suffix]", s)
	}
	r.Suffix = strings.Join(parts[i:], ".")
	return r, nil
}

// String is the version as printed.
func (r Release) String() string { return r.Raw }

// ParseVersion reads `casadm -V -o csv` (header "Name,Version").
func ParseVersion(r io.Reader) (Version, error) {
	t, err := readTable(r)
	if err != nil {
		return Version{}, err
	}
	if err := t.require("Name", "Version"); err != nil {
		return Version{}, err
	}
	var v Version
	haveCLI := false
	for _, row := range t.rows {
		name, value := t.get(row, "Name"), t.get(row, "Version")
		switch name {
		case versionCLIRow:
			if v.CLI, err = ParseRelease(value); err != nil {
				return Version{}, t.fieldErr(row, "Version", "%v", err)
			}
			haveCLI = true
		case versionModuleRow:
			if value == moduleNotLoaded {
				continue
			}
			if v.Module, err = ParseRelease(value); err != nil {
				return Version{}, t.fieldErr(row, "Version", "%v", err)
			}
			v.ModuleLoaded = true
		default:
			if name == "" {
				return Version{}, t.fieldErr(row, "Name", "empty name")
			}
			if v.Other == nil {
				v.Other = map[string]string{}
			}
			v.Other[name] = value
		}
	}
	if !haveCLI {
		return Version{}, &ParseError{Msg: fmt.Sprintf("no %q row", versionCLIRow)}
	}
	return v, nil
}
