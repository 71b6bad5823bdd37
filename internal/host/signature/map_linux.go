//go:build linux

package signature

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"unsafe"
)

// detectMapped is Detect with the head and the tail mapped from the device's page cache
// instead of copied out of it (pread): the probes touch only the pages they look at, and
// no buffer of Prism's is filled. mapped is false when the file cannot be mapped; the
// caller then reads. An I/O error under a mapping arrives as a fault (SIGBUS) on the page
// that could not be read: the goroutine panics instead of the process crashing
// (debug.SetPanicOnFault), and that panic is returned as a read error, which makes the
// device ineligible as a failed read does.
func detectMapped(f *os.File, size int64) (sigs []Signature, mapped bool, err error) {
	n := min(size, headSize)
	head, unmapHead, err := mapRange(f, 0, n)
	if err != nil {
		return nil, false, nil
	}
	defer unmapHead()
	d := &device{r: f, size: size, head: head}
	d.tailOff = max(n, tailStart(size))
	if m := size - d.tailOff; m > 0 {
		tail, unmapTail, err := mapRange(f, d.tailOff, m)
		if err != nil {
			return nil, false, nil
		}
		defer unmapTail()
		d.tail = tail
	}
	defer func() {
		if r := recover(); r != nil {
			// Only a fault inside the mappings is the device's; anything else (a bug) still
			// crashes, as without the mappings.
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok || !(within(fault.Addr(), d.head) || within(fault.Addr(), d.tail)) {
				panic(r)
			}
			sigs, mapped, err = nil, true, fmt.Errorf("signature: reading the mapped device failed (fault at %#x): %v", fault.Addr(), r)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	sigs, err = d.detect()
	return sigs, true, err
}

// mapRange maps n bytes of f at off read-only and shared (the page cache's own pages),
// asks the kernel to read exactly that range now (MADV_WILLNEED) and nothing around the
// pages touched later (MADV_RANDOM, the mapping's form of adviseRandom).
func mapRange(f *os.File, off, n int64) ([]byte, func(), error) {
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	b, err := syscall.Mmap(int(f.Fd()), start, int(n+off-start), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	_ = syscall.Madvise(b, syscall.MADV_RANDOM)
	_ = syscall.Madvise(b, syscall.MADV_WILLNEED)
	s := b[off-start:]
	return s[:n:n], func() { _ = syscall.Munmap(b) }, nil
}

// within reports whether address a lies in b's bytes.
func within(a uintptr, b []byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return len(b) > 0 && a >= p && a < p+uintptr(len(b))
}
