package cephdaemon

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDaemon listens on a unix socket and answers each connection with reply(request).
func fakeDaemon(t *testing.T, reply func(req []byte) []byte) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "prismtest-osd.3.asok")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := bufio.NewReader(conn).ReadBytes(0)
				if err != nil {
					return
				}
				if out := reply(req[:len(req)-1]); out != nil {
					_, _ = conn.Write(out)
				}
				time.Sleep(time.Second) // hold the connection: the client must stop at the length
			}()
		}
	}()
	return sock
}

func framed(b []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	return append(out, b...)
}

func TestAskSendsJSONAndReadsTheFramedReply(t *testing.T) {
	var got map[string]string
	sock := fakeDaemon(t, func(req []byte) []byte {
		_ = json.Unmarshal(req, &got)
		return framed([]byte(`{"bluefs":{"db_used_bytes":1}}`))
	})
	out, err := Socket{Timeout: 5 * time.Second}.Ask(context.Background(), sock, PerfDump("bluefs"))
	if err != nil || string(out) != `{"bluefs":{"db_used_bytes":1}}` {
		t.Fatalf("Ask = %q, %v", out, err)
	}
	if got["prefix"] != "perf dump" || got["logger"] != "bluefs" || got["format"] != "json" || len(got) != 3 {
		t.Errorf("request %v", got)
	}
	if _, err := (Socket{}).Ask(context.Background(), sock, ConfigGet("bluestore_rocksdb_options")); err != nil || got["var"] != "bluestore_rocksdb_options" {
		t.Errorf("config get request %v (%v)", got, err)
	}
}

func TestAskFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply func([]byte) []byte
		want  string
	}{
		{"silent daemon", func([]byte) []byte { return nil }, "timeout 300ms"},
		{"short reply", func([]byte) []byte { return framed([]byte("abc"))[:5] }, "reading a reply of 3 bytes"},
		{"huge length", func([]byte) []byte { return binary.BigEndian.AppendUint32(nil, maxReply+1) }, "more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := fakeDaemon(t, c.reply)
			start := time.Now()
			_, err := Socket{Timeout: 300 * time.Millisecond}.Ask(context.Background(), sock, Version())
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), sock) {
				t.Fatalf("error %v, want one naming the socket and %q", err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s with a 300 ms timeout", d)
			}
		})
	}
	if _, err := (Socket{}).Ask(context.Background(), filepath.Join(t.TempDir(), "none.asok"), Version()); err == nil {
		t.Error("a missing socket answered")
	}
}

func TestOnlyReadCommandsAreSent(t *testing.T) {
	sent := false
	sock := fakeDaemon(t, func([]byte) []byte { sent = true; return framed(nil) })
	for _, cmd := range []Command{
		{Prefix: "config set", Args: map[string]string{"var": "debug_osd", "val": "20"}},
		{Prefix: "compact"},
		{Prefix: "perf reset", Args: map[string]string{"var": "all"}},
		{Prefix: "perf dump", Args: map[string]string{"prefix": "config set"}},
	} {
		if _, err := (Socket{}).Ask(context.Background(), sock, cmd); err == nil {
			t.Errorf("%+v was sent", cmd)
		}
	}
	if sent {
		t.Error("the daemon received a command")
	}
}
