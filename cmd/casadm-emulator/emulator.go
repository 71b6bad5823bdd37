package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/prism-storage/prism/internal/ioclass"
)

// Emulator-only verbs: they set the emulated host up and drive IO. Their
// messages start with "casadm-emulator:" so nobody mistakes them for casadm's.

// verbFlags reads "--name value" pairs and bare "--flag"s.
func verbFlags(argv []string, bare ...string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i < len(argv); i++ {
		name, ok := strings.CutPrefix(argv[i], "--")
		if !ok {
			return nil, fmt.Errorf("unexpected argument %q", argv[i])
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--%s given twice", name)
		}
		isBare := false
		for _, b := range bare {
			isBare = isBare || b == name
		}
		if isBare {
			out[name] = "true"
			continue
		}
		if i+1 >= len(argv) {
			return nil, fmt.Errorf("--%s needs a value", name)
		}
		out[name] = argv[i+1]
		i++
	}
	return out, nil
}

func (c *cli) emulatorVerb(argv []string) int {
	verb := argv[0]
	fail := func(format string, a ...any) int {
		c.errf("casadm-emulator: %s: %s\n", verb, fmt.Sprintf(format, a...))
		return 1
	}
	switch verb {
	case "--emulator-dump":
		b, _ := json.MarshalIndent(c.st, "", " ")
		c.outf("%s\n", b)
		return 0
	case "--emulator-reboot":
		// Power loss: every cache stops without flushing; its metadata,
		// dirty lines included, stays on the cache device.
		for _, ca := range c.st.Caches {
			saved := *ca
			saved.DirtyShutdown, saved.Failed = true, false
			if d := c.st.Devices[ca.Device]; d != nil {
				d.Metadata = &saved
			}
		}
		c.st.Caches = nil
		c.dirty = true
		return 0
	case "--emulator-fail-cache":
		if len(argv) != 2 {
			return fail("usage: --emulator-fail-cache CACHE_ID")
		}
		id, err := strconv.Atoi(argv[1])
		ca := c.st.cache(id)
		if err != nil || ca == nil {
			return fail("no running cache %q", argv[1])
		}
		// The device is gone and OCF has met a metadata error: the real module then
		// reports the cache "Not running" (it said Running until that first error).
		ca.Failed = true
		c.dirty = true
		return 0
	}
	f, err := verbFlags(argv[1:], "partitions")
	if err != nil {
		return fail("%v", err)
	}
	switch verb {
	case "--emulator-add-device":
		path := f["device"]
		size, err := strconv.ParseInt(f["size"], 10, 64)
		if !strings.HasPrefix(path, "/dev/disk/by-id/") || err != nil || size <= 0 {
			return fail("usage: --device /dev/disk/by-id/NAME --size BYTES [--kernel-name /dev/X] [--filesystem TYPE] [--partitions]")
		}
		if c.st.Devices[path] != nil {
			return fail("%s already exists", path)
		}
		c.st.Devices[path] = &Device{Path: path, Kernel: f["kernel-name"], SizeBytes: size, Filesystem: f["filesystem"],
			Partitions: f["partitions"] == "true"}
		c.dirty = true
		return 0
	case "--emulator-remove-device":
		path := f["device"]
		if c.st.Devices[path] == nil {
			return fail("no device %s", path)
		}
		if c.cacheOnDevice(path) != nil || c.coreOnDevice(path) != nil {
			return fail("%s is in use by a running cache (use --emulator-reboot first)", path)
		}
		delete(c.st.Devices, path)
		c.dirty = true
		return 0
	case "--emulator-io":
		cacheID, err1 := strconv.Atoi(f["cache-id"])
		coreID, err2 := strconv.Atoi(f["core-id"])
		if err1 != nil || err2 != nil {
			return fail("--cache-id and --core-id are required")
		}
		req, err := ioclass.ParseIO(f["io"])
		if err != nil {
			return fail("--io: %v", err)
		}
		if req.Size == 0 {
			return fail("--io: size must be positive")
		}
		count := uint64(1)
		if v, ok := f["count"]; ok {
			if count, err = strconv.ParseUint(v, 10, 32); err != nil || count == 0 {
				return fail("--count %q: want a positive number", v)
			}
		}
		stride := req.Size
		if v, ok := f["stride"]; ok {
			if stride, err = strconv.ParseUint(v, 10, 64); err != nil || stride%512 != 0 {
				return fail("--stride %q: want a multiple of 512 bytes", v)
			}
		}
		ca := c.st.cache(cacheID)
		if ca == nil {
			return fail("no running cache %d", cacheID)
		}
		k := ca.core(coreID)
		if k == nil || k.Inactive {
			return fail("cache %d has no active core %d (no exported object /dev/cas%d-%d)", cacheID, coreID, cacheID, coreID)
		}
		cfg := ioclass.Config{}
		for _, cl := range ca.Classes {
			cfg.Classes = append(cfg.Classes, ioclass.Class{ID: cl.ID, Rule: cl.Name, Allocation: "1"})
		}
		ev, err := ioclass.NewEvaluator(cfg)
		if err != nil {
			return fail("the loaded IO classes do not evaluate: %v", err)
		}
		m := newModel(ca, c.now)
		failed := 0
		for i := uint64(0); i < count; i++ {
			r := req
			r.LBA += i * stride / 512
			if !m.submit(k, ev, r) {
				failed++
			}
		}
		m.commit()
		c.dirty = true
		if failed > 0 {
			// What a program writing to /dev/casX-Y gets: EIO (the counters still count).
			return fail("%d of %d requests failed: Input/output error (the cache device failed)", failed, count)
		}
		return 0
	}
	return fail("unknown emulator verb (known: --emulator-add-device, --emulator-remove-device, --emulator-io, --emulator-fail-cache, --emulator-reboot, --emulator-dump)")
}
