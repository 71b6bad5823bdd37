package casadm

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NoCaches is what `casadm -L` prints, with rc 0 and no header, when no
// cache runs and the core pool is empty.
const NoCaches = "No caches running"

// Limits of casadm ids.
const (
	MaxCacheID = 16384
	MaxCoreID  = 4095
)

// List is `casadm -L -o csv`: caches with their cores, and the core pool.
type List struct {
	Caches []Cache
	// Pool holds detached cores waiting in the core pool for their cache.
	Pool []Core
}

// Cache is one cache line of the list.
type Cache struct {
	ID int
	// Disk is the cache device: a by-id link or a resolved /dev name (see
	// IsByID); "" for a detached standby cache.
	Disk   string
	Status Status
	// WritePolicy is casadm's field as printed: "wb", "-" in standby, and
	// "wb->wt" while flushing (flushing out of write-back; the cache now
	// runs in the mode after the arrow).
	WritePolicy string
	// Mode is the cache mode in effect (wt, wb, wa, pt, wo), "" in standby.
	Mode string
	// Device is /dev/cas-cache-<id> for an attached standby cache, else "".
	Device string
	Cores  []Core
}

// Core is one core line of the list.
type Core struct {
	// ID is the core id; -1 for a core in the pool.
	ID int
	// Disk is the core device (by-id link or resolved name).
	Disk   string
	Status Status
	// Device is the exported object /dev/cas<cache>-<core>, "" when none.
	Device string
}

// List columns.
const (
	colType   = "type"
	colID     = "id"
	colDisk   = "disk"
	colStatus = "status"
	colPolicy = "write policy"
	colDevice = "device"
)

// ParseList reads `casadm -L -o csv` (with or without -b).
func ParseList(r io.Reader) (List, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOutput))
	if err != nil {
		return List{}, &ParseError{Msg: err.Error()}
	}
	if strings.TrimSpace(string(data)) == NoCaches {
		return List{}, nil
	}
	t, err := readTable(strings.NewReader(string(data)))
	if err != nil {
		return List{}, err
	}
	if err := t.require(colType, colID, colDisk, colStatus, colPolicy, colDevice); err != nil {
		return List{}, err
	}
	var l List
	var cache *Cache // the cache the next core lines belong to; nil = pool
	inPool := false
	for _, r := range t.rows {
		switch typ := t.get(r, colType); typ {
		case "cache":
			c, err := t.cache(r)
			if err != nil {
				return List{}, err
			}
			l.Caches = append(l.Caches, c)
			cache, inPool = &l.Caches[len(l.Caches)-1], false
		case "core pool":
			for _, title := range []string{colID, colDisk, colStatus, colPolicy, colDevice} {
				if t.get(r, title) != "-" {
					return List{}, t.fieldErr(r, title, "want - on a core pool line, got %q", t.get(r, title))
				}
			}
			cache, inPool = nil, true
		case "core":
			if cache == nil && !inPool {
				return List{}, t.fieldErr(r, colType, "core line before any cache or core pool line")
			}
			c, err := t.core(r, inPool)
			if err != nil {
				return List{}, err
			}
			if inPool {
				l.Pool = append(l.Pool, c)
			} else {
				cache.Cores = append(cache.Cores, c)
			}
		default:
			return List{}, t.fieldErr(r, colType, "unknown type %q: want cache, core or core pool", typ)
		}
	}
	return l, nil
}

func (t *table) cache(r row) (Cache, error) {
	var c Cache
	var err error
	if c.ID, err = parseID(t.get(r, colID), 1, MaxCacheID); err != nil {
		return c, t.fieldErr(r, colID, "%v", err)
	}
	c.Disk = dash(t.get(r, colDisk))
	if c.Status, err = ParseStatus(t.get(r, colStatus)); err != nil {
		return c, t.fieldErr(r, colStatus, "%v", err)
	}
	c.WritePolicy = t.get(r, colPolicy)
	if c.WritePolicy == "" {
		return c, t.fieldErr(r, colPolicy, "empty write policy")
	}
	if c.Mode, err = parseWritePolicy(c.WritePolicy); err != nil {
		return c, t.fieldErr(r, colPolicy, "%v", err)
	}
	c.Device = dash(t.get(r, colDevice))
	return c, nil
}

func (t *table) core(r row, inPool bool) (Core, error) {
	var c Core
	var err error
	if inPool {
		if id := t.get(r, colID); id != "-" {
			return c, t.fieldErr(r, colID, "want - for a core in the pool, got %q", id)
		}
		c.ID = -1
	} else if c.ID, err = parseID(t.get(r, colID), 0, MaxCoreID); err != nil {
		return c, t.fieldErr(r, colID, "%v", err)
	}
	if c.Disk = t.get(r, colDisk); c.Disk == "" || c.Disk == "-" {
		return c, t.fieldErr(r, colDisk, "missing core device")
	}
	if c.Status, err = ParseStatus(t.get(r, colStatus)); err != nil {
		return c, t.fieldErr(r, colStatus, "%v", err)
	}
	if p := t.get(r, colPolicy); p != "-" {
		return c, t.fieldErr(r, colPolicy, "want - on a core line, got %q", p)
	}
	c.Device = dash(t.get(r, colDevice))
	return c, nil
}

// Cache modes (wi exists only in experimental builds).
var cacheModes = map[string]bool{"wt": true, "wb": true, "wa": true, "pt": true, "wo": true, "wi": true}

// parseWritePolicy returns the mode in effect: "" for "-", the mode after
// the arrow for "wb->wt".
func parseWritePolicy(s string) (string, error) {
	if s == "-" {
		return "", nil
	}
	mode := s
	if from, to, flushing := strings.Cut(s, "->"); flushing {
		if !cacheModes[from] {
			mode = ""
		} else {
			mode = to
		}
	}
	if !cacheModes[mode] {
		return "", fmt.Errorf("invalid write policy %q: want wt, wb, wa, pt, wo, - or wb->wt", s)
	}
	return mode, nil
}

func parseID(s string, min, max int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < min || v > max || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("invalid id %q: want %d-%d", s, min, max)
	}
	return v, nil
}

// CSV writes the list as `casadm -L -o csv` does (for an emulator).
func (l List) CSV() string {
	if len(l.Caches) == 0 && len(l.Pool) == 0 {
		return NoCaches + "\n"
	}
	var b strings.Builder
	b.WriteString(joinCSV(colType, colID, colDisk, colStatus, colPolicy, colDevice) + "\n")
	if len(l.Pool) > 0 {
		b.WriteString("core pool,-,-,-,-,-\n")
		for _, c := range l.Pool {
			b.WriteString(joinCSV("core", "-", c.Disk, c.Status.String(), "-", undash(c.Device)) + "\n")
		}
	}
	for _, c := range l.Caches {
		policy := c.WritePolicy
		if policy == "" {
			policy = undash(c.Mode)
		}
		b.WriteString(joinCSV("cache", strconv.Itoa(c.ID), undash(c.Disk), c.Status.String(), policy, undash(c.Device)) + "\n")
		for _, k := range c.Cores {
			b.WriteString(joinCSV("core", strconv.Itoa(k.ID), k.Disk, k.Status.String(), "-", undash(k.Device)) + "\n")
		}
	}
	return b.String()
}
