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
	"sync"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
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

// headSize covers every start-of-device structure probed here: the deepest is the
// ZFS label 1 uberblock ring, which ends at 512 KiB; one page more takes in the LUKS2
// secondary header probed at 512 KiB (8 bytes). Only the LUKS2 offsets from 1 MiB on and
// the BlueStore label replicas (1 GiB on) lie beyond the head and the tail, and are read
// one by one.
const headSize = 512<<10 + 4<<10

// tailMax bounds the end-of-device read (see tailStart): ZFS label 2's uberblock ring
// starts 384 KiB plus less than one 256 KiB label alignment before the end.
const tailMax = 3*zfsLabelSize - zfsUberOffset

// buffers hold head and tail reads for reuse: a Detect call takes one and puts it back
// when it returns; no Signature refers to it.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, headSize+tailMax)
	return &b
}}

// Detect returns every signature found on a device of the given size. It makes one read
// of the first 516 KiB, one of the last 384-640 KiB (backup GPT, ZFS labels 2 and 3, md
// 0.90/1.0), and a few small reads at the LUKS2 and BlueStore label replica offsets
// beyond both. A read error is returned as an error: the caller must then treat the
// device as in use. Detect is safe for concurrent use.
func Detect(r io.ReaderAt, size int64) ([]Signature, error) {
	if size < 0 {
		return nil, fmt.Errorf("signature: negative device size %d", size)
	}
	buf := buffers.Get().(*[]byte)
	defer buffers.Put(buf)
	d, err := load(r, size, *buf)
	if err != nil {
		return nil, err
	}
	return d.detect()
}

// load reads the head and the tail of the device into buf, which must hold
// headSize+tailMax bytes.
func load(r io.ReaderAt, size int64, buf []byte) (*device, error) {
	n := min(size, headSize)
	d := &device{r: r, size: size, head: buf[:n:n]}
	if err := readFull(r, d.head, 0); err != nil {
		return nil, fmt.Errorf("signature: reading first %d bytes: %w", n, err)
	}
	d.tailOff = max(n, tailStart(size))
	if m := size - d.tailOff; m > 0 {
		d.tail = buf[n : n+m : n+m]
		if err := readFull(r, d.tail, d.tailOff); err != nil {
			return nil, fmt.Errorf("signature: reading %d bytes at %d: %w", m, d.tailOff, err)
		}
	}
	return d, nil
}

func readFull(r io.ReaderAt, b []byte, off int64) error {
	_, err := io.ReadFull(io.NewSectionReader(r, off, int64(len(b))), b)
	return err
}

// tailStart is where the end-of-device structures begin: ZFS label 2's uberblock ring
// comes first; ZFS label 3, md 0.90 (in the last 128 KiB), md 1.0 and the backup GPT
// headers (in the last 8 KiB) follow it.
func tailStart(size int64) int64 {
	return max(0, zfsLabels(size)[2]+zfsUberOffset)
}

func (d *device) detect() ([]Signature, error) {
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
	return DetectFile(f, path)
}

// DetectFile is DetectPath for a device the caller has opened read-only (and closes); path
// names it in errors.
func DetectFile(f *os.File, path string) ([]Signature, error) {
	// Stat reports 0 for block devices; seeking to the end gives their size.
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("signature: size of %s: %w", path, err)
	}
	if size < 0 {
		return nil, fmt.Errorf("signature: negative device size %d", size)
	}
	sigs, mapped, err := detectMapped(f, size)
	if !mapped {
		adviseRandom(f)
		sigs, err = Detect(f, size)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sigs, nil
}

type device struct {
	r        io.ReaderAt
	size     int64
	head     []byte // the first min(size, headSize) bytes
	tail     []byte // bytes tailOff to size; empty when the head reaches the end
	tailOff  int64
	gptFound bool
}

// at returns n bytes at off, or nil if the range is not on the device. It
// serves them from the head or the tail when they lie there and reads the
// device otherwise.
func (d *device) at(off int64, n int) ([]byte, error) {
	if off < 0 || n <= 0 || off > d.size-int64(n) {
		return nil, nil
	}
	end := off + int64(n)
	if end <= int64(len(d.head)) {
		return d.head[off:end], nil
	}
	if len(d.tail) > 0 && off >= d.tailOff {
		return d.tail[off-d.tailOff : end-d.tailOff], nil
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

// headAt is at() restricted to the head, which is always in memory.
func (d *device) headAt(off, n int) []byte {
	if off < 0 || off+n > len(d.head) {
		return nil
	}
	return d.head[off : off+n]
}

func one(k Kind, name string, off int64) []Signature {
	return []Signature{{Kind: k, Name: name, Offset: off}}
}

// API is the StorageNode API's name for the kind.
func (k Kind) API() prismv1.SignatureKind {
	switch k {
	case PartitionTable:
		return prismv1.SignaturePartitionTable
	case Filesystem:
		return prismv1.SignatureFilesystem
	case LVM:
		return prismv1.SignatureLVM
	case CephBlueStore:
		return prismv1.SignatureCephBlueStore
	case OpenCAS:
		return prismv1.SignatureOpenCAS
	case Swap:
		return prismv1.SignatureSwap
	case RAID:
		return prismv1.SignatureRAID
	}
	return prismv1.SignatureOther
}
