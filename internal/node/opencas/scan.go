package opencas

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/hostexec"
	"github.com/prism-storage/prism/internal/host/signature"
)

// ScanPartition reads the signatures on the cache partition (its by-id link followed under
// hostRoot), for Desired.Signatures with PartitionScanned set. An error means the partition
// could not be proven empty: leave PartitionScanned false and Decide starts nothing.
func ScanPartition(hostRoot, partition string) ([]prismv1.DeviceSignature, error) {
	if err := checkPath(partition); err != nil {
		return nil, err
	}
	f, err := hostexec.OpenDirect(filepath.Join(cmp.Or(hostRoot, "/"), partition))
	if err != nil {
		return nil, fmt.Errorf("scanning the cache partition %s: %w", partition, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("size of the cache partition %s: %w", partition, err)
	}
	// Read uncached (hostexec.DirectReader): what casadm -S --force would overwrite.
	sigs, err := signature.Detect(hostexec.DirectReader{F: f}, size)
	if err != nil {
		return nil, fmt.Errorf("scanning the cache partition %s: %w", partition, err)
	}
	out := []prismv1.DeviceSignature{}
	for _, s := range sigs {
		out = append(out, prismv1.DeviceSignature{Kind: s.Kind.API(), Name: s.Name, OffsetBytes: s.Offset})
	}
	return out, nil
}

// ScanHeadAndTail reads the cache partition's first and last MiB (signature.ZeroSpan) for
// Desired.Unexplained: "" when both are zeros, else where the first non-zero byte is. A read
// that fails is an error: the partition is then not proven empty.
func ScanHeadAndTail(hostRoot, partition string) (string, error) {
	if err := checkPath(partition); err != nil {
		return "", err
	}
	f, err := hostexec.OpenDirect(filepath.Join(cmp.Or(hostRoot, "/"), partition))
	if err != nil {
		return "", fmt.Errorf("reading the cache partition %s: %w", partition, err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", fmt.Errorf("size of the cache partition %s: %w", partition, err)
	}
	at, err := signature.FirstNonZero(hostexec.DirectReader{F: f}, size, signature.ZeroSpan)
	if err != nil {
		return "", fmt.Errorf("reading the cache partition %s: %w", partition, err)
	}
	if at < 0 {
		return "", nil
	}
	return fmt.Sprintf("non-zero bytes at byte %d", at), nil
}
