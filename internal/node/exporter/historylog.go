package exporter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/prism-storage/prism/internal/endurance"
)

// The wear history file is an append-only log:
//
//	file    = magic record*
//	magic   = "PRISMWH" 0x01
//	record  = uvarint(len(payload)) payload crc32c(uvarint bytes ‖ payload) as 4 bytes little-endian
//	payload = entry+
//	entry   = 'k' uvarint(id) uvarint(len) key              key id = number of keys defined before
//	        | 's' uvarint(id) varint(Δunix seconds) varint(Δhost bytes) varint(Δmedia bytes)
//	              uvarint(percent used + 1) varint(Δpower-on hours)
//
// Δ is the difference to the previous sample of the same key in the file (zero before the
// first), so a 5-minute sample takes about 20 bytes. One record is one poll's samples,
// written with one write and fsync: a crash tears at most that record, which is then dropped.
const (
	logMagic      = "PRISMWH\x01"
	entryKey      = 'k'
	entrySample   = 's'
	maxPayload    = 64 << 10 // rewrites split records at rewriteRecord
	rewriteRecord = 32 << 10
)

// castagnoli is the CRC-32C table, built at the first record: building it at package
// initialisation cost every prism-agent command 0.15-0.6 ms of start-up (GODEBUG=inittrace),
// the one-shot `inventory` too, which writes no history.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// packed is a sample as the log stores it, the base of the next sample's differences.
type packed struct {
	unix              int64
	host, media, hour uint64
}

// logCodec holds what entries refer to: key ids and each key's previous sample. Reading a
// file leaves it ready to append to that file.
type logCodec struct {
	keys []string
	ids  map[string]uint64
	prev []packed
}

func newLogCodec() *logCodec { return &logCodec{ids: map[string]uint64{}} }

// entry is one sample of one device.
type entry struct {
	key    string
	sample endurance.Sample
}

// appendEntries encodes entries as one payload (defining new keys first) onto buf.
func (c *logCodec) appendEntries(buf []byte, entries []entry) []byte {
	for _, e := range entries {
		id, ok := c.ids[e.key]
		if !ok {
			id = uint64(len(c.keys))
			c.keys = append(c.keys, e.key)
			c.ids[e.key] = id
			c.prev = append(c.prev, packed{})
			buf = append(buf, entryKey)
			buf = binary.AppendUvarint(buf, id)
			buf = binary.AppendUvarint(buf, uint64(len(e.key)))
			buf = append(buf, e.key...)
		}
		s, p := e.sample, c.prev[id]
		cur := packed{unix: s.Time.Unix(), host: s.HostBytesWritten, media: s.MediaBytesWritten, hour: s.PowerOnHours}
		buf = append(buf, entrySample)
		buf = binary.AppendUvarint(buf, id)
		buf = binary.AppendVarint(buf, cur.unix-p.unix)
		buf = binary.AppendVarint(buf, int64(cur.host-p.host)) // wraps: decoding adds it back
		buf = binary.AppendVarint(buf, int64(cur.media-p.media))
		buf = binary.AppendUvarint(buf, uint64(s.PercentUsed+1))
		buf = binary.AppendVarint(buf, int64(cur.hour-p.hour))
		c.prev[id] = cur
	}
	return buf
}

// appendRecord frames payload onto buf.
func appendRecord(buf, payload []byte) []byte {
	start := len(buf)
	buf = binary.AppendUvarint(buf, uint64(len(payload)))
	buf = append(buf, payload...)
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], castagnoli()))
}

// errTorn ends a log at a record a crash left incomplete: the log is valid up to it.
var errTorn = errors.New("torn record")

// decodeLog reads a history file, calling add for each sample in order. It returns the length
// of the valid prefix: the whole file, or up to a torn last record (one that runs past the
// end, fails its checksum at the very end, or is followed by zero bytes only). Anything else
// is an error with the byte offset of the first bad record; the samples before it were added.
func decodeLog(data []byte, add func(key string, s endurance.Sample)) (*logCodec, int, error) {
	c := newLogCodec()
	if len(data) < len(logMagic) && string(data) == logMagic[:len(data)] {
		return c, 0, nil // torn while the file was created
	}
	if len(data) < len(logMagic) || string(data[:len(logMagic)]) != logMagic {
		n := min(len(data), len(logMagic))
		return c, 0, fmt.Errorf("byte 0: not a Prism wear history (starts with %q, want %q)", data[:n], logMagic)
	}
	off := len(logMagic)
	for off < len(data) {
		payload, next, err := readRecord(data, off)
		if errors.Is(err, errTorn) {
			return c, off, nil
		}
		if err != nil {
			return c, off, fmt.Errorf("byte %d: %w", off, err)
		}
		if err := c.decodePayload(payload, add); err != nil {
			return c, off, fmt.Errorf("byte %d: %w", off, err)
		}
		off = next
	}
	return c, off, nil
}

// readRecord returns the payload of the record at off and the offset after it.
func readRecord(data []byte, off int) ([]byte, int, error) {
	rest := data[off:]
	torn := func(err error) error {
		for _, b := range rest {
			if b != 0 {
				return err
			}
		}
		return errTorn // a crash can leave the file extended with zeros
	}
	n, w := binary.Uvarint(rest)
	switch {
	case w == 0:
		return nil, 0, errTorn
	case w < 0 || n == 0 || n > maxPayload:
		return nil, 0, torn(fmt.Errorf("record length %d outside 1..%d", n, maxPayload))
	case uint64(len(rest)) < uint64(w)+n+4:
		return nil, 0, errTorn
	}
	end := w + int(n)
	if got, want := crc32.Checksum(rest[:end], castagnoli()), binary.LittleEndian.Uint32(rest[end:]); got != want {
		if end+4 == len(rest) {
			return nil, 0, errTorn
		}
		return nil, 0, torn(fmt.Errorf("record checksum %08x, want %08x", got, want))
	}
	return rest[w:end], off + end + 4, nil
}

// decodePayload applies one record's entries. A record passed its checksum, so a bad entry
// was written that way: an error, not a tear.
func (c *logCodec) decodePayload(p []byte, add func(string, endurance.Sample)) error {
	r := payloadReader{p: p}
	for len(r.p) > 0 && r.err == nil {
		kind := r.p[0]
		r.p = r.p[1:]
		id := r.uvarint("key id")
		switch kind {
		case entryKey:
			n := r.uvarint("key length")
			if r.err != nil {
				break
			}
			if n == 0 || n > uint64(len(r.p)) {
				return fmt.Errorf("key %d: length %d outside 1..%d", id, n, len(r.p))
			}
			key := string(r.p[:n])
			r.p = r.p[n:]
			if id != uint64(len(c.keys)) {
				return fmt.Errorf("key %q: id %d, want %d", key, id, len(c.keys))
			}
			if _, dup := c.ids[key]; dup {
				return fmt.Errorf("key %q defined twice", key)
			}
			c.keys = append(c.keys, key)
			c.ids[key] = id
			c.prev = append(c.prev, packed{})
		case entrySample:
			dt, dh, dm := r.varint("time"), r.varint("host bytes"), r.varint("media bytes")
			pct, dp := r.uvarint("percent used"), r.varint("power-on hours")
			if r.err != nil {
				break
			}
			if id >= uint64(len(c.keys)) {
				return fmt.Errorf("sample of undefined key id %d", id)
			}
			if pct > endurance.MaxPercentUsed+1 {
				return fmt.Errorf("key %q: percent used %d outside -1..%d", c.keys[id], int64(pct)-1, endurance.MaxPercentUsed)
			}
			p := c.prev[id]
			cur := packed{unix: p.unix + dt, host: p.host + uint64(dh), media: p.media + uint64(dm), hour: p.hour + uint64(dp)}
			c.prev[id] = cur
			add(c.keys[id], endurance.Sample{
				Time: time.Unix(cur.unix, 0).UTC(), HostBytesWritten: cur.host, MediaBytesWritten: cur.media,
				PercentUsed: int(pct) - 1, PowerOnHours: cur.hour,
			})
		default:
			return fmt.Errorf("entry type %q, want 'k' or 's'", kind)
		}
	}
	return r.err
}

// payloadReader reads varints, remembering the first field that did not decode.
type payloadReader struct {
	p   []byte
	err error
}

func (r *payloadReader) uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.err = fmt.Errorf("%s: bad varint", field)
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *payloadReader) varint(field string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.p)
	if n <= 0 {
		r.err = fmt.Errorf("%s: bad varint", field)
		return 0
	}
	r.p = r.p[n:]
	return v
}
