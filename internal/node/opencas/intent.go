package opencas

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/prism-storage/prism/internal/fsutil"
)

// A start cut short. casadm -S --force writes the partition (OCF's volume test at its start,
// then the metadata) before the cache runs; a crash in between leaves bytes no detector names,
// which Decide refuses as anyone's data. Before the start Prism records on the host, in
// IntentDir, that it starts a cache on the partition; the record goes once a cache is seen
// running there. While it stands, what the partition holds is Prism's own start cut short.

// startRecord is the record of a start on partition (a stable path).
func (r Runner) startRecord(partition string) string {
	sum := sha256.Sum256([]byte(partition))
	return filepath.Join(r.IntentDir, "cache-intent", hex.EncodeToString(sum[:16]))
}

func startRecordContent(partition string) []byte {
	return fmt.Appendf(nil, "partition %s\n", partition)
}

// recordStart writes the record durably (fsutil.WriteFileAtomic: synced, renamed, the
// directory synced) before casadm -S runs: a crash leaves it whole or absent.
func (r Runner) recordStart(partition string) error {
	if partition == "" {
		return errors.New("recording a cache start: no partition")
	}
	if err := fsutil.WriteFileAtomic(r.startRecord(partition), startRecordContent(partition), 0o600); err != nil {
		return fmt.Errorf("recording the start of a cache on %s: %w", partition, err)
	}
	return nil
}

// startRecorded reports whether Prism recorded starting a cache on partition and has not
// seen it run since.
func (r Runner) startRecorded(partition string) bool {
	if r.IntentDir == "" || partition == "" {
		return false
	}
	got, err := os.ReadFile(r.startRecord(partition))
	return err == nil && bytes.Equal(got, startRecordContent(partition))
}

// forgetStart removes the record once the cache runs on the partition.
func (r Runner) forgetStart(partition string) error {
	if r.IntentDir == "" || partition == "" {
		return nil
	}
	if err := os.Remove(r.startRecord(partition)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the record of the cache start on %s: %w", partition, err)
	}
	return nil
}
