package sysfs

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// UdevRecord is the content of one /run/udev/data/b<major>:<minor> file.
type UdevRecord struct {
	// Symlinks are the device's /dev links, relative to /dev (disk/by-id/...).
	Symlinks []string
	// Properties are the E: lines (ID_SERIAL, ID_MODEL, ID_BUS, ID_WWN...).
	Properties map[string]string
}

// ParseUdevData parses udev's database format: one "<type>:<value>" per line, where
// S: is a symlink, E: a KEY=value property; other types (I:, G:, Q:, V:, W:) are ignored.
// A malformed line is an error naming its line number, so nothing is dropped silently.
func ParseUdevData(data []byte) (UdevRecord, error) {
	rec := UdevRecord{Properties: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if len(line) < 2 || line[1] != ':' {
			return rec, fmt.Errorf("udev data line %d: %q is not <type>:<value>", n, line)
		}
		value := line[2:]
		switch line[0] {
		case 'S':
			if value == "" {
				return rec, fmt.Errorf("udev data line %d: empty symlink", n)
			}
			rec.Symlinks = append(rec.Symlinks, value)
		case 'E':
			key, val, ok := strings.Cut(value, "=")
			if !ok || key == "" {
				return rec, fmt.Errorf("udev data line %d: property %q is not KEY=value", n, value)
			}
			rec.Properties[key] = val
		}
	}
	return rec, sc.Err()
}
