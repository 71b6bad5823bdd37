package ioclass

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ioKeys are the keys ParseIO knows, in the order IO.String writes them.
var ioKeys = []string{"size", "dir", "comm", "lba", "core", "pid", "wlth", "direct", "metadata",
	"directory", "file", "ext", "filesize", "fileoffset"}

// ParseIO reads an IO description for `kubectl prism ioclass explain --io`:
// comma-separated key=value items, e.g.
//
//	size=4096,dir=write,comm=bstore_kv_sync,lba=123,core=1,pid=42,direct
//
// Keys: size (bytes, or with KiB/MiB/GiB or k/m/g), dir (read|write), comm,
// lba (512-byte sectors), core, pid, wlth, direct and metadata (flags, or
// =true/false), and for an IO into a file: directory (absolute), file (a
// name; its extension is derived), ext, filesize, fileoffset. Errors name the
// key at fault.
func ParseIO(s string) (IO, error) {
	var io IO
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, value, hasValue := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		if !slices.Contains(ioKeys, key) {
			return IO{}, fmt.Errorf("unknown key %q (want one of %s)", key, strings.Join(ioKeys, ", "))
		}
		if seen[key] {
			return IO{}, fmt.Errorf("key %q given twice", key)
		}
		seen[key] = true
		if err := io.set(key, strings.TrimSpace(value), hasValue); err != nil {
			return IO{}, fmt.Errorf("key %q: %w", key, err)
		}
	}
	return io, nil
}

func (io *IO) set(key, v string, hasValue bool) error {
	if !hasValue && key != "direct" && key != "metadata" {
		return fmt.Errorf("needs a value (%s=...)", key)
	}
	var err error
	switch key {
	case "size":
		io.Size, err = parseBytes(v)
	case "dir":
		switch v {
		case "read", "r":
			io.Write = false
		case "write", "w":
			io.Write = true
		default:
			err = fmt.Errorf("invalid direction %q: want read or write", v)
		}
	case "comm":
		io.Comm = v
	case "lba":
		io.LBA, err = parseUint(v)
	case "core":
		io.CoreID, err = parseSmall(v, MaxCoreID)
	case "pid":
		io.PID, err = parseSmall(v, 1<<31-1)
	case "wlth":
		io.WLTH, err = parseSmall(v, 1<<31-1)
	case "direct":
		io.Direct, err = parseFlag(v, hasValue)
	case "metadata":
		io.Metadata, err = parseFlag(v, hasValue)
	case "directory":
		io.Dir, io.HasFile = path.Clean(v), true
		switch {
		case !strings.HasPrefix(v, "/"):
			err = fmt.Errorf("invalid directory %q: want an absolute path", v)
		case strings.TrimSpace(io.Dir) != io.Dir:
			// "/a /" cleans to "/a ", whose space the list's trimming would drop when read back.
			err = fmt.Errorf("invalid directory %q: its last element ends in white space, which --io cannot carry", v)
		}
	case "file":
		if v == "" || strings.Contains(v, "/") {
			err = fmt.Errorf("invalid file name %q: want a name without /", v)
		}
		io.FileName, io.HasFile = v, true
		if io.Extension == "" {
			io.Extension = nameExtension(v)
		}
	case "ext":
		io.Extension, io.HasFile = v, true
	case "filesize":
		io.FileSize, err = parseBytes(v)
		io.HasFile = true
	case "fileoffset":
		io.FileOffset, err = parseBytes(v)
		io.HasFile = true
	}
	return err
}

// nameExtension is what follows a file name's last dot ("" without one).
func nameExtension(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

func parseUint(v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid number %q", v)
	}
	return n, nil
}

func parseSmall(v string, max int) (int, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > uint64(max) {
		return 0, fmt.Errorf("invalid number %q: want 0-%d", v, max)
	}
	return int(n), nil
}

func parseFlag(v string, hasValue bool) (bool, error) {
	if !hasValue {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("invalid flag value %q: want true or false", v)
	}
	return b, nil
}

// byteUnits are the suffixes parseBytes takes, all binary.
var byteUnits = []struct {
	suffix string
	shift  uint
}{
	{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"k", 10}, {"K", 10}, {"m", 20}, {"M", 20}, {"g", 30}, {"G", 30}, {"B", 0},
}

// parseBytes reads 4096, 64KiB, 64k, 1MiB or 1M (binary units).
func parseBytes(v string) (uint64, error) {
	num, shift := v, uint(0)
	for _, u := range byteUnits {
		if strings.HasSuffix(v, u.suffix) {
			num, shift = strings.TrimSuffix(v, u.suffix), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(strings.TrimSpace(num), 10, 64)
	if err != nil || n > (^uint64(0))>>shift {
		return 0, fmt.Errorf("invalid size %q: want bytes like 4096, 64KiB or 1MiB", v)
	}
	return n << shift, nil
}

// String writes io in ParseIO's syntax (only what differs from the zero IO,
// plus dir); ParseIO(io.String()) gives io back for IOs ParseIO can express.
func (io IO) String() string {
	items := []string{"size=" + strconv.FormatUint(io.Size, 10)}
	if io.Write {
		items = append(items, "dir=write")
	} else {
		items = append(items, "dir=read")
	}
	add := func(key, v string, set bool) {
		if set {
			items = append(items, key+"="+v)
		}
	}
	add("comm", io.Comm, io.Comm != "")
	add("lba", strconv.FormatUint(io.LBA, 10), io.LBA != 0)
	add("core", strconv.Itoa(io.CoreID), io.CoreID != 0)
	add("pid", strconv.Itoa(io.PID), io.PID != 0)
	add("wlth", strconv.Itoa(io.WLTH), io.WLTH != 0)
	if io.Direct {
		items = append(items, "direct")
	}
	if io.Metadata {
		items = append(items, "metadata")
	}
	add("directory", io.Dir, io.Dir != "")
	add("file", io.FileName, io.FileName != "")
	// file= derives the extension, so ext= is written whenever it says something else ("ext=").
	add("ext", io.Extension, io.Extension != nameExtension(io.FileName))
	add("filesize", strconv.FormatUint(io.FileSize, 10), io.HasFile)
	add("fileoffset", strconv.FormatUint(io.FileOffset, 10), io.HasFile)
	return strings.Join(items, ",")
}
