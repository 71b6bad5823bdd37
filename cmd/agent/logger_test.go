package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func loggerFromFlags(t *testing.T, buf *bytes.Buffer, args ...string) crzap.Options {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	o := crzap.Options{}
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.DestWriter = buf
	return o
}

// TestLoggerKeepsEveryLine: controller-runtime's production logger keeps 100 identical lines
// a second and drops the rest; the agent's must keep all of them, in the same JSON form.
func TestLoggerKeepsEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(loggerFromFlags(t, &buf)).WithName("agent")
	for i := range 250 {
		log.Info("device read", "device", "nvme0n1", "i", i)
	}
	log.V(1).Info("debug line, below the default level")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 250 {
		t.Fatalf("%d lines logged, want all 250 info lines and no debug line", len(lines))
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(lines[249]), &entry); err != nil {
		t.Fatalf("not JSON: %q: %v", lines[249], err)
	}
	if entry["level"] != "info" || entry["logger"] != "agent" || entry["msg"] != "device read" ||
		entry["device"] != "nvme0n1" || entry["i"] != float64(249) || entry["ts"] == nil {
		t.Errorf("entry %v", entry)
	}
}

func TestLoggerFollowsTheFlags(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(loggerFromFlags(t, &buf, "--zap-log-level=debug", "--zap-encoder=console"))
	log.V(1).Info("debug line")
	if out := buf.String(); !strings.Contains(out, "debug line") || strings.HasPrefix(out, "{") {
		t.Errorf("--zap-log-level=debug --zap-encoder=console logged %q", out)
	}
	buf.Reset()
	log = newLogger(loggerFromFlags(t, &buf, "--zap-log-level=error"))
	log.Info("info line")
	if buf.Len() != 0 {
		t.Errorf("--zap-log-level=error logged %q", buf.String())
	}
}
