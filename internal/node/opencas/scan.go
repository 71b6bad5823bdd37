package opencas

import (
	"cmp"
	"fmt"
	"path/filepath"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/host/signature"
)

// ScanPartition reads the signatures on the cache partition (its by-id link followed under
// hostRoot), for Desired.Signatures with PartitionScanned set. An error means the partition
// could not be proven empty: leave PartitionScanned false and Decide starts nothing.
func ScanPartition(hostRoot, partition string) ([]prismv1.DeviceSignature, error) {
	if err := checkPath(partition); err != nil {
		return nil, err
	}
	sigs, err := signature.DetectPath(filepath.Join(cmp.Or(hostRoot, "/"), partition))
	if err != nil {
		return nil, fmt.Errorf("scanning the cache partition %s: %w", partition, err)
	}
	out := []prismv1.DeviceSignature{}
	for _, s := range sigs {
		out = append(out, prismv1.DeviceSignature{Kind: s.Kind.API(), Name: s.Name, OffsetBytes: s.Offset})
	}
	return out, nil
}
