package exporter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/prism-storage/prism/internal/endurance"
	"github.com/prism-storage/prism/internal/fsutil"
)

// historyFile keeps a History on disk as the log of historylog.go: a poll that adds samples
// appends one record; when the file holds more than twice the samples the history keeps (a
// day and a half of polls with 24 devices), it is rewritten with only those, atomically.
type historyFile struct {
	path    string
	codec   *logCodec // key ids and previous samples as written in the file
	samples int       // sample entries in the file
	broken  bool      // an append failed part-way: rewrite before appending again
}

// compactBelow is the file size, in samples, under which it is never rewritten.
const compactBelow = 1024

// openHistoryFile loads the history at path into h. When path does not exist and legacy (a
// JSON history of earlier agents) does, it migrates legacy into a new file and removes it.
// A torn last record is dropped. On a corrupt file the samples before the damage are kept,
// the file is moved aside to path.corrupt and rewritten from them, and the error says so.
func openHistoryFile(path, legacy string, h *History) (*historyFile, error) {
	f := &historyFile{path: path}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, f.migrate(legacy, h)
	case err != nil:
		return nil, fmt.Errorf("wear history %s: %w", path, err)
	}
	codec, good, derr := decodeLog(data, func(key string, s endurance.Sample) {
		h.Add(key, s)
		f.samples++
	})
	h.Expire(h.newest())
	if derr != nil {
		moved := path + ".corrupt"
		err := fmt.Errorf("wear history %s: %w; kept the %d samples before it, moved the file to %s", path, derr, h.Len(), moved)
		if rerr := os.Rename(path, moved); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return f, errors.Join(err, f.rewrite(h))
	}
	if legacy != "" { // a migration that stopped after writing path
		if err := os.Remove(legacy); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("wear history: removing the migrated %s: %w", legacy, err)
		}
	}
	if good < len(logMagic) || good < len(data) {
		// Torn header or last record: start again from the valid part, so the next append
		// does not follow the torn bytes.
		return f, f.rewrite(h)
	}
	f.codec = codec
	return f, nil
}

// migrate starts the file: from the legacy JSON history when there is one, else empty.
func (f *historyFile) migrate(legacy string, h *History) error {
	var lerr error
	if legacy != "" {
		lerr = loadLegacy(legacy, h)
		if lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
			moved := legacy + ".corrupt"
			lerr = fmt.Errorf("%w; started a new history, moved the file to %s", lerr, moved)
			if err := os.Rename(legacy, moved); err != nil {
				return errors.Join(lerr, err)
			}
		}
	}
	if err := f.rewrite(h); err != nil {
		return errors.Join(lerr, err)
	}
	if lerr == nil && legacy != "" {
		if err := os.Remove(legacy); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("wear history: removing the migrated %s: %w", legacy, err)
		}
	}
	if errors.Is(lerr, fs.ErrNotExist) {
		return nil
	}
	return lerr
}

// save persists the samples a poll added to h.
func (f *historyFile) save(h *History, added []entry) error {
	if f.broken || f.samples+len(added) > 2*max(h.Len(), compactBelow) {
		return f.rewrite(h)
	}
	if len(added) == 0 {
		return nil
	}
	rec := appendRecord(nil, f.codec.appendEntries(nil, added))
	if err := appendSync(f.path, rec); err != nil {
		f.broken = true // the codec has moved on from what the file holds
		return fmt.Errorf("wear history %s: %w", f.path, err)
	}
	f.samples += len(added)
	return nil
}

// rewrite replaces the file with h's samples (atomically: a crash leaves the old or new file).
func (f *historyFile) rewrite(h *History) error {
	h.Expire(h.newest())
	codec := newLogCodec()
	buf := []byte(logMagic)
	var payload []byte
	for _, key := range h.Keys() {
		for _, s := range h.Series(key) {
			payload = codec.appendEntries(payload, []entry{{key, s}})
			if len(payload) >= rewriteRecord {
				buf, payload = appendRecord(buf, payload), payload[:0]
			}
		}
	}
	if len(payload) > 0 {
		buf = appendRecord(buf, payload)
	}
	if err := fsutil.WriteFileAtomic(f.path, buf, 0o644); err != nil {
		f.broken = true
		return fmt.Errorf("wear history %s: %w", f.path, err)
	}
	f.codec, f.samples, f.broken = codec, h.Len(), false
	return nil
}

// WriteFile writes h as the history file at path, replacing it (for tools that prepare the
// state of an agent, such as bench/footprint).
func (h *History) WriteFile(path string) error {
	return (&historyFile{path: path}).rewrite(h)
}

// appendSync appends rec to path and flushes it to the disk.
func appendSync(path string, rec []byte) error {
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = file.Write(rec)
	if err == nil {
		err = file.Sync()
	}
	return errors.Join(err, file.Close())
}
