package cache

import (
	"cmp"
	"fmt"
	"path/filepath"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/signature"
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
		out = append(out, prismv1.DeviceSignature{Kind: apiKind(s.Kind), Name: s.Name, OffsetBytes: s.Offset})
	}
	return out, nil
}

// apiKind maps the detector's kinds to the API's (as the inventory does).
func apiKind(k signature.Kind) prismv1.SignatureKind {
	switch k {
	case signature.PartitionTable:
		return prismv1.SignaturePartitionTable
	case signature.Filesystem:
		return prismv1.SignatureFilesystem
	case signature.LVM:
		return prismv1.SignatureLVM
	case signature.CephBlueStore:
		return prismv1.SignatureCephBlueStore
	case signature.OpenCAS:
		return prismv1.SignatureOpenCAS
	case signature.Swap:
		return prismv1.SignatureSwap
	case signature.RAID:
		return prismv1.SignatureRAID
	}
	return prismv1.SignatureOther
}
