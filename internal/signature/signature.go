// Package signature finds on-disk signatures (partition tables, file
// systems, LVM, Ceph BlueStore, Open CAS, swap, md RAID, LUKS, ...) so the
// node agent can refuse to touch a device that holds data. It only reads.
package signature

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Kind groups signatures by what they mean for the device.
type Kind string

const (
	PartitionTable Kind = "partition_table"
	Filesystem     Kind = "filesystem"
	LVM            Kind = "lvm"
	CephBlueStore  Kind = "ceph_bluestore"
	OpenCAS        Kind = "open_cas"
	Swap           Kind = "swap"
	RAID           Kind = "raid"
	Other          Kind = "other"
)

// Signature is one magic found on the device. Name follows blkid's TYPE /
// PTTYPE spelling where blkid knows the format.
type Signature struct {
	Kind   Kind
	Name   string
	Offset int64 // byte offset of the structure that carries the magic
}

func (s Signature) String() string { return fmt.Sprintf("%s(%s)@%d", s.Name, s.Kind, s.Offset) }

// headSize covers every start-of-device magic probed here (the deepest is
// the ZFS label 1 uberblock ring, which ends at 512 KiB).
const headSize = 1 << 20

// Detect returns every signature found on a device of the given size. It
// reads the first MiB plus a few small blocks near the end (backup GPT, md
// 0.90/1.0) and at the BlueStore label replica offsets. A read error is
// returned as an error: the caller must then treat the device as in use.
func Detect(r io.ReaderAt, size int64) ([]Signature, error) {
	if size < 0 {
		return nil, fmt.Errorf("signature: negative device size %d", size)
	}
	head := make([]byte, min(size, headSize))
	if _, err := io.ReadFull(io.NewSectionReader(r, 0, int64(len(head))), head); err != nil {
		return nil, fmt.Errorf("signature: reading first %d bytes: %w", len(head), err)
	}
	d := &device{r: r, size: size, head: head}
	var out []Signature
	for _, probe := range probes {
		sigs, err := probe(d)
		if err != nil {
			return nil, err
		}
		out = append(out, sigs...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Offset != out[j].Offset {
			return out[i].Offset < out[j].Offset
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// probes run in order; probeMBR must follow probeGPT (it reads d.gptFound).
var probes = []func(*device) ([]Signature, error){
	probeGPT, probeMBR,
	probeFAT, probeExt, probeXFS, probeBtrfs, probeISO9660, probeZFS, probeSwap,
	probeLVM, probeMD, probeLUKS, probeBlueStore, probeOpenCAS,
}

// DetectPath opens path read-only (never O_EXCL, so it works on mounted or
// claimed devices and never blocks their owner) and runs Detect.
func DetectPath(path string) ([]Signature, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	defer f.Close()
	// Stat reports 0 for block devices; seeking to the end gives their size.
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("signature: size of %s: %w", path, err)
	}
	sigs, err := Detect(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sigs, nil
}

type device struct {
	r        io.ReaderAt
	size     int64
	head     []byte
	gptFound bool
}

// at returns n bytes at off, or nil if the range is not on the device.
func (d *device) at(off int64, n int) ([]byte, error) {
	if off < 0 || n <= 0 || off > d.size-int64(n) {
		return nil, nil
	}
	if off+int64(n) <= int64(len(d.head)) {
		return d.head[off : off+int64(n)], nil
	}
	b := make([]byte, n)
	m, err := d.r.ReadAt(b, off)
	if m == n {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("signature: reading %d bytes at %d: %w", n, off, err)
}

// headAt is at() restricted to the first MiB, which is always in memory.
func (d *device) headAt(off, n int) []byte {
	if off < 0 || off+n > len(d.head) {
		return nil
	}
	return d.head[off : off+n]
}

func one(k Kind, name string, off int64) []Signature {
	return []Signature{{Kind: k, Name: name, Offset: off}}
}
