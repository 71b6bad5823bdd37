//go:build linux && cgo && libblkid

package blkid

// #cgo LDFLAGS: -lblkid
// #include <malloc.h>
// #include <stdlib.h>
// #include <blkid/blkid.h>
//
// // keep_buffers makes glibc keep and reuse the memory libblkid frees: libblkid reads
// // each ZFS label (256 KiB, four per disk) into a buffer it allocates, above glibc's
// // default mmap threshold (128 KiB), so that every buffer came from a fresh mapping whose
// // pages the kernel had to fault in and zero: about 240 page faults per disk, a fifth of
// // the inventory's CPU time on 8 disks. One arena, so that the threads cgo calls run on
// // share the reused memory. Only libblkid allocates with glibc in this process.
// static void keep_buffers(void) {
// 	mallopt(M_MMAP_THRESHOLD, 32 << 20);
// 	mallopt(M_TRIM_THRESHOLD, 64 << 20);
// 	mallopt(M_ARENA_MAX, 1);
// }
//
// // lookup returns the value of name in the probe's result, or NULL; *len gets its size.
// static const char *lookup(blkid_probe pr, const char *name, size_t *len) {
// 	const char *v = NULL;
// 	if (blkid_probe_lookup_value(pr, name, &v, len) != 0)
// 		return NULL;
// 	return v;
// }
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"
)

// mallocOnce runs keep_buffers before the first probe.
var mallocOnce sync.Once

// InProcess is true when this binary probes with libblkid itself (built with the libblkid
// tag and cgo) rather than through a wipefs child.
const InProcess = true

// maxProbeSteps bounds the probe loop, which ends by itself once every magic is hidden: a
// ZFS member alone shows one per uberblock found (wipefs lists 381 on a disk whose four
// labels are full, TestProbeFileFindsWhatWipefsFinds). A device with more is reported as an
// error (not proven empty), never as a shorter list.
const maxProbeSteps = 1 << 13

// C strings of the probe's result keys, allocated once.
var (
	keyType     = C.CString("TYPE")
	keySBOffset = C.CString("SBMAGIC_OFFSET")
	keySBMagic  = C.CString("SBMAGIC")
	keyPTType   = C.CString("PTTYPE")
	keyPTOffset = C.CString("PTMAGIC_OFFSET")
	keyPTMagic  = C.CString("PTMAGIC")
)

// ProbeFile lists every signature libblkid finds on the device f, which the caller opened
// read-only, as `wipefs --no-act` does: superblocks (with bad checksums too) and partition
// tables, each found signature hidden and the device probed again until nothing more shows.
// Device in each Signature is path's base name, as wipefs prints it. libblkid moves f's file
// offset: the caller must not use f concurrently except through ReadAt.
func ProbeFile(f *os.File, path string) ([]Signature, error) {
	mallocOnce.Do(func() { C.keep_buffers() })
	pr := C.blkid_new_probe()
	if pr == nil {
		return nil, fmt.Errorf("libblkid: %s: cannot allocate a probe", path)
	}
	defer C.blkid_free_probe(pr)
	defer runtime.KeepAlive(f) // f's descriptor stays open until libblkid is done with it
	if C.blkid_probe_set_device(pr, C.int(f.Fd()), 0, 0) != 0 {
		return nil, fmt.Errorf("libblkid: %s: probing initialization failed", path)
	}
	C.blkid_probe_enable_superblocks(pr, 1)
	C.blkid_probe_set_superblocks_flags(pr, C.BLKID_SUBLKS_MAGIC|C.BLKID_SUBLKS_TYPE|C.BLKID_SUBLKS_USAGE|C.BLKID_SUBLKS_BADCSUM)
	C.blkid_probe_enable_partitions(pr, 1)
	C.blkid_probe_set_partitions_flags(pr, C.BLKID_PARTS_MAGIC|C.BLKID_PARTS_FORCE_GPT)

	dev := filepath.Base(path)
	var sigs []Signature
	for range maxProbeSteps {
		switch rc := C.blkid_do_probe(pr); {
		case rc == 1:
			return sigs, nil
		case rc < 0:
			return nil, fmt.Errorf("libblkid: %s: probe failed", path)
		}
		s, magicLen, ok, err := found(pr)
		if err != nil {
			return nil, fmt.Errorf("libblkid: %s: %w", path, err)
		}
		if !ok {
			continue // a result that names no magic (none of the chains asked gives one)
		}
		s.Device = dev
		sigs = append(sigs, s)
		// Hide this magic and probe again from the same prober, which may find another
		// copy of it or another format (wipefs's loop).
		if C.blkid_probe_hide_range(pr, C.uint64_t(s.Offset), C.uint64_t(magicLen)) != 0 {
			return nil, fmt.Errorf("libblkid: %s: cannot hide %s", path, s)
		}
		C.blkid_probe_step_back(pr)
	}
	return nil, fmt.Errorf("libblkid: %s: more than %d signatures", path, maxProbeSteps)
}

// found reads the current result: a superblock (TYPE) or a partition table (PTTYPE), with
// the offset and length of its magic. ok is false when the result has neither.
func found(pr C.blkid_probe) (s Signature, magicLen int, ok bool, err error) {
	typeKey, offKey, magicKey := keyType, keySBOffset, keySBMagic
	typ := value(pr, keyType)
	if typ == nil {
		typeKey, offKey, magicKey = keyPTType, keyPTOffset, keyPTMagic
		if typ = value(pr, keyPTType); typ == nil {
			return Signature{}, 0, false, nil
		}
	}
	s, magicLen, err = ParseProbeValues(typ, value(pr, offKey), value(pr, magicKey))
	if err != nil {
		return Signature{}, 0, false, fmt.Errorf("%s/%s/%s: %w", C.GoString(typeKey), C.GoString(offKey), C.GoString(magicKey), err)
	}
	return s, magicLen, true, nil
}

// value copies a result value; nil when absent. Values are NUL-terminated strings whose
// length libblkid counts with the NUL, except SBMAGIC and PTMAGIC, which are the raw magic
// bytes (their length is the magic's).
func value(pr C.blkid_probe, key *C.char) []byte {
	var n C.size_t
	v := C.lookup(pr, key, &n)
	if v == nil {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(v), C.int(n))
}
