package cephdaemon

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// DefaultTimeout bounds one admin socket call when the context has no earlier deadline.
const DefaultTimeout = 10 * time.Second

// maxReply bounds a reply: `config show` is about 100 KiB, a perf dump about 200 KiB.
const maxReply = 16 << 20

// Asker sends one command to one daemon's admin socket and returns the reply.
type Asker interface {
	Ask(ctx context.Context, socket string, cmd Command) ([]byte, error)
}

// Socket talks to admin sockets on this machine (or under a host root mounted into the pod).
type Socket struct {
	// Timeout bounds each call; DefaultTimeout when zero.
	Timeout time.Duration
}

// Ask connects to socket, sends cmd and reads the length-prefixed reply.
func (s Socket) Ask(ctx context.Context, socket string, cmd Command) ([]byte, error) {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := cmd.request()
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("admin socket %s: %w", socket, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// The context may end before the deadline (the agent stops): unblock the read then.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	reply, err := exchange(conn, req)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("%w (timeout %s)", err, timeout)
		}
		return nil, fmt.Errorf("admin socket %s, %q: %w", socket, cmd.Prefix, err)
	}
	return reply, nil
}

// exchange writes req and a NUL, then reads a big-endian uint32 length and that many bytes.
func exchange(rw io.ReadWriter, req []byte) ([]byte, error) {
	if _, err := rw.Write(append(req, 0)); err != nil {
		return nil, fmt.Errorf("writing the command: %w", err)
	}
	var n [4]byte
	if _, err := io.ReadFull(rw, n[:]); err != nil {
		return nil, fmt.Errorf("reading the reply length: %w", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxReply {
		return nil, fmt.Errorf("reply of %d bytes, more than the %d this reader accepts", size, maxReply)
	}
	reply := make([]byte, size)
	if _, err := io.ReadFull(rw, reply); err != nil {
		return nil, fmt.Errorf("reading a reply of %d bytes: %w", size, err)
	}
	return reply, nil
}

// Command is one read-only admin socket command. Build it with the constructors below.
type Command struct {
	Prefix string
	// Args are the command's named arguments (perf dump's logger, config get's var).
	Args map[string]string
}

// request is the JSON the daemon parses: prefix, arguments and format json.
func (c Command) request() ([]byte, error) {
	if !readOnly[c.Prefix] {
		return nil, fmt.Errorf("cephdaemon: %q is not one of the read-only commands this package sends", c.Prefix)
	}
	m := map[string]string{"prefix": c.Prefix, "format": "json"}
	for k, v := range c.Args {
		if k == "prefix" || k == "format" {
			return nil, errors.New("cephdaemon: argument " + k + " is reserved")
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// readOnly are the commands this package may send; each only reads the daemon's state.
var readOnly = map[string]bool{
	"version":                   true,
	"perf dump":                 true,
	"bluefs stats":              true,
	"dump_objectstore_kv_stats": true,
	"config get":                true,
}

// Version is `version`: the daemon's Ceph version.
func Version() Command { return Command{Prefix: "version"} }

// PerfDump is `perf dump <logger>` (bluefs, bluestore).
func PerfDump(logger string) Command {
	return Command{Prefix: "perf dump", Args: map[string]string{"logger": logger}}
}

// BlueFSStatsCommand is `bluefs stats`: per device usage and the volume selector's usage matrix.
func BlueFSStatsCommand() Command { return Command{Prefix: "bluefs stats"} }

// KVStats is `dump_objectstore_kv_stats`: RocksDB's "rocksdb.stats" property, which Ceph
// 16.2 fills only with rocksdb_perf and rocksdb_collect_compaction_stats true.
func KVStats() Command { return Command{Prefix: "dump_objectstore_kv_stats"} }

// ConfigGet is `config get <option>`.
func ConfigGet(option string) Command {
	return Command{Prefix: "config get", Args: map[string]string{"var": option}}
}
